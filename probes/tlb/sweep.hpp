#pragma once
// The TLB sweep plan, host-only so it is testable without a GPU: for each stride, coarse
// geometric steps in hop count up to the footprint limit, then bisection around every rise
// the step detector finds, until the boundary is pinned to a few hops.
#include "common/alias_slots.hpp"
#include "common/steps.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct sweep_point {
  std::uint64_t stride_bytes = 0, footprint_bytes = 0, hops = 0;
  double median = 0, p10 = 0, p90 = 0, mean = 0;
  std::uint32_t samples = 0;
  int smid = -1;
  bool refined = false;   // added by the bisection
  bool disturbed = false; // its stride's repeat disagreed beyond the noise twice (run_sweep)
};

struct sweep_plan {
  std::vector<std::uint64_t> strides;
  std::uint64_t min_bytes = 1ull << 20; // smallest footprint
  std::uint64_t max_bytes = 0;          // largest footprint
  // Hops of a stride's longest lap (0: max_bytes / stride). A pool mapped in chunks of g bytes
  // sets max_bytes / g: a stride below g then sweeps as many hops as the stride g does, so a page
  // below the mapping would still show within that many entries, and the small strides no longer
  // spend their laps of millions of hops re-measuring the large-page levels (25 of a full
  // sweep's 37 s on an H100, and the same levels, pages and structure on re-analysis).
  std::uint64_t max_hops = 0;
  // Strides below `short_below` sweep footprints up to `short_bytes` only (0: no such cap). An
  // alias range then needs the slots these strides touch below short_bytes and only every
  // short_below-th byte above it (sweep_walks): 44 % of the 2 MiB slots of a quick sweep's
  // 384 GiB.
  std::uint64_t short_below = 0, short_bytes = 0;
  int points_per_octave = 4;
  int max_bisections = 8;        // per rise
  bool refine = true;            // bisect the rises and their ramps' ends (false: the grid alone)
  double resolution = 1.0 / 128; // stop when (hi - lo) / lo hops is below this
  // A level's ramp (misses rising from where they begin to where every hop misses) has both
  // ends bisected on the mean, to within max(end_hops, end_resolution x hops) hops; a point is
  // past an end when it is end_share of the rise (plus the noise floor) beyond the plateau.
  std::uint64_t end_hops = 2;
  double end_resolution = 1.0 / 1024;
  double end_share = 0.005;
  // Each stride's first, middle and last points are measured again after the rest: a mean that
  // moved by more than max(repeat_cycles, repeat_share x itself) (an idle GPU repeats within
  // 1 %; beside another process most points move by more than 1.5 %) means the stride was
  // disturbed: it is measured again, up to repeat_attempts times, then marked disturbed.
  double repeat_share = 0.015, repeat_cycles = 2;
  int repeat_attempts = 1;
  step_options steps;
};

using measure_fn = std::function<sweep_point(std::uint64_t stride, std::uint64_t hops)>;
using progress_fn = std::function<void(const std::string &)>;

// The largest footprint the plan sweeps at `stride` (max_bytes, or short_bytes below short_below).
std::uint64_t stride_max_bytes(const sweep_plan &plan, std::uint64_t stride);
// The most hops the plan sweeps at `stride` (0: the stride exceeds its footprint).
std::uint64_t stride_max_hops(const sweep_plan &plan, std::uint64_t stride);

// The alias offsets a sweep over a range mapped in chunks of `chunk_bytes` walks: each stride's
// hops (stride_max_hops, with max_hops set from the chunk as run_tlb sets it), so that an alias
// range maps only their slots.
std::vector<alias_walk> sweep_walks(sweep_plan plan, std::uint64_t chunk_bytes);

// Hop counts of the coarse grid for one stride (sorted, unique, >= 1).
std::vector<std::uint64_t> coarse_hops(const sweep_plan &plan, std::uint64_t stride);

// Bisects both ends of every rise of one stride's points (by hop count) on the mean cycles;
// returns the points added.
int refine_ramp_ends(const sweep_plan &plan, std::map<std::uint64_t, sweep_point> &pts,
                     std::uint64_t stride, const measure_fn &measure);

// The points of `pts` whose repeat (`again`, same hop counts) disagrees beyond the plan's noise.
std::vector<std::uint64_t> disagreeing(const sweep_plan &plan,
                                       const std::map<std::uint64_t, sweep_point> &pts,
                                       const std::vector<sweep_point> &again);

// Runs the whole plan. `prepare` is called once per stride before its points.
std::vector<sweep_point> run_sweep(const sweep_plan &plan,
                                   const std::function<void(std::uint64_t)> &prepare,
                                   const measure_fn &measure, const progress_fn &progress);

} // namespace gpuprobe::probes
