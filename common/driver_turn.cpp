#include "common/driver_turn.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace gpuprobe {

namespace {

struct turn_state {
  std::mutex m;
  turn_role role = turn_role::off;
  std::string dir = "/tmp";
  double max_wait_s = 30.0;
  int depth = 0; // bursts open in this process (a leading unit holds the lock while > 0)
  int fd = -1;   // the turn file, opened once
  double waited = 0;
};

turn_state &state() {
  static auto *s = new turn_state; // never destroyed: a burst may end in a static's destructor
  return *s;
}

// The turn's file, readable and writable by every user of the node (the driver is the node's),
// never through a link (O_NOFOLLOW: /tmp is shared). -1 when unusable: then nothing is taken.
int turn_file(turn_state &s) {
  if (s.fd < 0) {
    const std::string path = s.dir + "/gpuprobe-driver-turn";
    s.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (s.fd >= 0)
      (void)::fchmod(s.fd, 0666); // the umask's bits back (fails harmlessly on another's file)
  }
  return s.fd;
}

int flock_retry(int fd, int op) {
  int r;
  while ((r = ::flock(fd, op)) != 0 && errno == EINTR) {
  }
  return r;
}

// A late unit's wait: until an exclusive lock is free for a moment (no leading unit inside a
// burst), polled every 5 ms, at most `max_s`; returns the seconds waited.
double wait_for_turn(int fd, double max_s) {
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  while (flock_retry(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK || seconds() >= max_s)
      return seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  (void)flock_retry(fd, LOCK_UN);
  return seconds();
}

} // namespace

void driver_burst::configure(bool map_late) {
  const char *v = std::getenv("GPUPROBE_DRIVER_TURNS");
  const bool on = v && std::strcmp(v, "1") == 0;
  auto &s = state();
  const std::lock_guard<std::mutex> lock(s.m);
  s.role = !on ? turn_role::off : map_late ? turn_role::late : turn_role::leading;
}

void driver_burst::set_role(turn_role r, const std::string &dir, double max_wait_s) {
  auto &s = state();
  const std::lock_guard<std::mutex> lock(s.m);
  if (s.fd >= 0 && s.dir != dir) {
    ::close(s.fd);
    s.fd = -1;
  }
  s.role = r;
  s.dir = dir;
  s.max_wait_s = max_wait_s;
}

turn_role driver_burst::role() {
  auto &s = state();
  const std::lock_guard<std::mutex> lock(s.m);
  return s.role;
}

double driver_burst::waited_seconds() {
  auto &s = state();
  const std::lock_guard<std::mutex> lock(s.m);
  return s.waited;
}

driver_burst::driver_burst(std::size_t bytes, const char *what) {
  auto &s = state();
  std::unique_lock<std::mutex> lock(s.m);
  if (bytes < min_bytes || s.role == turn_role::off)
    return;
  const int fd = turn_file(s);
  if (fd < 0)
    return;
  if (s.role == turn_role::leading) {
    // The shared hold is taken by the first burst open and dropped by the last; a late unit holds
    // the exclusive lock only for an instant, so this does not wait.
    if (s.depth == 0 && flock_retry(fd, LOCK_SH) != 0)
      return;
    ++s.depth;
    held_ = true;
    return;
  }
  const double max_s = s.max_wait_s;
  lock.unlock(); // a late unit's wait holds nothing of this process
  const double waited = wait_for_turn(fd, max_s);
  lock.lock();
  s.waited += waited;
  if (waited > 0.5)
    std::fprintf(stderr, "[turn] %s waited %.1f s for the neighbour's driver burst\n", what,
                 waited);
}

driver_burst::~driver_burst() {
  if (!held_)
    return;
  auto &s = state();
  const std::lock_guard<std::mutex> lock(s.m);
  if (--s.depth == 0)
    (void)flock_retry(s.fd, LOCK_UN);
}

} // namespace gpuprobe
