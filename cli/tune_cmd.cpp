// gpuprobe tune: flags -> tune::tune_run_options; tune/tune_driver.cpp measures and decides on one
// GPU, --devices runs one process per GPU (cli/devices.hpp).
#include "cli/common.hpp"
#include "cli/devices.hpp"
#include "common/error.hpp"
#include "common/results_folder.hpp"
#include "tune/tune_driver.hpp"

#include <memory>

namespace gpuprobe::cli {

namespace {

struct tune_options {
  common_options common;
  tune::tune_run_options run;      // the flags of its own
  std::string results = "results"; // --devices: the parent of the unit folders
};

} // namespace

void setup_tune(CLI::App &parent) {
  auto opt = std::make_shared<tune_options>();
  auto *app = parent.add_subcommand("tune", "profile.json -> tuning.json: word size, CRW placement "
                                            "and TLB scope measured, TLB-scoped regions");
  app->footer("Example: gpuprobe tune --profile results/first/profile.json --out "
              "results/first/tuning.json (~11 s on an H100)");
  app->add_option("--profile", opt->run.profile,
                  "profile.json of gpuprobe characterize (required without --devices)");
  app->add_option("--out", opt->common.out, "tuning.json to write (required without --devices)");
  add_device_option(*app, opt->common);
  add_devices_option(*app, opt->common,
                     "each reads FOLDER/profile.json, writes FOLDER/tuning.json");
  app->add_option("--results", opt->results, "with --devices: the parent of the GPUs' folders")
      ->capture_default_str();
  add_seed_option(*app, opt->common);
  app->add_option("--reps", opt->run.reps, "repetitions of each measurement (interleaved)")
      ->capture_default_str();
  app->add_flag("--quick", opt->run.quick,
                "three free fractions for the word size (100, 50, 1 %), a quarter of the footprint "
                "for the TLB scope");
  app->callback([opt] {
    const auto &o = *opt;
    if (o.common.devices.empty()) {
      check_one_gpu_files("tune", "--profile", o.run.profile, o.common.out);
      if (o.run.reps < 3)
        throw error("tune: --reps must be at least 3");
      return tune::run_tune(one_gpu(o.common, o.run));
    }
    run_per_device("tune", o.common.devices, o.results,
                   plan_for(measure_unit_command("tune", "--profile", results_folder::profile_file,
                                                 results_folder::tuning_file, o.common, o.run,
                                                 "characterize")));
  });
}

} // namespace gpuprobe::cli
