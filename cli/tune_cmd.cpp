// gpuprobe tune: flags -> tune::tune_run_options; tune/tune_driver.cpp measures and decides on one
// GPU, --devices runs one process per GPU (cli/devices.hpp).
#include "cli/common.hpp"
#include "cli/devices.hpp"
#include "common/error.hpp"
#include "common/results_folder.hpp"
#include "tune/tune_driver.hpp"

#include <memory>

namespace gpuprobe::cli {

void setup_tune(CLI::App &parent) {
  auto opt = std::make_shared<unit_file_flags<tune::tune_run_options>>();
  auto *app = parent.add_subcommand("tune", "profile.json -> tuning.json: word size, CRW placement "
                                            "and TLB scope measured, TLB-scoped regions");
  app->footer("Example: gpuprobe tune --profile results/first/profile.json --out "
              "results/first/tuning.json (~11 s on an H100)");
  opt->add_options(*app, opt->run.profile,
                   {"--profile",
                    "profile.json of gpuprobe characterize (required without --devices)",
                    "tuning.json to write (required without --devices)",
                    "each reads FOLDER/profile.json, writes FOLDER/tuning.json"});
  app->add_option("--reps", opt->run.reps, "repetitions of each measurement (interleaved)")
      ->capture_default_str();
  app->add_flag("--quick", opt->run.quick,
                "three free fractions for the word size (100, 50, 1 %), a quarter of the footprint "
                "for the TLB scope");
  app->callback([opt] {
    const auto &o = *opt;
    if (o.common.devices.empty()) {
      o.check_files("tune", o.run.profile);
      if (o.run.reps < 3)
        throw error("tune: --reps must be at least 3");
      return tune::run_tune(one_gpu(o.common, o.run));
    }
    run_per_device("tune", o.common.devices, o.results,
                   plan_for(o.measure_command("tune", results_folder::profile_file,
                                              results_folder::tuning_file, "characterize")));
  });
}

} // namespace gpuprobe::cli
