// gpuprobe run's TAS/WAS grid (pipeline/bench_stage.hpp): left out with its reason under --quick
// or without gpuprobe-bench; otherwise gpuprobe-bench on this GPU by UUID, the 36 cases of
// RW, RW-BM, CoRW and CRW, written beside and kept only when made here by this commit with this
// grid; and the report draws CoRW and CRW against their models too.
#include "common/build_info.hpp"
#include "pipeline/bench_stage.hpp"
#include "report/report.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

namespace fs = std::filesystem;
using namespace gpuprobe::pipeline;
using nlohmann::json;

TEST(BenchStage, LeftOutWithItsReasonUnderQuickOrWithoutTheBinary) {
  EXPECT_NE(plan_bench("/bin/true", true, "GPU-x").skip.find("--quick"), std::string::npos);
  const auto none = plan_bench("/nonexistent/gpuprobe-bench", false, "GPU-x");
  EXPECT_NE(none.skip.find("not built"), std::string::npos) << none.skip;
  EXPECT_TRUE(none.argv.empty());
}

// --map-late: a full run's grid goes before characterize, so the GPU that maps late
// starts mapping after its neighbour; a quick run has no grid to move, and without the flag the
// grid keeps its place after validate.
TEST(BenchStage, UnderMapLateAFullRunsGridGoesFirst) {
  EXPECT_TRUE(bench_first(false, true));
  EXPECT_FALSE(bench_first(true, true));
  EXPECT_FALSE(bench_first(false, false));
  EXPECT_FALSE(bench_first(true, false));
}

// The grid's program in a folder characterize has not written yet (--map-late: it runs first): its
// raw/ is made, the file written beside lands as raw/bench_getpage.json; a grid that fails leaves
// neither file and says why (r130: Google Benchmark's "invalid file name" with no raw/).
TEST(BenchStage, AGridRunFirstMakesRawAndAFailedOneLeavesNothing) {
  const std::string dir = gpuprobe::test::temp_path("bench_first");
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto plan = plan_bench("/bin/true", false, "GPU-x");
  ASSERT_TRUE(plan.skip.empty()) << plan.skip;
  plan.argv = {"/bin/sh", "-c", "echo '{\"context\": {}, \"benchmarks\": []}' > " + plan.out};
  EXPECT_EQ(run_bench_plan(dir, plan, "resume", nullptr), "");
  EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / k_bench_file));
  EXPECT_FALSE(fs::exists(fs::path(dir) / plan.out));

  fs::remove_all(dir);
  fs::create_directories(dir);
  plan.argv = {"/bin/sh", "-c", "echo partial > " + plan.out + "; exit 1"};
  const std::string why = run_bench_plan(dir, plan, "resume", nullptr);
  EXPECT_EQ(why.rfind("failed: ", 0), 0u) << why;
  EXPECT_FALSE(fs::exists(fs::path(dir) / plan.out));
  EXPECT_FALSE(fs::exists(fs::path(dir) / k_bench_file));
}

TEST(BenchStage, TheGridRunsOnThisGpuByUuidAndWritesBeside) {
  const auto p = plan_bench("/bin/true", false, "GPU-1234");
  ASSERT_TRUE(p.skip.empty()) << p.skip;
  ASSERT_GE(p.argv.size(), 4u);
  EXPECT_EQ(p.argv[0], "/bin/true");
  EXPECT_EQ(p.env, std::vector<std::string>{"CUDA_VISIBLE_DEVICES=GPU-1234"});
  EXPECT_EQ(p.out, std::string(k_bench_file) + ".tmp") << "renamed only once complete";
  EXPECT_NE(std::find(p.argv.begin(), p.argv.end(), "--benchmark_out=" + p.out), p.argv.end());
  // The filter's cases: 6 allocators x 3 thread counts x 2 free fractions, nothing else.
  const std::regex f(bench_filter());
  int n = 0;
  for (const char *a :
       {"rw", "rw_bm32", "rw_bm64", "corw32", "corw64", "crw", "queue", "bump", "cuda_malloc"})
    for (const char *t : {"1024", "4096", "65536", "1048576", "270336"})
      for (const char *fr : {"500", "100", "5"})
        n += std::regex_search(std::string("BM_getpage/") + a + "/threads:" + t +
                                   "/free_permille:" + fr + "/iterations:10/manual_time",
                               f);
  EXPECT_EQ(n, 36);
}

TEST(BenchStage, KeptOnlyWhenMadeOnThisGpuByThisCommitWithThisGrid) {
  const std::string dir = gpuprobe::test::temp_path("bench_kept");
  fs::remove_all(dir);
  fs::create_directories(fs::path(dir) / "raw");
  EXPECT_EQ(bench_kept(dir, "GPU-a"), "") << "no file";
  const auto write = [&](const std::string &uuid, const std::string &commit,
                         const std::string &grid) {
    std::ofstream(fs::path(dir) / k_bench_file) << json{
        {"context", {{"gpu_uuid", uuid}, {"gpuprobe_commit", commit}, {"gpuprobe_run_grid", grid}}},
        {"benchmarks",
         json::array({{{"name", "BM_getpage/rw/threads:4096/free_permille:5"}},
                      {{"name", "BM_getpage/crw/threads:4096/free_permille:5"},
                       {"error_occurred", true}}})}}.dump();
  };
  write("GPU-a", gpuprobe::git_commit(), bench_filter());
  EXPECT_NE(bench_kept(dir, "GPU-a"), "");
  EXPECT_EQ(bench_kept(dir, "GPU-b"), "") << "another GPU";
  EXPECT_EQ(bench_summary(dir), "BM_getpage: 2 cases, 1 failed -> raw/bench_getpage.json");
  write("GPU-a", "0000000", bench_filter());
  EXPECT_EQ(bench_kept(dir, "GPU-a"), "") << "another commit";
  write("GPU-a", gpuprobe::git_commit(), "^BM_getpage/rw/");
  EXPECT_EQ(bench_kept(dir, "GPU-a"), "") << "another grid";
  std::ofstream(fs::path(dir) / k_bench_file) << "{\"context\": ";
  EXPECT_EQ(bench_kept(dir, "GPU-a"), "") << "a broken file runs again";
}

TEST(BenchStage, TheReportDrawsCorwAndCrwAgainstTheirModels) {
  const std::string dir = gpuprobe::test::temp_path("bench_report");
  fs::remove_all(dir);
  fs::create_directories(fs::path(dir) / "raw");
  json b = json::array();
  for (const char *a : {"rw", "rw_bm64", "corw64", "crw"})
    for (int t : {4096, 65536})
      for (int f : {500, 5}) {
        json c = {{"name", std::string("BM_getpage/") + a + "/threads:" + std::to_string(t) +
                               "/free_permille:" + std::to_string(f) +
                               "/iterations:10/manual_time"},
                  {"TAS", 2.0},
                  {"TAS_theory", 2.1},
                  {"WAS", 5.0}};
        if (std::string(a) != "crw") // CRW's model has no WAS bound
          c["WAS_theory"] = 6.0;
        b.push_back(c);
      }
  std::ofstream(fs::path(dir) / k_bench_file) << json{
      {"context", {{"gpu", "NVIDIA H100 80GB HBM3"}, {"gpu_uuid", "GPU-a"}}},
      {"benchmarks", b}}.dump();
  const auto c = gpuprobe::report::build_report(dir);
  const gpuprobe::report::report_figure *tas = nullptr, *was = nullptr;
  for (const auto &f : c.figures) {
    if (f.id == "tas_vs_theory")
      tas = &f;
    if (f.id == "was_vs_theory")
      was = &f;
  }
  ASSERT_TRUE(tas && was);
  for (const char *s : {"\"corw64 500‰ free\"", "\"crw 5‰ free\"", "\"crw 5‰ free theory\"",
                        "\"rw 500‰ free theory\""})
    EXPECT_NE(tas->csv.find(s), std::string::npos) << s << "\n" << tas->csv;
  EXPECT_NE(was->csv.find("\"crw 5‰ free\""), std::string::npos);
  EXPECT_EQ(was->csv.find("\"crw 5‰ free theory\""), std::string::npos) << "no bound, no line";
}
