// gpuprobe run: flags -> pipeline::run_run_options; the sequence is pipeline/run_driver.cpp,
// --devices runs one process per GPU (cli/devices.hpp).
#include "cli/common.hpp"
#include "cli/devices.hpp"
#include "pipeline/run_driver.hpp"

#include <memory>

namespace gpuprobe::cli {

void setup_run(CLI::App &parent) {
  auto opt = std::make_shared<stage_command_flags<pipeline::run_run_options>>();
  auto *app = parent.add_subcommand(
      "run", "characterize -> tune -> validate -> report in one folder, resumable; the summary");
  app->footer("Example: gpuprobe run --quick --out results/first\n"
              "         gpuprobe run --devices all   (results/<gpu>-<uuid8> per GPU)");
  add_device_option(*app, opt->common);
  add_seed_option(*app, opt->common);
  app->add_option("--out", opt->common.out,
                  "results folder (default results/<gpu>-<uuid8>; with --devices the parent)");
  app->add_flag("--quick", opt->run.quick, "every stage's --quick");
  app->add_flag("--allow-busy", opt->run.allow_busy,
                "characterize beside other processes on the GPU, its findings marked disturbed");
  add_busy_wait_option(*app, opt->run.busy_wait_seconds);
  add_map_late_flags(*app, opt->map_late);
  app->add_flag("--verbose", opt->run.verbose,
                "every stage's output here too (it always goes to FOLDER/run.log)");
  add_devices_option(*app, opt->common, "each runs the whole pipeline in its own folder");
  app->callback([opt] {
    if (opt->common.devices.empty())
      return pipeline::run_pipeline(opt->one_gpu_options());
    opt->per_device("run", opt->run.verbose ? std::vector<std::string>{"--verbose"}
                                            : std::vector<std::string>{});
  });
}

} // namespace gpuprobe::cli
