// The GPU half of the atomics probe: every variant over its thread counts.
#include "probes/atomics/driver.hpp"
#include "common/envelope.hpp"
#include "common/stopwatch.hpp"
#include "probes/instruments/sm_clock.hpp"

#include <algorithm>
#include <cstdio>

namespace gpuprobe::probes {

atomics_result
run_atomics(const atomics_options &o, const device_info &dev,
            const std::function<void(atomics_variant_result &, double)> &on_variant) {
  const stopwatch t_start;
  const auto variants = o.variants.empty() ? all_atomic_variants() : o.variants;
  const std::uint64_t top = atomics_top(o, dev);
  atomics_result r;
  r.full_occupancy_threads = std::uint64_t(dev.sm_count) * std::uint64_t(dev.max_threads_per_sm);
  r.cas_max_threads = o.cas_max_threads;
  std::fprintf(stderr, "[atomics] %s, %d SMs x %d threads = %llu at full occupancy\n",
               dev.name.c_str(), dev.sm_count, dev.max_threads_per_sm,
               (unsigned long long)r.full_occupancy_threads);
  r.sm_clock_mhz_before = measure_sm_clock_mhz();
  atomics_probe probe(top);
  for (auto v : variants) {
    const bool cas = v == atomic_variant::cas_u32 || v == atomic_variant::cas_u64;
    atomics_variant_result vr;
    vr.variant = v;
    vr.max_threads = cas ? std::min(top, o.cas_max_threads) : top;
    vr.capped = vr.max_threads < top;
    for (auto n : thread_counts(vr.max_threads)) {
      const auto p = probe.measure(v, n, o.samples);
      vr.points.push_back(p);
      std::fprintf(
          stderr,
          "[atomics] %-15s %7llu threads: mean %8.0f  median %8.0f  p99 %8.0f cycles, %.3g ops/s\n",
          to_string(v).c_str(), (unsigned long long)n, p.mean_cycles, p.median_cycles, p.p99_cycles,
          p.ops_per_s);
    }
    if (on_variant)
      on_variant(vr, r.sm_clock_mhz_before);
    r.variants.push_back(std::move(vr));
  }
  r.sm_clock_mhz_after = measure_sm_clock_mhz();
  device_info seen = dev;
  seen.sm_clock_mhz_seen = 0.5 * (r.sm_clock_mhz_before + r.sm_clock_mhz_after);
  r.wall_seconds = t_start.seconds();
  static_cast<result_envelope &>(r) = make_envelope(seen, o.seed);
  return r;
}

} // namespace gpuprobe::probes
