// gpuprobe clock: flags -> probes::clock_options; the probe (probes/clock/driver.hpp) runs, the
// result is written and its verdict printed.
#include "cli/common.hpp"
#include "common/device_info.hpp"
#include "common/json_io.hpp"
#include "probes/clock/driver.hpp"
#include "probes/clock/probe.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes::clock {

namespace {

struct clock_flags {
  cli::common_options common;
  probes::clock_options o;
};

void run(clock_flags &f) {
  cli::check_output_path(f.common.out);
  f.o.seed = f.common.seed;
  const auto r = probes::run_clock(f.o, query_device(f.common.device));
  write_json_atomic(f.common.out, to_json(r));
  std::printf("gpuprobe clock: %s, %d SMs busy for %.2f s (%d windows), stated peak %.0f MHz\n",
              device_info_from_json(r.device).name.c_str(), r.sms_seen, r.options.seconds,
              int(r.windows.size()), r.stated_peak_mhz);
  std::printf("  %s\n  wrote %s\n", r.verdict.reason.c_str(), f.common.out.c_str());
}

} // namespace

void setup_cli(CLI::App &parent) {
  auto f = std::make_shared<clock_flags>();
  auto *app = parent.add_subcommand(
      "clock", "the SM clock while every SM is busy with FMAs, and whether it throttled");
  app->footer("Example: gpuprobe clock --seconds 2 --out clock.json");
  cli::add_device_option(*app, f->common);
  cli::add_out_option(*app, f->common, "result JSON file (gpuprobe.result/1, probe clock)");
  cli::add_seed_option(*app, f->common);
  app->add_option("--seconds", f->o.seconds, "how long every SM is kept busy")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 600.0));
  app->add_option("--samples", f->o.samples, "clock readings per SM (one window between two)")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  app->add_option("--drop", f->o.drop,
                  "throttled: two windows in a row this fraction under the highest")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 0.9));
  app->callback([f] { run(*f); });
}

} // namespace gpuprobe::probes::clock
