// The GPU half of the clock probe: one busy block per SM, then the windows and the verdict.
#include "probes/clock/driver.hpp"
#include "common/stopwatch.hpp"

#include <cstdio>
#include <set>

namespace gpuprobe::probes {

clock_result run_clock(const clock_options &o, const device_info &dev) {
  const stopwatch t0;
  clock_result r;
  static_cast<result_envelope &>(r) = make_envelope(dev, o.seed);
  r.options = o;
  r.blocks = dev.sm_count;
  r.stated_peak_mhz = dev.sm_clock_khz_peak / 1000.0;
  std::fprintf(stderr, "[clock] %d SMs busy for %.2f s, %d readings each\n", r.blocks, o.seconds,
               o.samples);
  const auto s = sample_sm_clock(dev.ordinal, r.blocks, o.threads, o.seconds, o.samples);
  r.sms_seen = int(std::set<int>(s.sm.begin(), s.sm.end()).size());
  r.windows = clock_windows(s);
  r.verdict = judge_clock(r.windows, o.drop);
  r.wall_seconds = t0.seconds();
  return r;
}

} // namespace gpuprobe::probes
