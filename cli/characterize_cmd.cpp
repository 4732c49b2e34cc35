// gpuprobe characterize: flags -> pipeline::characterize_run_options; the sequence is
// pipeline/characterize_driver.cpp, --devices runs one process per GPU (cli/devices.hpp).
#include "cli/common.hpp"
#include "cli/devices.hpp"
#include "common/error.hpp"
#include "pipeline/characterize_driver.hpp"

#include <memory>

namespace gpuprobe::cli {

namespace {

struct characterize_options {
  common_options common;
  pipeline::characterize_run_options run; // the flags of its own
  map_late_options map_late;
};

void run_characterize(const characterize_options &o) {
  auto r = one_gpu(o.common, o.run);
  r.map_late = o.map_late.late;
  r.run_here = run_here;
  pipeline::run_characterize(r);
}

} // namespace

void setup_characterize(CLI::App &parent) {
  auto opt = std::make_shared<characterize_options>();
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
      return run_characterize(*opt);
    if (opt->run.reanalyze)
      throw error("characterize: --reanalyze takes one folder (--out DIR), not --devices");
    const auto &o = *opt;
    unit_command c{"characterize", "", "", "", {"--seed", std::to_string(o.common.seed)}, ""};
    if (o.run.quick)
      c.extra.push_back("--quick");
    if (o.run.allow_busy)
      c.extra.push_back("--allow-busy");
    c.extra.insert(c.extra.end(), {"--busy-wait", busy_wait_text(o.run.busy_wait_seconds)});
    c.every_second = o.map_late.every_second(); // neighbours map at different times
    run_per_device("characterize", o.common.devices,
                   o.common.out.empty() ? "results" : o.common.out, plan_for(c));
  });
}

} // namespace gpuprobe::cli
