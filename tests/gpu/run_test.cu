// `gpuprobe run --quick` end to end on the GPU, then again over the finished folder: the rerun
// measures nothing (every stage kept, profile/tuning/validation byte for byte as they were) and
// only the report is drawn anew. The stages' output goes to run.log, a section per invocation;
// the terminal gets a line per stage. The rerun's report takes the figures of the report before
// (the same data): it draws none.
#include "gpu_test_util.hpp"
#include "tests/common/binary_path.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

namespace {

std::string text_of(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// run.log's section of the last invocation.
std::string last_log(const std::string &dir) {
  const std::string log = text_of(dir + "/run.log");
  const auto at = log.rfind("==== gpuprobe run");
  return at == std::string::npos ? "" : log.substr(at);
}

} // namespace

TEST(Run, QuickRunThenRerunOfTheFinishedFolderMeasuresNothing) {
  GPUPROBE_REQUIRE_GPU();
  const std::string dir = ::testing::TempDir() + "/run_quick";
  std::filesystem::remove_all(dir);
  const std::string cmd = gpuprobe::test::gpuprobe_binary() + " run --quick --out " + dir + " 2>&1";
  int rc = 0;
  const std::string first_out = gpuprobe::test::shell(cmd, &rc);
  ASSERT_EQ(rc, 0) << first_out << last_log(dir);
  EXPECT_LT(std::count(first_out.begin(), first_out.end(), '\n'), 30)
      << "a line per stage and the summary:\n"
      << first_out;
  const std::string first = first_out + last_log(dir);
  EXPECT_EQ(first.find("other process"), std::string::npos)
      << "run's own process holds no context while its stages measure:\n"
      << first;
  EXPECT_EQ(first.find("drawn before"), std::string::npos) << "no report before:\n" << first;
  const char *files[] = {"/profile.json", "/tuning.json", "/validation.json"};
  std::string before[3];
  for (int i = 0; i < 3; ++i)
    before[i] = text_of(dir + files[i]);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string again_out = gpuprobe::test::shell(cmd, &rc);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(rc, 0) << again_out;
  const std::string again = again_out + last_log(dir);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(text_of(dir + files[i]), before[i]) << files[i] << " was rewritten";
  for (const char *kept : {"profile.json done earlier, kept", "[run] tune         done earlier",
                           "[run] validate     done earlier"})
    EXPECT_NE(again.find(kept), std::string::npos) << kept << "\n" << again;
  EXPECT_EQ(again.find(" running"), std::string::npos) << again;
  const std::regex taken(
      R"(gpuprobe report: (\d+) figures \((\d+) drawn before from the same data)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(again, m, taken)) << again;
  EXPECT_EQ(m[1], m[2]) << "every figure of the rerun's report was drawn by the first";
  EXPECT_LT(secs, 30) << "the rerun only draws the report";
  EXPECT_TRUE(std::filesystem::exists(dir + "/report/index.html"));
}
