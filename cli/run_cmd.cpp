// gpuprobe run: characterize -> tune -> validate -> report into one folder, as resumable stages
// of this binary (each stays available alone), then the summary: the hierarchy, the decisions,
// the verdicts and the page's path. A finished folder is rerun without GPU work: characterize
// keeps its stages, tune and validate are kept when their record matches and nothing they read
// ran again, and only the report is drawn anew.
#include "analysis/characterize.hpp"
#include "analysis/report/report.hpp"
#include "cli/common.hpp"
#include "cli/devices.hpp"
#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/results_folder.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

namespace gpuprobe::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct run_options {
  common_options common;
  bool quick = false;
};

void run_pipeline(const run_options &o) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto dev = query_device(o.common.device);
  release_own_context(); // the stages run in child processes: hold no memory beside them
  const std::string dir =
      o.common.out.empty() ? analysis::default_results_dir(dev.name, dev.uuid) : o.common.out;
  fs::create_directories(dir);
  if (const std::string other = analysis::other_gpu_results(dir, dev.uuid); !other.empty())
    throw error("run: " + other + ": give another --out (a folder per GPU), or remove " + dir);
  const std::string seed = std::to_string(o.common.seed), device = std::to_string(o.common.device);
  const std::string resume = "finished stages are kept: run `gpuprobe run" +
                             std::string(o.quick ? " --quick" : "") + " --out " + dir +
                             "` again to go on from this stage";
  auto timed = [&](const char *name, const std::vector<std::string> &args) {
    const double since =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[run] %-12s (%.0f s so far)\n", name, since);
    std::fflush(stdout);
    run_stage_in(dir, name, args, resume);
  };
  std::printf("gpuprobe run%s: %s (%s) -> %s\n", o.quick ? " --quick" : "", dev.name.c_str(),
              dev.uuid.c_str(), dir.c_str());
  // 1. characterize: resumes by itself and leaves profile.json as it was when nothing ran.
  const results_folder folder{dir};
  const fs::path profile_path = folder.profile();
  auto text_of = [](const fs::path &p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string profile_before = fs::exists(profile_path) ? text_of(profile_path) : "";
  std::vector<std::string> a = {"characterize", "--device", device, "--out", ".", "--seed", seed};
  if (o.quick)
    a.push_back("--quick");
  timed("characterize", a);
  bool upstream_ran = text_of(profile_path) != profile_before; // tune reads the profile
  // 2. tune, 3. validate: kept when made the same way on this GPU and their input did not change.
  auto stage = [&](const char *name, std::vector<std::string> args, const std::string &output) {
    if (o.quick)
      args.push_back("--quick");
    const analysis::stage st{name, output, args, {}};
    auto check = analysis::check_stage((fs::path(dir) / output).string(), st, dev.uuid);
    if (check.keep && upstream_ran)
      check = {false, "a stage it reads from ran again"};
    if (check.keep) {
      std::printf("[run] %-12s done earlier (%s), kept\n", name, output.c_str());
      return;
    }
    if (check.reason != "not run yet")
      std::printf("[run] %-12s runs again: %s was %s\n", name, output.c_str(),
                  check.reason.c_str());
    timed(name, args);
    upstream_ran = true;
  };
  using rf = results_folder;
  stage("tune",
        {"tune", "--device", device, "--profile", rf::profile_file, "--out", rf::tuning_file,
         "--seed", seed},
        rf::tuning_file);
  stage("validate",
        {"validate", "--device", device, "--tuning", rf::tuning_file, "--out", rf::validation_file,
         "--seed", seed},
        rf::validation_file);
  // 4. report: drawn anew every time (no GPU).
  timed("report", {"report", "--input", ".", "--out", rf::report_dir});
  std::printf("gpuprobe run: %.0f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  for (const auto &line : analysis::run_summary_lines(dir))
    std::printf("  %s\n", line.c_str());
}

} // namespace

void setup_run(CLI::App &parent) {
  auto opt = std::make_shared<run_options>();
  auto *app = parent.add_subcommand(
      "run", "characterize -> tune -> validate -> report in one folder, resumable; the summary");
  app->footer("Example: gpuprobe run --quick --out results/first\n"
              "         gpuprobe run --devices all   (results/<gpu>-<uuid8> per GPU)");
  add_device_option(*app, opt->common);
  add_seed_option(*app, opt->common);
  app->add_option("--out", opt->common.out,
                  "results folder (default results/<gpu>-<uuid8>; with --devices the parent)");
  app->add_flag("--quick", opt->quick, "every stage's --quick");
  add_devices_option(*app, opt->common, "each runs the whole pipeline in its own folder");
  app->callback([opt] {
    if (opt->common.devices.empty())
      return run_pipeline(*opt);
    unit_command c{"run", "", "", "", {"--seed", std::to_string(opt->common.seed)}, ""};
    if (opt->quick)
      c.extra.push_back("--quick");
    run_per_device("run", opt->common.devices,
                   opt->common.out.empty() ? "results" : opt->common.out, plan_for(c));
  });
}

} // namespace gpuprobe::cli
