// gpuprobe validate: flags -> tune::validate_run_options; tune/validate_driver.cpp measures and
// judges on one GPU, --devices runs one process per GPU (cli/devices.hpp).
#include "cli/common.hpp"
#include "cli/devices.hpp"
#include "common/error.hpp"
#include "common/results_folder.hpp"
#include "tune/validate_driver.hpp"

#include <memory>

namespace gpuprobe::cli {

namespace {

using validate_options = unit_file_flags<tune::validate_run_options>;

// One GPU (--tuning/--out), or every GPU of --devices in its own process.
void run(const validate_options &o) {
  if (o.common.devices.empty()) {
    o.check_files("validate", o.run.tuning);
    if (o.run.reps < 10)
      throw error("validate: --reps must be at least 10");
    if (o.run.pool_gib < 8)
      throw error("validate: --pool-gib must be at least 8");
    return tune::run_validate(one_gpu(o.common, o.run));
  }
  auto c = o.measure_command("validate", results_folder::tuning_file,
                             results_folder::validation_file, "tune");
  if (!o.run.ablation)
    c.extra.push_back("--no-ablation");
  if (!o.run.sequential)
    c.extra.push_back("--fixed-reps");
  run_per_device("validate", o.common.devices, o.results, plan_for(c));
}

} // namespace

void setup_validate(CLI::App &parent) {
  auto opt = std::make_shared<validate_options>();
  auto *app = parent.add_subcommand(
      "validate",
      "tuning.json -> validation.json: default vs tuned allocators on this GPU, with statistics");
  app->footer("Example: gpuprobe validate --tuning results/first/tuning.json --out "
              "results/first/validation.json (~200 s on an H100)");
  opt->add_options(*app, opt->run.tuning,
                   {"--tuning", "tuning.json of gpuprobe tune (required without --devices)",
                    "validation.json to write (required without --devices)",
                    "each reads FOLDER/tuning.json, writes FOLDER/validation.json"});
  app->add_option("--reps", opt->run.reps,
                  "repetitions of each configuration, at most (>= 10): a workload stops at 10, "
                  "14, ... once its verdict is known")
      ->capture_default_str();
  app->add_option("--pool-gib", opt->run.pool_gib, "pool size of the allocator workloads (>= 8)")
      ->capture_default_str();
  app->add_option("--tlb-footprint-gib", opt->run.tlb_footprint_gib,
                  "footprint of the TLB-scoped kernels (0: all free memory but 6 GiB)");
  app->add_option("--only", opt->run.only, "run only the workloads whose names start with these")
      ->take_all();
  app->add_flag("--quick", opt->run.quick,
                "two free fractions, TLB footprints a quarter of the full");
  app->add_flag_callback(
      "--no-ablation", [opt] { opt->run.ablation = false; },
      "skip the rows that apply the word size and the regions one at a time");
  app->add_flag_callback(
      "--fixed-reps", [opt] { opt->run.sequential = false; },
      "measure every workload --reps times (no early stop; docs/validate.md)");
  app->callback([opt] { run(*opt); });
}

} // namespace gpuprobe::cli
