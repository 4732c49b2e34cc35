#pragma once
// Simulated GPUs for the TLB analyzer: a translation hierarchy of set-associative
// levels (ways x sets, what one entry covers, a miss penalty, LRU or random replacement, a set
// index of the tag's low bits or of those XOR the next ones), chased as the tlb probe chases an
// alias pool: the sweep characterize plans (full or quick) runs through run_sweep with a model in
// place of the GPU, and each point's median and mean carry noise of the shape real sweeps show
// (heavy tails, rare one-sided outliers). A random family of such GPUs, and null GPUs with no
// level, states the analyzer's recovery and false-level rates (docs/analyze-tlb.md). Host-only.
#include "model/profile.hpp"
#include "probes/tlb/data.hpp"
#include "probes/tlb/forward.hpp"
#include "probes/tlb/sweep.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gpuprobe::probes::tlb::sim {

using tlb::miss_share;
using tlb::replacement;
using tlb::replacement_name;
using sim_level = tlb::cache_level;

struct sim_gpu {
  std::vector<sim_level> levels; // innermost first, reach growing
  double base_cycles = 300;      // a hop that hits every level
  double noise_cycles = 1;       // the spread of a point's median (robust sigma)
  std::string describe() const;  // "2 levels: 16 x 16 MiB FA lru +10; 2048 = 8 x 256 ..."
};

enum class sim_mode { full, quick };

// Noise of the shape real sweeps show, to draw from: each point's deviation from the median of
// its four neighbours, in its curve's robust sigma (floored as the step detector floors it),
// pooled over real curves away from any rise. Medians of integer cycles (gpuprobe's per-point
// medians) and means (gpuprobe's per-point means, the 2017 tool's cells) are pooled apart: a
// median is mostly exact, a mean never is.
struct noise_pool {
  std::vector<double> median_sigmas, mean_sigmas;
  int curves = 0;
  bool empty() const { return median_sigmas.empty() || mean_sigmas.empty(); }
};
noise_pool noise_from(const std::vector<probes::tlb_dataset> &real);

// Cycles per hop, noiseless.
double latency(const sim_gpu &g, std::uint64_t stride, std::uint64_t hops);

// The tlb stage's plan for `mode` on an alias pool of `max_bytes` (chunks of 2 MiB), as
// characterize runs it.
sweep_plan plan_for(sim_mode mode, std::uint64_t max_bytes);

// The sweep run_sweep makes of `g` under `plan` (noise seeded by `seed`): its points, and the
// same as a dataset the analyzer reads. Each point's median and mean are the truth plus
// g.noise_cycles times a draw from `real` (medians from its medians, means from its means);
// with no pool, a t(4) draw with a rare one-sided outlier.
std::vector<sweep_point> simulate_points(const sim_gpu &g, const sweep_plan &plan,
                                         std::uint64_t seed, const noise_pool *real = nullptr);
probes::tlb_dataset simulate(const sim_gpu &g, const sweep_plan &plan, std::uint64_t seed,
                             const noise_pool *real = nullptr);

// The sweep as gpuprobe's raw result (gpuprobe.result, probe "tlb", an alias pool in 2 MiB
// chunks) of a device named "simulated: <describe()>": `gpuprobe analyze tlb` reads it.
nlohmann::json raw_result(const sim_gpu &g, const sweep_plan &plan,
                          const std::vector<sweep_point> &points);
// The same sweep in the 2017 cuda-gpu-tlb tool's CSV (footprint in MB a row, stride in KB a
// column, a cell empty where that stride has no point), the format the K80/P100 tables came in.
std::string csv_2017(const sim_gpu &g, const std::vector<sweep_point> &points);

// A random GPU of the family: 1 to 4 levels, 8 to 65,536 entries (fully associative or 2 to 16
// ways), 4 KiB to 512 MiB an entry, penalties 3 to 1,000 cycles, noise 0.3 to 5 cycles; `null`:
// no level at all.
sim_gpu random_gpu(std::mt19937_64 &rng, bool null_gpu = false);

// How the analyzer's hierarchy `h` of `g`, swept under `plan`, came out. A level is observable
// when two or more of the plan's strides put its boundary (entries x max(stride, coverage)) inside
// the sweep, at least twice the smallest footprint and at most half the largest (and half the
// largest lap); its coverage is determinable when the plan has strides below and above it. It is
// found when a reported level's reach is within 25 % of its reach, or, where the page is only
// bounded (the coverage below every stride, or a reported upper bound at or above the coverage),
// when its entries are within 25 %, or, where the analyzer states intervals of entries and coverage
// (the whole-sweep model), when both lie inside them and its penalty is within 30 %.
//
// A level is recoverable, by construction from its own miss model (miss_share), when its true
// entry count shows inside the sweep at two strides or more (at those strides the first miss
// comes after exactly `entries` tags: no set conflict cuts it short, and that boundary lies
// inside the stride's sweep, at least twice the smallest footprint and at most half the
// largest), its penalty is at least 3 x the sweep's noise, and it is separated from every other
// level (their reaches at least 2x apart): what an analyzer can be asked to find. A reported
// level that matches none is a view when it is a simulated level seen through fewer of its sets
// (its page at or above that level's coverage, its entries at most the level's, its penalty
// within 30 %), else invented.
struct level_score {
  bool observable = false, recoverable = false, coverage_determinable = false, found = false,
       exact_entries = false, exact_ways_sets = false, exact_coverage = false,
       penalty_within_10 = false, set_associative = false;
  bool by_intervals = false; // found only because its entries and coverage lie in the stated intervals
  double penalty_over_noise = 0;
};
struct reported_level {
  double confidence = 0; // as the analyzer stated it (0 where it stated none)
  bool right = false;    // it matched a simulated level
  bool view = false;     // not right, but a simulated level seen through fewer of its sets
};
struct gpu_score {
  std::vector<level_score> levels;
  std::vector<reported_level> reported; // each level the analyzer reported, in its order
  int false_levels = 0;                 // reported levels matching no simulated one
};
gpu_score score(const sim_gpu &g, const model::tlb_hierarchy &h, const sweep_plan &plan);

using tlb::first_miss_tags;

} // namespace gpuprobe::probes::tlb::sim
