// `analyze sharing`, `tlb-sharing` and `atomics` from the command line: fixtures give groups,
// bad input gives a one-line error, a non-zero exit and no output file (before any GPU work).
#include "common/json_io.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

using gpuprobe::test::run_gpuprobe;
using gpuprobe::test::temp_path;

using gpuprobe::test::expect_one_line_error;

TEST(CliSharing, AnalyzeK80L2FixtureWritesGroups) {
  const auto out = temp_path("k80_sharing.json");
  const auto r =
      run_gpuprobe("analyze sharing --input " +
                   gpuprobe::test::fixture("K80/TLBsharing-2048-65.txt") + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = gpuprobe::read_json_file(out);
  EXPECT_EQ(doc["schema"], "gpuprobe.sharing/1");
  EXPECT_EQ(doc["device"]["name"], "Tesla K80");
  EXPECT_EQ(doc["sharing"]["scope"], "groups");
  EXPECT_EQ(doc["sharing"]["groups"].size(), 5u);
  EXPECT_EQ(doc["sharing"]["groups"][2], (std::vector<int>{2, 7, 10}));
  EXPECT_NE(r.out.find("group {2,7,10}"), std::string::npos) << r.out;
}

TEST(CliSharing, AnalyzeBadInput) {
  const auto out = temp_path("sharing_bad.json");
  expect_one_line_error(run_gpuprobe("analyze sharing --input /nonexistent.txt --out " + out), out,
                        "cannot read");
  const auto txt = temp_path("bad_sharing.txt");
  std::ofstream(txt)
      << "#GPU: cuda 9.0\n#--- absolute values ---\n#   000 001\n000 300 300\n001 300 x3\n";
  expect_one_line_error(run_gpuprobe("analyze sharing --input " + txt + " --out " + out), out,
                        ":5:");
  const auto future = temp_path("future_sharing.json");
  std::ofstream(future) << R"({"schema": "gpuprobe.result/7", "probe": "tlb-sharing"})";
  expect_one_line_error(run_gpuprobe("analyze sharing --input " + future + " --out " + out), out,
                        "schema version 7");
  const auto broken = temp_path("broken_sharing.json");
  std::ofstream(broken) << R"({"schema": "gpuprobe.result/1", "probe": "tlb-sharing", "sharing": )";
  expect_one_line_error(run_gpuprobe("analyze sharing --input " + broken + " --out " + out), out,
                        "broken_sharing.json");
}

TEST(CliSharing, ProbeRefusesAProfileWithoutLevelsBeforeTouchingTheGpu) {
  const auto out = temp_path("sharing_out.json");
  const auto prof = temp_path("no_levels_profile.json");
  std::ofstream(prof)
      << R"({"schema": "gpuprobe.profile/1", "tlb": {"levels": [], "candidates": []}})";
  expect_one_line_error(run_gpuprobe("tlb-sharing --profile " + prof + " --out " + out), out,
                        "no TLB level");
  expect_one_line_error(
      run_gpuprobe("tlb-sharing --profile " + prof + " --candidate 1 --out " + out), out,
      "no TLB candidate");
  const auto two = temp_path("one_level_profile.json");
  std::ofstream(two)
      << R"({"schema": "gpuprobe.profile/1", "tlb": {"levels": [{"entries": 16, "page_bytes": 2097152, "reach_bytes": 33554432}]}})";
  expect_one_line_error(run_gpuprobe("tlb-sharing --profile " + two + " --level 3 --out " + out),
                        out, "levels 1..1");
  expect_one_line_error(
      run_gpuprobe("tlb-sharing --profile " + two + " --page-bytes 2M --out " + out), out,
      "not both");
  const auto future = temp_path("future_profile.json");
  std::ofstream(future) << R"({"schema": "gpuprobe.profile/3", "tlb": {}})";
  expect_one_line_error(run_gpuprobe("tlb-sharing --profile " + future + " --out " + out), out,
                        "schema version 3");
  expect_one_line_error(
      run_gpuprobe("tlb-sharing --coverage-bytes 2M --entries 16 --overfill 0.5 --out " + out), out,
      "overfill");
}

TEST(CliAtomics, UnknownVariantIsRejected) {
  const auto out = temp_path("atomics_out.json");
  expect_one_line_error(run_gpuprobe("atomics --variants same_u16 --out " + out), out,
                        "unknown atomics variant");
}
