// The GPU half of tlb-per-sm: one alias range (kept from the tlb stage where it fits), every
// level's two walks on every SM, the rounds repeated.
#include "probes/per_sm/driver.hpp"
#include "common/cuda_check.cuh"
#include "common/device_memory.hpp"
#include "common/stopwatch.hpp"
#include "common/units.hpp"
#include "probes/instruments/alias_range.hpp"
#include "probes/per_sm/kernel.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

namespace gpuprobe::probes {

per_sm_result run_per_sm(const per_sm_options &o, const model::tlb_hierarchy &tlb,
                         const std::string &profile_path, const device_info &dev) {
  const stopwatch t0;
  auto r = level_result<per_sm_result>(dev, o.seed, profile_path);
  r.reps = o.reps;
  const auto targets = plan_per_sm(tlb, o);
  const std::uint64_t gib = 1ull << 30;
  std::uint64_t need = 0;
  std::vector<alias_walk> walks; // each level's pages: the slots mapped (a kept range: its own)
  for (const auto &t : targets)
    if (t.skipped.empty()) {
      need = std::max(need, t.bytes());
      walks.push_back({std::uint64_t(t.tested.coverage_bytes), t.bytes()});
    }
  r.range_bytes = (need + gib - 1) / gib * gib;
  std::unique_ptr<device_pool> pool;
  std::unique_ptr<per_sm_chase> chase;
  if (r.range_bytes) {
    pool = map_alias_range("tlb-per-sm", r.range_bytes, std::move(walks), dev.ordinal, o.seed);
    // Every word walked reads 0 (the chunk behind every slot).
    GPUPROBE_CUDA_CHECK(cudaMemset(pool->data(), 0, pool->alias_bytes()));
    chase = std::make_unique<per_sm_chase>(pool->data(), pool->bytes(), o.timeout_s);
  }
  for (const auto &t : targets) {
    per_sm_level_result l;
    l.target = t;
    r.levels.push_back(l);
  }
  // Whole rounds over the levels, so a slow moment of the GPU falls on every level alike.
  for (int rep = 0; rep < o.reps; ++rep)
    for (auto &l : r.levels) {
      const auto &t = l.target;
      if (!t.skipped.empty())
        continue;
      const auto page = std::uint64_t(t.tested.coverage_bytes);
      const auto below = chase->measure(page, t.below_pages, t.laps_below, o.sm_limit);
      const auto above = chase->measure(page, t.above_pages, t.laps_above, o.sm_limit);
      if (l.sms.empty())
        for (const auto &w : below)
          l.sms.push_back(w.sm);
      std::vector<double> b, a;
      for (std::size_t i = 0; i < below.size() && i < above.size(); ++i) {
        b.push_back(below[i].cycles_per_hop);
        a.push_back(above[i].cycles_per_hop);
      }
      l.below.push_back(b);
      l.above.push_back(a);
      std::fprintf(stderr,
                   "[tlb-per-sm] %s round %d/%d: %zu SMs, %u and %u pages, %.1f s elapsed\n",
                   t.level.c_str(), rep + 1, o.reps, l.sms.size(), t.below_pages, t.above_pages,
                   t0.seconds());
    }
  r.wall_seconds = t0.seconds();
  return r;
}

} // namespace gpuprobe::probes
