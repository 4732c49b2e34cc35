// Issue 37: one writer per results folder. The lock is flock(2): a second writer is refused in
// one line naming the holder's PID, a killed holder (SIGKILL) leaves nothing that blocks the next
// run, report refuses a folder being written, and a holder's own child stages pass.
#include "common/error.hpp"
#include "common/folder_lock.hpp"
#include "pipeline/gpu_conditions.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace gpuprobe;

TEST(FolderLock, ASecondWriterIsRefusedWithTheHoldersPidAndAKilledOneBlocksNothing) {
  ::unsetenv(folder_lock::env_name);
  const std::string dir = test::temp_path("lock-writers");
  const pid_t holder = test::hold_folder_lock_in_child(dir);
  EXPECT_NE(folder_lock_holder(dir).find("PID " + std::to_string(holder)), std::string::npos);
  try {
    const folder_lock second(dir, "run");
    FAIL() << "a second writer got the lock";
  } catch (const error &e) {
    const std::string m = e.what();
    EXPECT_NE(
        m.find("is being written by PID " + std::to_string(holder) + " (gpuprobe characterize)"),
        std::string::npos)
        << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line";
  }
  // report reads a folder only when nobody writes it
  EXPECT_THROW(folder_lock(dir, "report", folder_lock::mode::read), error);
  auto r = test::run_gpuprobe("report --input " + dir + " --out " + dir + "/report");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("is being written by PID " + std::to_string(holder)), std::string::npos)
      << r.err;
  // SIGKILL: the kernel drops the lock with the process; the file stays, and blocks nothing
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / folder_lock::file_name));
  EXPECT_EQ(folder_lock_holder(dir), "");
  {
    const folder_lock again(dir, "characterize");
    EXPECT_FALSE(again.inherited());
    // a stage the holder starts (it inherits GPUPROBE_FOLDER_LOCK) writes under the same lock
    const folder_lock stage(dir + "/.", "tune");
    EXPECT_TRUE(stage.inherited());
  }
  EXPECT_EQ(std::getenv(folder_lock::env_name), nullptr) << "the holder's variable is restored";
  const folder_lock reader(dir, "report", folder_lock::mode::read); // nobody writes: fine
}

TEST(GpuConditions, OtherComputeProcessesLeaveOutThisOneAndItsAncestors) {
  const std::string csv = "4242, /usr/bin/python3\n"
                          "17, /opt/gpuprobe/gpuprobe\n"
                          "No running processes found\n"
                          "99, [Not Found]\n";
  const auto others = pipeline::parse_compute_apps(csv, {17, 1});
  ASSERT_EQ(others.size(), 2u);
  EXPECT_EQ(others[0].pid, 4242);
  EXPECT_EQ(others[0].name, "python3");
  EXPECT_EQ(others[1].pid, 99);
  pipeline::gpu_activity a;
  a.others = others;
  EXPECT_EQ(a.describe(), "2 other processes (PID 4242 python3, PID 99 [Not Found])");
  EXPECT_TRUE(pipeline::parse_compute_apps("", {}).empty());
  const auto chain = pipeline::own_process_chain();
  ASSERT_GE(chain.size(), 2u);
  EXPECT_EQ(chain[0], long(::getpid()));
  EXPECT_EQ(chain[1], long(::getppid()));
}

// Issue 44: the GPU is watched during a stage, so the stage this process runs is no neighbour:
// its descendants are left out as its ancestors are.
TEST(GpuConditions, ThisProcessesChildrenAreNoNeighbours) {
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(go[1]);
    char c;
    (void)!::read(go[0], &c, 1);
    std::_Exit(0);
  }
  ::close(go[0]);
  const auto below = pipeline::own_descendants();
  EXPECT_NE(std::find(below.begin(), below.end(), long(child)), below.end());
  const std::string csv = std::to_string(child) + ", /opt/gpuprobe/gpuprobe\n4242, python3\n";
  auto mine = pipeline::own_process_chain();
  mine.insert(mine.end(), below.begin(), below.end());
  const auto others = pipeline::parse_compute_apps(csv, mine);
  ASSERT_EQ(others.size(), 1u);
  EXPECT_EQ(others[0].pid, 4242);
  ::close(go[1]);
  ::waitpid(child, nullptr, 0);
}
