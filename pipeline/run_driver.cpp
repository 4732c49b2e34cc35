// gpuprobe run's sequence (cli/run_cmd.cpp maps its flags here): characterize -> tune -> validate
// -> report into one folder, as resumable stages of this binary (each stays available alone),
// then the summary: the hierarchy, the decisions, the verdicts and the page's path. A finished
// folder is rerun without GPU work: characterize keeps its stages, tune and validate are kept by
// the resume rule (pipeline/stage_runner.hpp) when nothing they read ran again, and only the
// report is drawn anew (its figures whose data did not change taken from the report before).
#include "pipeline/run_driver.hpp"

#include "common/device_info.hpp"
#include "common/device_memory.hpp"
#include "common/error.hpp"
#include "common/folder_lock.hpp"
#include "common/json_io.hpp"
#include "common/process.hpp"
#include "common/results_folder.hpp"
#include "common/stopwatch.hpp"
#include "findings/characterize.hpp"
#include "pipeline/bench_stage.hpp"
#include "pipeline/stage_plan.hpp"
#include "pipeline/stage_runner.hpp"
#include "pipeline/subprocess.hpp"
#include "report/report.hpp"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <unistd.h>

namespace gpuprobe::pipeline {

namespace fs = std::filesystem;

namespace {

// DIR/run.log (`path`), appended to: a header per invocation, then every stage's output whole.
std::unique_ptr<std::FILE, int (*)(std::FILE *)> open_run_log(const std::string &path,
                                                              bool quick) {
  std::FILE *f = std::fopen(path.c_str(), "a");
  if (!f)
    throw error("run: cannot write " + path);
  std::fputs(log_header(quick ? "gpuprobe run --quick" : "gpuprobe run").c_str(), f);
  std::fflush(f);
  return {f, &std::fclose};
}

// The TAS/WAS grid into raw/bench_getpage.json (written beside, renamed when complete), or the
// line that says why it is left out or kept.
void run_bench(const std::string &dir, bool quick, const std::string &uuid,
               const std::string &resume, stage_display &display) {
  const std::string bench = (fs::path(self_path()).parent_path() / "gpuprobe-bench").string();
  const bench_plan plan = plan_bench(bench, quick, uuid);
  if (!plan.skip.empty()) {
    std::printf("[run] %-12s %s\n", "bench", plan.skip.c_str());
    return;
  }
  if (const std::string kept = bench_kept(dir, uuid); !kept.empty()) {
    std::printf("[run] %-12s done earlier (%s: %s), kept\n", "bench", k_bench_file.c_str(),
                kept.c_str());
    return;
  }
  const stopwatch s0;
  if (display.verbose)
    std::printf("[run] %-12s\n", "bench");
  if (const std::string why = run_bench_plan(dir, plan, resume, &display); !why.empty()) {
    std::printf("[run] %-12s %s: the report is drawn without TAS/WAS\n", "bench", why.c_str());
    return;
  }
  const double took = s0.seconds();
  std::printf("[run] %-12s %4.0f s  %s\n", "bench", took, bench_summary(dir).c_str());
}

// The sequence's stages, each run inside this process in the folder (characterize, tune,
// validate) or as a child process there (bench, report; every stage under
// GPUPROBE_STAGES=children): a line each on the terminal, their whole output in run.log.
struct stage_caller {
  std::string dir, resume, uuid;
  bool quick = false, verbose = false;
  stage_display display;
  bool upstream_ran = false; // a stage ran now: those after it read something new

  run_here_fn here; // characterize, tune and validate inside this process (set), or as children

  void timed(const char *name, const std::vector<std::string> &args, bool in_process = false) {
    const stopwatch s0;
    if (verbose)
      std::printf("[run] %-12s\n", name);
    std::fflush(stdout);
    if (in_process && here)
      run_stage_here_in(dir, name, args, resume, &display, here);
    else
      run_stage_in(dir, name, args, resume, &display);
    const double took = s0.seconds();
    std::printf("[run] %-12s %4.0f s  %s\n", name, took, display.summary.c_str());
    if (!verbose)
      for (const auto &n : display.notes)
        std::printf("      %s\n", n.c_str());
    std::fflush(stdout);
  }

  // tune and validate: kept when made the same way on this GPU and their input did not change.
  void kept_or_run(const char *name, std::vector<std::string> args, const std::string &output) {
    if (quick)
      args.push_back("--quick");
    const pipeline::stage st{name, output, args, {}};
    const auto check = resume_rule(dir, st, uuid, upstream_ran);
    if (check.keep) {
      std::printf("[run] %-12s done earlier (%s), kept\n", name, output.c_str());
      return;
    }
    if (check.reason != "not run yet")
      std::printf("[run] %-12s runs again: %s was %s\n", name, output.c_str(),
                  check.reason.c_str());
    timed(name, args, true);
    upstream_ran = true;
  }
};

// characterize resumes by itself and leaves profile.json as it was when nothing ran: whether it
// changed tells the stages after it.
void characterize_stage(stage_caller &c, const run_run_options &o) {
  const fs::path profile_path = results_folder{c.dir}.profile();
  auto text_of = [](const fs::path &p) { return fs::exists(p) ? read_text_file(p.string()) : ""; };
  const std::string profile_before = text_of(profile_path);
  std::vector<std::string> a = {
      "characterize",        "--device", std::to_string(o.device), "--out", ".", "--seed",
      std::to_string(o.seed)};
  if (o.quick)
    a.push_back("--quick");
  if (o.allow_busy)
    a.push_back("--allow-busy");
  if (o.map_late)
    a.push_back("--map-late");
  a.insert(a.end(), {"--busy-wait", json(o.busy_wait_seconds).dump()});
  c.timed("characterize", a, true);
  c.upstream_ran = text_of(profile_path) != profile_before; // tune reads the profile
}

} // namespace

void run_pipeline(const run_run_options &o) {
  const stopwatch t0;
  std::optional<folder_lock> early; // a given folder: locked before the GPU is touched
  if (!o.out.empty())
    early.emplace(o.out, "run");
  const auto dev = query_device(o.device);
  // characterize, tune and validate run inside this process (unless GPUPROBE_STAGES=children)
  // and keep the context made now, when a neighbour maps nothing yet: a context made beside a
  // unit that holds its alias range took 1.6-1.9 s and held up that unit's driver calls, one made
  // alone 0.1-0.3 s (docs/fleet.md).
  const bool here = o.run_here && stages_here_by_env();
  if (!here)
    release_own_context(); // the stages run in child processes: hold no memory beside them
  const std::string dir = o.out.empty() ? default_results_dir(dev.name, dev.uuid) : o.out;
  std::optional<folder_lock> late; // one writer per folder; its stages write under it
  if (!early)
    late.emplace(dir, "run");
  if (const std::string other = other_gpu_results(dir, dev.uuid); !other.empty())
    throw error("run: " + other + ": give another --out (a folder per GPU), or remove " + dir);
  const std::string seed = std::to_string(o.seed), device = std::to_string(o.device);
  stage_caller c;
  c.dir = dir;
  c.uuid = dev.uuid;
  c.quick = o.quick;
  c.verbose = o.verbose;
  c.resume = "finished stages are kept: run `gpuprobe run" +
             std::string(o.quick ? " --quick" : "") + " --out " + dir +
             "` again to go on from this stage";
  c.display.log_path = results_folder{dir}.run_log().string();
  const auto log = open_run_log(c.display.log_path, o.quick);
  c.display.log = log.get();
  c.display.terminal = ::isatty(STDOUT_FILENO) == 1 && !o.verbose;
  c.display.verbose = o.verbose;
  std::printf("gpuprobe run%s: %s (%s) -> %s (every stage's output: %s)\n",
              o.quick ? " --quick" : "", dev.name.c_str(), dev.uuid.c_str(), dir.c_str(),
              c.display.log_path.c_str());
  if (here)
    c.here = o.run_here;
  const bool grid_first = bench_first(o.quick, o.map_late);
  if (grid_first) // --map-late: the grid first, so this GPU maps after its neighbour
    run_bench(dir, o.quick, dev.uuid, c.resume, c.display);
  characterize_stage(c, o); // 1.
  using rf = results_folder;
  {
    // tune's last TLB-sized pool (its scope's VMM array) kept for validate's first rows: one
    // mapping of it instead of two; freed when validate ends, however it ends.
    std::optional<pool_keeper> keep;
    if (c.here)
      keep.emplace();
    c.kept_or_run("tune", // 2.
                  {"tune", "--device", device, "--profile", rf::profile_file, "--out",
                   rf::tuning_file, "--seed", seed},
                  rf::tuning_file);
    c.kept_or_run("validate", // 3.
                  {"validate", "--device", device, "--tuning", rf::tuning_file, "--out",
                   rf::validation_file, "--seed", seed},
                  rf::validation_file);
  }
  if (c.here && c.upstream_ran)
    release_own_context(); // bench and report are children: this process holds no memory
  // 4. bench: the TAS/WAS grid (gpuprobe-bench BM_getpage), kept when made here by this commit.
  if (!grid_first)
    run_bench(dir, o.quick, dev.uuid, c.resume, c.display);
  // 5. report: drawn anew every time (no GPU); a figure whose data, spec and plot script are
  // those of the report before is taken from it (report --figures-from).
  std::vector<std::string> report = {"report", "--input", ".", "--out", rf::report_dir};
  if (const fs::path before = fs::path(rf::report_dir) / "figures";
      fs::is_directory(fs::path(dir) / before))
    report.insert(report.end(), {"--figures-from", before.string()});
  c.timed("report", report);
  std::printf("gpuprobe run: %.0f s\n", t0.seconds());
  for (const auto &line : report::run_summary_lines(dir))
    std::printf("  %s\n", line.c_str());
}

} // namespace gpuprobe::pipeline
