// gpuprobe characterize: flags -> pipeline::characterize_run_options; the sequence is
// pipeline/characterize_driver.cpp, --devices runs one process per GPU (cli/devices.hpp).
#include "cli/common.hpp"
#include "cli/devices.hpp"
#include "common/error.hpp"
#include "pipeline/characterize_driver.hpp"

#include <memory>

namespace gpuprobe::cli {

void setup_characterize(CLI::App &parent) {
  auto opt = std::make_shared<stage_command_flags<pipeline::characterize_run_options>>();
  auto *app = parent.add_subcommand(
      "characterize",
      "TLB levels, their sharing and atomics in one run -> DIR/raw/*.json, DIR/profile.json");
  app->footer("Example: gpuprobe characterize --quick --out results/first\n"
              "         gpuprobe characterize --devices all   (results/<gpu>-<uuid8> per GPU)");
  add_device_option(*app, opt->common);
  add_seed_option(*app, opt->common);
  app->add_option("--out", opt->common.out, "results folder (default results/<gpu>-<uuid8>)");
  app->add_flag("--quick", opt->run.quick,
                "coarser sweeps, 16 SMs for sharing, two atomics variants (about 12-15 s on an "
                "H100; a full characterize about 41-44 s)");
  app->add_flag("--reanalyze", opt->run.reanalyze,
                "no GPU: derive DIR/profile.json again from the measurements in DIR/raw with this "
                "build's analysis (a level whose sharing was measured for another geometry is "
                "left 'not measured')");
  app->add_flag("--allow-busy", opt->run.allow_busy,
                "measure although other processes use the GPU (default: wait up to 60 s for it "
                "to be idle, else stop): every finding is then marked disturbed");
  add_busy_wait_option(*app, opt->run.busy_wait_seconds);
  add_map_late_flags(*app, opt->map_late);
  add_devices_option(*app, opt->common,
                     "--out is then the parent folder (default results) of one folder per GPU");
  app->callback([opt] {
    if (opt->common.devices.empty())
      return pipeline::run_characterize(opt->one_gpu_options());
    if (opt->run.reanalyze)
      throw error("characterize: --reanalyze takes one folder (--out DIR), not --devices");
    opt->per_device("characterize");
  });
}

} // namespace gpuprobe::cli
