// pipeline::stage_runner, the resume rule of characterize, driven without a GPU or a subprocess:
// a fake stage writes the file a real one would (schema, argv, version, the GPU's UUID).
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "pipeline/stage_runner.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using gpuprobe::pipeline::stage;
using gpuprobe::pipeline::stage_runner;
using nlohmann::json;

namespace {

// A measurement and the analysis that reads it.
const stage k_measure{"tlb", "raw/tlb.json", {"tlb", "--quick"}, {}};
const stage k_analyze{
    "tlb_profile", "raw/tlb_profile.json", {"analyze", "tlb", "--input", "raw/tlb.json"}, {"tlb"}};

struct runner_fixture {
  std::string dir;
  std::string gpu = "GPU-aaaa";
  int executed = 0;
  std::FILE *log = std::tmpfile();
  ~runner_fixture() { std::fclose(log); }

  // One command's run over both stages; `args` replaces the measurement's arguments.
  stage_runner run(bool reanalyze = false, std::vector<std::string> args = k_measure.args,
                   std::vector<gpuprobe::model::stage_record> previous = {}) {
    stage measure = k_measure;
    measure.args = std::move(args);
    stage_runner r;
    r.dir = dir;
    r.uuid = gpu;
    r.reanalyze = reanalyze;
    r.previous_stages = std::move(previous);
    r.out = log;
    r.execute = [this](const stage &s) { // what the stage's command writes
      ++executed;
      json argv = json::array({"gpuprobe"});
      for (const auto &a : s.args)
        argv.push_back(a);
      fs::create_directories((fs::path(dir) / s.output).parent_path());
      std::ofstream(fs::path(dir) / s.output) << json{
          {"schema", gpuprobe::schema::result.id()},
          {"meta", {{"argv", argv}, {"version", GPUPROBE_VERSION}}},
          {"device", {{"uuid", gpu}}}}.dump();
    };
    r.run(measure, 1, 2);
    r.run(k_analyze, 2, 2);
    return r;
  }
  std::string printed() {
    std::fflush(log);
    std::rewind(log);
    std::string s;
    for (int c; (c = std::fgetc(log)) != EOF;)
      s += char(c);
    return s;
  }
};

std::string status(const stage_runner &r, std::size_t i) {
  return r.stages_run[i].value("status", "") + " " + r.stages_run[i].value("rerun_because", "");
}

runner_fixture fresh_runner_dir(const std::string &name) {
  runner_fixture f;
  f.dir = gpuprobe::test::temp_path(name);
  fs::remove_all(f.dir);
  fs::create_directories(f.dir);
  return f;
}

} // namespace

TEST(StageRunner, SameCommandKeepsAndAnotherGpuRuns) {
  auto f = fresh_runner_dir("runner_same");
  auto first = f.run();
  EXPECT_EQ(f.executed, 2);
  EXPECT_EQ(status(first, 0), "ran ");
  EXPECT_EQ(first.ran.size(), 2u);
  // The same command: nothing runs, both are kept.
  auto again = f.run();
  EXPECT_EQ(f.executed, 2);
  EXPECT_TRUE(again.ran.empty());
  EXPECT_EQ(status(again, 0), "kept ");
  EXPECT_EQ(status(again, 1), "kept ");
  EXPECT_NE(f.printed().find("[1/2+] tlb              done earlier (raw/tlb.json), kept"),
            std::string::npos)
      << f.printed();
  // Another GPU in the same folder: the measurement runs again, and says why.
  f.gpu = "GPU-bbbb";
  auto other = f.run();
  EXPECT_EQ(f.executed, 4);
  EXPECT_EQ(status(other, 0), "ran measured on another GPU (GPU-aaaa)");
}

TEST(StageRunner, QuickThenFullAndAnUpstreamRerun) {
  auto f = fresh_runner_dir("runner_quick_full");
  f.run();
  // Full after --quick: other arguments.
  auto full = f.run(false, {"tlb"});
  EXPECT_EQ(status(full, 0), "ran made with other arguments (tlb --quick)");
  // The analysis's own file was made the same way, but what it reads ran again.
  EXPECT_EQ(status(full, 1), "ran a stage it reads from ran again");
  EXPECT_EQ(f.executed, 4);
}

TEST(StageRunner, HalfWrittenFileRunsAgain) {
  auto f = fresh_runner_dir("runner_half");
  f.run();
  std::ofstream(fs::path(f.dir) / "raw/tlb.json") << R"({"schema": "gpuprobe.res)";
  auto r = f.run();
  EXPECT_EQ(status(r, 0), "ran "); // unreadable: as not run yet
  EXPECT_EQ(status(r, 1), "ran a stage it reads from ran again");
}

TEST(StageRunner, ReanalyzeKeepsMeasurementsAndRunsAnalyses) {
  auto f = fresh_runner_dir("runner_reanalyze");
  f.run();
  gpuprobe::model::stage_record tlb;
  tlb.name = "tlb";
  tlb.seconds = 12.5;
  auto r = f.run(true, k_measure.args, {tlb});
  EXPECT_EQ(f.executed, 3); // the analysis only
  EXPECT_EQ(r.stages_run[0].value("status", ""), "kept");
  EXPECT_EQ(r.stages_run[0].value("seconds", 0.0), 12.5) << "the measurement's time is kept";
  EXPECT_EQ(r.stages_run[1].value("status", ""), "reanalyzed");
  // Without the measurement: nothing to analyze, nothing runs, and it says so.
  fs::remove(fs::path(f.dir) / "raw/tlb.json");
  auto none = f.run(true);
  EXPECT_EQ(f.executed, 3);
  EXPECT_TRUE(none.stages_run.empty());
  const std::string out = f.printed();
  EXPECT_NE(out.find("not measured (raw/tlb.json): run characterize on the GPU for it"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("tlb_profile      not analyzed: raw/tlb.json was not measured"),
            std::string::npos)
      << out;
}

// run's tune and validate go by the same rule as characterize's stages (pipeline::resume_rule):
// kept when made the same way on this GPU and nothing they read ran now.
TEST(StageRunner, RunsStagesFollowTheSameRule) {
  auto f = fresh_runner_dir("stage_runner_rule");
  f.run();
  using gpuprobe::pipeline::resume_rule;
  EXPECT_TRUE(resume_rule(f.dir, k_analyze, f.gpu, false).keep);
  const auto upstream = resume_rule(f.dir, k_analyze, f.gpu, true);
  EXPECT_FALSE(upstream.keep);
  EXPECT_EQ(upstream.reason, "a stage it reads from ran again");
  EXPECT_FALSE(resume_rule(f.dir, k_analyze, "GPU-bbbb", false).keep);
  const stage tune{"tune", "tuning.json", {"tune", "--quick"}, {}};
  EXPECT_EQ(resume_rule(f.dir, tune, f.gpu, false).reason, "not run yet");
}
