// The driver turns of a node's units (common/driver_turn.hpp, GPUPROBE_DRIVER_TURNS=1): off or
// below 1 GiB nothing is taken; a leading unit holds the turn inside its bursts (nested) and never
// waits; a late unit starts a burst only at an instant when no leading unit is inside one
// (generated families of processes), waits no longer than its bound, and is not held up by a
// leading unit killed inside a burst.
#include "common/driver_turn.hpp"
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
#include <vector>

namespace fs = std::filesystem;
using gpuprobe::driver_burst;
using gpuprobe::turn_role;

namespace {

constexpr std::size_t k_large = driver_burst::min_bytes;

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

// Whether another process could take the turn exclusively now (tried from a child: flock is per
// open file, so this process would not see its own lock).
bool free_for_another(const std::string &dir) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open((dir + "/gpuprobe-driver-turn").c_str(), O_RDWR | O_CREAT, 0666);
    ::_exit(fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool exited_ok(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct span {
  long long from = 0, to = 0;
};

// Whether some instant of [from, to] lies in none of `holds` (sorted by start).
bool has_free_instant(const std::vector<span> &holds, span w) {
  long long t = w.from; // the earliest instant not yet known covered
  for (const auto &h : holds) {
    if (h.from > t)
      break;
    if (h.to >= t)
      t = h.to + 1;
  }
  return t <= w.to;
}

} // namespace

TEST(DriverTurn, OffOrSmallItTakesNothingAndLeadingItHoldsTheTurnNested) {
  const std::string dir = fresh_dir("driver_turn_off");
  driver_burst::set_role(turn_role::off, dir);
  {
    const driver_burst b(k_large, "test");
    EXPECT_TRUE(free_for_another(dir)) << "turns off: nothing is held";
  }
  driver_burst::set_role(turn_role::leading, dir);
  {
    const driver_burst small(k_large - 1, "test");
    EXPECT_TRUE(free_for_another(dir)) << "below 1 GiB: nothing is held";
    const driver_burst outer(k_large, "test");
    EXPECT_FALSE(free_for_another(dir));
    {
      const driver_burst inner(k_large, "test"); // nested: no self-deadlock
      EXPECT_FALSE(free_for_another(dir));
    }
    EXPECT_FALSE(free_for_another(dir)) << "the inner burst's end keeps the outer's hold";
  }
  EXPECT_TRUE(free_for_another(dir)) << "the outer burst's end frees the turn";
  driver_burst::set_role(turn_role::off);
}

// 30 seeded families of 1-3 leading and 1-2 late processes, each making 5-15 bursts (nested 1-2
// deep in the leaders, held 0-3 ms, 0-2 ms apart). Every late burst began after an instant, since
// it was asked for, when no leader was inside a burst (a leader logs its bursts from inside its
// hold); no leader waited for its turn.
TEST(DriverTurn, ALateUnitStartsItsBurstsOnlyWhenNoLeaderIsInOne) {
  std::mt19937 rng(8181);
  int waits_seen = 0;
  for (int family = 0; family < 30; ++family) {
    const std::string dir = fresh_dir("driver_turn_family");
    const int leaders = 1 + int(rng() % 3), lates = 1 + int(rng() % 2);
    std::vector<pid_t> pids;
    for (int p = 0; p < leaders + lates; ++p) {
      const auto seed = unsigned(rng());
      const bool late = p >= leaders;
      const pid_t pid = ::fork();
      if (pid == 0) {
        driver_burst::set_role(late ? turn_role::late : turn_role::leading, dir, 10.0);
        std::mt19937 r(seed);
        std::ofstream log(dir + (late ? "/late." : "/lead.") + std::to_string(p));
        for (int k = 5 + int(r() % 11); k > 0; --k) {
          std::this_thread::sleep_for(std::chrono::microseconds(r() % 2000));
          const long long asked = now_ns();
          std::vector<std::unique_ptr<driver_burst>> held;
          held.push_back(std::make_unique<driver_burst>(k_large, "test"));
          const long long in = now_ns();
          if (!late && r() % 2)
            held.push_back(std::make_unique<driver_burst>(k_large, "test"));
          std::this_thread::sleep_for(std::chrono::microseconds(r() % 3000));
          const long long out = now_ns();
          // A leader: its hold (and the time it took to get it); a late unit: its wait.
          log << (late ? asked : in) << " " << (late ? in : out) << " " << (in - asked) << "\n";
          held.clear();
        }
        log.close();
        ::_exit(log ? 0 : 1);
      }
      pids.push_back(pid);
    }
    for (pid_t pid : pids)
      ASSERT_TRUE(exited_ok(pid)) << "family " << family;
    std::vector<span> holds;
    std::vector<span> late_waits;
    for (int p = 0; p < leaders + lates; ++p) {
      const bool late = p >= leaders;
      std::ifstream in(dir + (late ? "/late." : "/lead.") + std::to_string(p));
      span s;
      long long took = 0;
      while (in >> s.from >> s.to >> took) {
        (late ? late_waits : holds).push_back(s);
        if (!late) {
          EXPECT_LT(took, 1'000'000'000LL) << "family " << family << ": a leader waited";
        }
      }
    }
    std::sort(holds.begin(), holds.end(), [](span a, span b) { return a.from < b.from; });
    ASSERT_GE(holds.size(), std::size_t(leaders) * 5) << "family " << family;
    ASSERT_GE(late_waits.size(), std::size_t(lates) * 5) << "family " << family;
    for (const auto &w : late_waits) {
      EXPECT_TRUE(has_free_instant(holds, w))
          << "family " << family << ": a late burst began with a leader inside one all along";
      waits_seen += std::any_of(holds.begin(), holds.end(),
                                [&](span h) { return h.from <= w.from && w.from <= h.to; });
    }
  }
  // The families did ask inside a leader's burst (else the rule above was never put to the test).
  EXPECT_GT(waits_seen, 30);
}

// A late unit waits no longer than its bound beside a leader that never ends its burst, and a
// leader killed inside a burst (SIGKILL) holds it up no longer.
TEST(DriverTurn, ALateUnitsWaitIsBoundedAndAKilledLeaderFreesTheTurn) {
  const std::string dir = fresh_dir("driver_turn_kill");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t leader = ::fork();
  if (leader == 0) {
    driver_burst::set_role(turn_role::leading, dir);
    const driver_burst b(k_large, "test");
    (void)!::write(ready[1], "x", 1);
    ::pause(); // inside the burst until killed
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_FALSE(free_for_another(dir));
  driver_burst::set_role(turn_role::late, dir, 0.3);
  double before = driver_burst::waited_seconds();
  { const driver_burst b(k_large, "test"); } // waits its bound, then goes on
  const double bounded = driver_burst::waited_seconds() - before;
  EXPECT_GE(bounded, 0.29);
  EXPECT_LT(bounded, 5.0);
  driver_burst::set_role(turn_role::late, dir, 30.0);
  std::thread killer([leader] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(leader, SIGKILL);
  });
  before = driver_burst::waited_seconds();
  { const driver_burst b(k_large, "test"); } // waits for the killed leader's lock to go
  const double waited = driver_burst::waited_seconds() - before;
  killer.join();
  int status = 0;
  ::waitpid(leader, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_GE(waited, 0.25);
  EXPECT_LT(waited, 10.0);
  EXPECT_TRUE(free_for_another(dir)) << "a late unit holds nothing after its wait";
  ::close(ready[0]);
  ::close(ready[1]);
  driver_burst::set_role(turn_role::off);
}

// GPUPROBE_DRIVER_TURNS=1 gives the unit that maps late the late role and any other the leading
// one; unset or any other value, off.
TEST(DriverTurn, TheEnvironmentAndMapLateChooseTheRole) {
  ::unsetenv("GPUPROBE_DRIVER_TURNS");
  driver_burst::configure(true);
  EXPECT_EQ(driver_burst::role(), turn_role::off);
  ::setenv("GPUPROBE_DRIVER_TURNS", "yes", 1);
  driver_burst::configure(false);
  EXPECT_EQ(driver_burst::role(), turn_role::off);
  ::setenv("GPUPROBE_DRIVER_TURNS", "1", 1);
  driver_burst::configure(true);
  EXPECT_EQ(driver_burst::role(), turn_role::late);
  driver_burst::configure(false);
  EXPECT_EQ(driver_burst::role(), turn_role::leading);
  ::unsetenv("GPUPROBE_DRIVER_TURNS");
  driver_burst::set_role(turn_role::off);
}
