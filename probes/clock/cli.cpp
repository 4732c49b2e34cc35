// gpuprobe clock: flags -> probes::clock_options; the probe (probes/clock/driver.hpp) runs, the
// result is written and its verdict printed.
#include "common/device_info.hpp"
#include "common/json_io.hpp"
#include "probes/clock/driver.hpp"
#include "probes/clock/probe.hpp"
#include "probes/kit.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes::clock {

namespace {

struct clock_flags {
  kit::common_options common;
  probes::clock_options o;
};

void run(clock_flags &f) {
  f.o.seed = f.common.seed;
  const auto r = probes::run_clock(f.o, query_device(f.common.device));
  write_json_atomic(f.common.out, to_json(r));
  std::printf("gpuprobe clock: %s, %d SMs busy for %.2f s (%d windows), stated peak %.0f MHz\n",
              device_info_from_json(r.device).name.c_str(), r.sms_seen, r.options.seconds,
              int(r.windows.size()), r.stated_peak_mhz);
  std::printf("  %s\n  wrote %s\n", r.verdict.reason.c_str(), f.common.out.c_str());
}

} // namespace

kit::command cli() {
  auto f = std::make_shared<clock_flags>();
  kit::command c("clock", "the SM clock while every SM is busy with FMAs, and whether it throttled",
                 "Example: gpuprobe clock --seconds 2 --out clock.json");
  c.measures_result(f->common);
  c.option("--seconds", &f->o.seconds, "how long every SM is kept busy").shown().in(0.01, 600.0);
  c.option("--samples", &f->o.samples, "clock readings per SM (one window between two)")
      .shown()
      .in(2, 100000);
  c.option("--drop", &f->o.drop, "throttled: two windows in a row this fraction under the highest")
      .shown()
      .in(0.001, 0.9);
  c.run = [f] { run(*f); };
  return c;
}

} // namespace gpuprobe::probes::clock
