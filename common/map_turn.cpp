#include "common/map_turn.hpp"
#include "common/node_budget.hpp"

#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace gpuprobe {

namespace {

struct turn_state {
  std::recursive_mutex thread_turn; // one thread of this process at a time, nesting allowed
  int depth = 0;                    // nested turns of the thread that holds it
  int fd = -1;                      // the flock'ed file while depth > 0
  int enabled = -1;                 // -1: GPUPROBE_MAP_TURNS not read yet
  std::string dir = "/tmp";
  double waited = 0;
};

turn_state &state() {
  static auto *s = new turn_state; // never destroyed: a turn may end in a static's destructor
  return *s;
}

} // namespace

bool map_turn::enabled() {
  auto &s = state();
  const std::lock_guard<std::recursive_mutex> lock(s.thread_turn);
  if (s.enabled < 0) {
    const char *v = std::getenv("GPUPROBE_MAP_TURNS");
    s.enabled = v && std::strcmp(v, "1") == 0;
  }
  return s.enabled == 1;
}

void map_turn::on(bool enable, const std::string &dir) {
  auto &s = state();
  const std::lock_guard<std::recursive_mutex> lock(s.thread_turn);
  s.enabled = enable;
  s.dir = dir;
}

double map_turn::waited_seconds() {
  auto &s = state();
  const std::lock_guard<std::recursive_mutex> lock(s.thread_turn);
  return s.waited;
}

map_turn::map_turn(bool wanted, const char *what) {
  if (!wanted || !enabled())
    return;
  auto &s = state();
  s.thread_turn.lock(); // held until the destructor: another thread of this process waits here
  held_ = true;
  if (s.depth++ > 0)
    return;
  const auto t0 = std::chrono::steady_clock::now();
  s.fd = open_node_file(s.dir + "/gpuprobe-map-turn");
  if (s.fd >= 0 && ::flock(s.fd, LOCK_EX) != 0) { // an unusable file: no turn, the work goes on
    ::close(s.fd);
    s.fd = -1;
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.waited += waited;
  if (waited > 0.5)
    std::fprintf(stderr, "[turn] %s waited %.1f s for the node's mapping turn\n", what, waited);
}

map_turn::~map_turn() {
  if (!held_)
    return;
  auto &s = state();
  if (--s.depth == 0 && s.fd >= 0) {
    ::close(s.fd); // closing the last descriptor releases the flock
    s.fd = -1;
  }
  s.thread_turn.unlock();
}

} // namespace gpuprobe
