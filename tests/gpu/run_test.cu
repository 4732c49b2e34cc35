// `gpuprobe run --quick` end to end on the GPU, then again over the finished folder: the rerun
// measures nothing (every stage kept, profile/tuning/validation byte for byte as they were) and
// only the report is drawn anew.
#include "gpu_test_util.hpp"
#include "tests/common/binary_path.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

std::string text_of(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST(Run, QuickRunThenRerunOfTheFinishedFolderMeasuresNothing) {
  GPUPROBE_REQUIRE_GPU();
  const std::string dir = ::testing::TempDir() + "/run_quick";
  std::filesystem::remove_all(dir);
  const std::string cmd = gpuprobe::test::gpuprobe_binary() + " run --quick --out " + dir + " 2>&1";
  int rc = 0;
  const std::string first = gpuprobe::test::shell(cmd, &rc);
  ASSERT_EQ(rc, 0) << first;
  EXPECT_EQ(first.find("other process"), std::string::npos)
      << "run's own process holds no context while its stages measure:\n"
      << first;
  const char *files[] = {"/profile.json", "/tuning.json", "/validation.json"};
  std::string before[3];
  for (int i = 0; i < 3; ++i)
    before[i] = text_of(dir + files[i]);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string again = gpuprobe::test::shell(cmd, &rc);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(rc, 0) << again;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(text_of(dir + files[i]), before[i]) << files[i] << " was rewritten";
  for (const char *kept : {"profile.json done earlier, kept", "[run] tune         done earlier",
                           "[run] validate     done earlier"})
    EXPECT_NE(again.find(kept), std::string::npos) << kept << "\n" << again;
  EXPECT_EQ(again.find(" running"), std::string::npos) << again;
  EXPECT_LT(secs, 30) << "the rerun only draws the report";
  EXPECT_TRUE(std::filesystem::exists(dir + "/report/index.html"));
}
