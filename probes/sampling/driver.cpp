// The GPU half of tlb-sampling: every level's two footprints, measured in one interleaved round.
#include "probes/sampling/driver.hpp"
#include "common/stopwatch.hpp"
#include "common/units.hpp"
#include "probes/sampling/kernel.hpp"

#include <cstdio>

namespace gpuprobe::probes {

sampling_result run_sampling(const sampling_options &o, const model::tlb_hierarchy &tlb,
                             const std::string &profile_path, const device_info &dev) {
  const stopwatch t0;
  auto r = level_result<sampling_result>(dev, o.seed, profile_path);
  const auto budget = std::uint64_t(double(dev.memory_free_bytes_at_start) * o.free_fraction);
  const auto targets = plan_sampling(tlb, budget, o);
  std::vector<std::uint64_t> footprints;
  for (const auto &t : targets)
    if (t.skipped.empty())
      footprints.insert(footprints.end(), {t.below_bytes, t.above_bytes});
  std::fprintf(stderr, "[tlb-sampling] %zu levels, %zu footprints, %d reps each\n", targets.size(),
               footprints.size(), o.reps);
  std::vector<sampling_times> times;
  if (!footprints.empty())
    times = measure_sampling(footprints, o.reps, dev.ordinal, r.reads_per_launch);
  std::size_t next = 0;
  for (const auto &t : targets) {
    sampling_level_result l;
    l.target = t;
    if (t.skipped.empty()) {
      l.below_ms = times[next++].ms;
      l.above_ms = times[next++].ms;
    }
    l.verdict = sampling_verdict(l, double(dev.l2_bytes), r.reads_per_launch);
    r.levels.push_back(l);
  }
  r.wall_seconds = t0.seconds();
  return r;
}

} // namespace gpuprobe::probes
