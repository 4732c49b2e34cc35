// The node's mapped-range budget: reservations share a total, a dead holder's share
// comes back, and a waiting reservation proceeds once another's is released.
#include "common/error.hpp"
#include "common/node_budget.hpp"
#include "common/units.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <thread>

using namespace gpuprobe;

namespace {
budget_config in_dir(const std::string &name, std::uint64_t total_gib, std::uint64_t token_gib) {
  budget_config c;
  c.dir = test::temp_path(name);
  std::filesystem::create_directories(c.dir);
  c.total_bytes = total_gib * k_gib;
  c.token_bytes = token_gib * k_gib;
  return c;
}
// Another process holding `bytes` of the budget until it is told to end (end()) or killed.
class holder_process {
public:
  holder_process(const budget_config &c, std::uint64_t bytes) {
    int ready[2];
    if (::pipe(ready) != 0 || ::pipe(go_) != 0)
      throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      auto b = node_budget::try_reserve(bytes, c);
      const char ok = b ? 'y' : 'n';
      (void)!::write(ready[1], &ok, 1);
      char x;
      (void)!::read(go_[0], &x, 1); // holds its share until told to end (or killed)
      ::_exit(0);
    }
    char ok = 0;
    held_ = pid_ > 0 && ::read(ready[0], &ok, 1) == 1 && ok == 'y';
    ::close(ready[0]);
    ::close(ready[1]);
  }
  ~holder_process() {
    end();
    ::close(go_[0]);
    ::close(go_[1]);
  }
  bool held() const { return held_; }
  void kill() { stop(true); }
  void end() { stop(false); }

private:
  void stop(bool by_signal) {
    if (pid_ <= 0)
      return;
    if (by_signal)
      ::kill(pid_, SIGKILL);
    else
      (void)!::write(go_[1], "x", 1);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  int go_[2] = {-1, -1};
  pid_t pid_ = -1;
  bool held_ = false;
};
} // namespace

// Two GPUs' 384 GiB ranges fit the default 896 GiB together; a third waits; 512 + 512 do not fit.
TEST(NodeBudget, TwoRangesFitAThirdDoesNot) {
  const budget_config c = in_dir("budget_two", 896, 32);
  auto a = node_budget::try_reserve(384 * k_gib, c);
  auto b = node_budget::try_reserve(384 * k_gib, c);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->held_bytes(), 384 * k_gib);
  EXPECT_EQ(node_budget::held_now(c), 768 * k_gib);
  EXPECT_FALSE(node_budget::try_reserve(384 * k_gib, c));
  EXPECT_TRUE(node_budget::try_reserve(128 * k_gib, c)) << "what is left is granted";
  b.reset();
  EXPECT_TRUE(node_budget::try_reserve(384 * k_gib, c)) << "a released share is free again";
  a.reset();
  auto d = node_budget::try_reserve(512 * k_gib, c);
  ASSERT_TRUE(d);
  EXPECT_FALSE(node_budget::try_reserve(512 * k_gib, c)) << "the driver refused exactly this pair";
  EXPECT_THROW(node_budget::try_reserve(1024 * k_gib, c), error) << "more than the whole budget";
}

// Seeded families: any sequence of reservations and releases over any budget grants a request
// exactly when it fits beside what is held (rounded up to whole tokens), and never more in all.
TEST(NodeBudget, GrantsExactlyWhatFitsOverGeneratedSequences) {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    const std::uint64_t token = 1 + rng() % 64, tokens = 2 + rng() % 30;
    const budget_config c = in_dir("budget_gen_" + std::to_string(seed), token * tokens, token);
    std::vector<node_budget> held;
    std::uint64_t held_tokens = 0;
    for (int op = 0; op < 40; ++op) {
      if (!held.empty() && rng() % 3 == 0) {
        const std::size_t i = rng() % held.size();
        held_tokens -= held[i].held_bytes() / c.token_bytes;
        held.erase(held.begin() + std::ptrdiff_t(i));
        continue;
      }
      const std::uint64_t bytes = 1 + rng() % (c.total_bytes / 2 + 1);
      const std::uint64_t need = c.tokens_for(bytes);
      auto b = node_budget::try_reserve(bytes, c);
      ASSERT_EQ(bool(b), held_tokens + need <= tokens)
          << "seed " << seed << " op " << op << ": " << bytes << " B beside " << held_tokens
          << " of " << tokens << " tokens";
      if (b) {
        EXPECT_EQ(b->held_bytes(), need * c.token_bytes);
        held_tokens += need;
        held.push_back(std::move(*b));
      }
      EXPECT_EQ(node_budget::held_now(c), held_tokens * c.token_bytes) << "seed " << seed;
    }
  }
}

// A holder killed with SIGKILL leaves nothing held: the kernel drops its locks.
TEST(NodeBudget, AKilledHolderLeavesNothingHeld) {
  const budget_config c = in_dir("budget_kill", 256, 32);
  holder_process child(c, 256 * k_gib);
  ASSERT_TRUE(child.held());
  EXPECT_FALSE(node_budget::try_reserve(32 * k_gib, c)) << "the child holds it all";
  EXPECT_EQ(node_budget::held_now(c), 256 * k_gib);
  child.kill(); // SIGKILL: no destructor runs in it
  EXPECT_EQ(node_budget::held_now(c), 0u);
  EXPECT_TRUE(node_budget::try_reserve(256 * k_gib, c));
}

// reserve() waits while another process holds too much, says so once, and proceeds when that
// process ends; a process that holds some of the budget itself never waits (no hold-and-wait).
TEST(NodeBudget, AWaitingReservationProceedsWhenTheHolderEnds) {
  const budget_config c = in_dir("budget_wait", 128, 32);
  holder_process child(c, 96 * k_gib);
  ASSERT_TRUE(child.held());
  std::atomic<int> told{0};
  std::atomic<bool> granted{false};
  std::uint64_t held_then = 0;
  bool beside = true;
  std::thread t([&] {
    node_budget b = node_budget::reserve(
        64 * k_gib, c,
        [&](std::uint64_t held) {
          held_then = held;
          ++told;
        },
        10, &beside);
    granted = b.held_bytes() == 64 * k_gib;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(granted) << "granted while 96 of 128 GiB were held";
  child.end();
  t.join();
  EXPECT_TRUE(granted);
  EXPECT_FALSE(beside);
  EXPECT_EQ(told, 1) << "the wait is said once";
  EXPECT_EQ(held_then, 96 * k_gib);
}

TEST(NodeBudget, AHolderNeverWaits) {
  const budget_config c = in_dir("budget_holder", 128, 32);
  auto mine = node_budget::try_reserve(96 * k_gib, c);
  ASSERT_TRUE(mine);
  EXPECT_EQ(node_budget::held_here(), 96 * k_gib);
  bool beside = false, told = false;
  const node_budget more = node_budget::reserve(
      64 * k_gib, c, [&](std::uint64_t) { told = true; }, 10, &beside);
  EXPECT_EQ(more.held_bytes(), 0u) << "nothing reserved";
  EXPECT_TRUE(beside) << "and said so, at once";
  EXPECT_FALSE(told);
  EXPECT_EQ(node_budget::reserve(32 * k_gib, c).held_bytes(), 32 * k_gib) << "what fits is taken";
  mine.reset();
  EXPECT_EQ(node_budget::held_here(), 0u);
  // A budget of 0 (GPUPROBE_NODE_RANGE_GIB=0) reserves nothing and never waits.
  budget_config none = c;
  none.total_bytes = 0;
  EXPECT_EQ(node_budget::reserve(1024 * k_gib, none).held_bytes(), 0u);
}
