// The node's mapping turn (common/map_turn.hpp, GPUPROBE_MAP_TURNS=1): off, it takes nothing; on,
// processes never hold it at once (generated families of processes, nested turns, random holds),
// a holder killed by SIGKILL leaves it free, and the wait is counted.
#include "common/map_turn.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace fs = std::filesystem;
using gpuprobe::map_turn;

namespace {

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string fresh_dir(const std::string &name) {
  const std::string dir = gpuprobe::test::temp_path(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Whether another process could take the turn's lock now (tried from a child: flock is per
// open file, so the test's own process would not see its own lock).
bool free_for_another(const std::string &dir) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open((dir + "/gpuprobe-map-turn").c_str(), O_RDWR | O_CREAT, 0666);
    ::_exit(fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace

TEST(MapTurn, OffItTakesNothingAndOnItHoldsTheNodesTurnNested) {
  const std::string dir = fresh_dir("map_turn_off");
  map_turn::on(false, dir);
  {
    const map_turn t(true);
    EXPECT_TRUE(free_for_another(dir)) << "turns off: nothing is held";
  }
  map_turn::on(true, dir);
  {
    const map_turn small(false); // not wanted (a small pool): nothing held
    EXPECT_TRUE(free_for_another(dir));
    const map_turn outer(true);
    EXPECT_FALSE(free_for_another(dir));
    {
      const map_turn inner(true); // nested: no self-deadlock
      EXPECT_FALSE(free_for_another(dir));
    }
    EXPECT_FALSE(free_for_another(dir)) << "the inner turn's end keeps the outer's";
  }
  EXPECT_TRUE(free_for_another(dir)) << "the outer turn's end frees it";
  map_turn::on(false);
}

// 30 seeded families of 2-4 processes, each taking 5-15 turns nested 1-3 deep and held 0-3 ms:
// every process logs when it holds the turn; no two processes' holds overlap.
TEST(MapTurn, ProcessesNeverHoldTheTurnAtOnce) {
  std::mt19937 rng(4848);
  for (int family = 0; family < 30; ++family) {
    const std::string dir = fresh_dir("map_turn_family");
    map_turn::on(true, dir);
    const int procs = 2 + int(rng() % 3);
    std::vector<pid_t> pids;
    for (int p = 0; p < procs; ++p) {
      const auto seed = unsigned(rng());
      const pid_t pid = ::fork();
      if (pid == 0) {
        std::mt19937 r(seed);
        std::ofstream log(dir + "/log." + std::to_string(p));
        for (int k = 5 + int(r() % 11); k > 0; --k) {
          const int depth = 1 + int(r() % 3);
          std::vector<std::unique_ptr<map_turn>> held;
          for (int d = 0; d < depth; ++d)
            held.push_back(std::make_unique<map_turn>(true));
          const long long in = now_ns();
          std::this_thread::sleep_for(std::chrono::microseconds(r() % 3000));
          const long long out = now_ns();
          while (!held.empty())
            held.pop_back();
          log << in << " " << out << "\n";
        }
        log.close();
        ::_exit(log ? 0 : 1);
      }
      pids.push_back(pid);
    }
    for (pid_t pid : pids) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "family " << family;
    }
    std::vector<std::pair<long long, long long>> holds;
    for (int p = 0; p < procs; ++p) {
      std::ifstream log(dir + "/log." + std::to_string(p));
      long long in = 0, out = 0;
      while (log >> in >> out)
        holds.emplace_back(in, out);
    }
    std::sort(holds.begin(), holds.end());
    ASSERT_GE(holds.size(), std::size_t(procs) * 5) << "family " << family;
    for (std::size_t i = 1; i < holds.size(); ++i)
      EXPECT_GE(holds[i].first, holds[i - 1].second)
          << "family " << family << ": two processes held the turn at once";
  }
  map_turn::on(false);
}

// A holder killed by SIGKILL leaves the turn free; a process that waited for it counts the wait.
TEST(MapTurn, AKilledHolderFreesTheTurnAndTheWaitIsCounted) {
  const std::string dir = fresh_dir("map_turn_kill");
  map_turn::on(true, dir);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    const map_turn t(true);
    (void)!::write(ready[1], "x", 1);
    ::pause(); // holds the turn until killed
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_FALSE(free_for_another(dir));
  std::thread killer([holder] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(holder, SIGKILL);
  });
  const double before = map_turn::waited_seconds();
  {
    const map_turn t(true); // waits for the killed holder's lock to go
  }
  const double waited = map_turn::waited_seconds() - before;
  killer.join();
  int status = 0;
  ::waitpid(holder, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_GE(waited, 0.25);
  EXPECT_LT(waited, 10.0);
  EXPECT_TRUE(free_for_another(dir));
  ::close(ready[0]);
  ::close(ready[1]);
  map_turn::on(false);
}
