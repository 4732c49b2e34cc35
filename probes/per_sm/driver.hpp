#pragma once
// `gpuprobe tlb-per-sm`: each TLB level's miss penalty and hit latency on every SM. For each level of a profile, every SM alone (probes/per_sm/kernel.hpp) walks, on the alias
// range, a footprint the level holds whole (below x where its misses begin) and one where every
// hop misses it (above x its ramp's end), at the level's page stride; the penalty is the
// difference. Host code (the plan, the summary, JSON) in result.cpp; run_per_sm needs a GPU
// (driver.cpp).
#include "common/device_info.hpp"
#include "common/envelope.hpp"
#include "model/profile.hpp"
#include "probes/level_target.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct per_sm_options {
  double below = 0.8, above = 1.25;
  int reps = 2;                             // each SM's walks, whole rounds over the levels
  int sm_limit = 0;                         // only SMs below this id (0: every SM)
  std::uint32_t min_hops = 2048;            // timed hops per walk at least (laps of a short list)
  std::uint64_t range_bytes = 384ull << 30; // the most alias range mapped (tlb's default)
  double timeout_s = 60;
  std::uint64_t seed = 1;
};

struct per_sm_target : level_target {
  std::uint32_t below_pages = 0, above_pages = 0, laps_below = 1, laps_above = 1;
  std::uint64_t bytes() const {
    return std::uint64_t(above_pages) * std::uint64_t(tested.coverage_bytes);
  }
};

// Every level of `tlb` (labelled as everywhere, model::level_label): `below` x its entries pages
// (at least 2), `above` x where every hop misses (its ramp's end; entries + 1 for a step) pages.
// A level without entries or page, or whose walk past it would not fit `o.range_bytes`, is
// skipped with the reason.
std::vector<per_sm_target> plan_per_sm(const model::tlb_hierarchy &tlb, const per_sm_options &o);

struct per_sm_level_result {
  per_sm_target target;
  std::vector<int> sms;                          // SM ids, ascending
  std::vector<std::vector<double>> below, above; // [rep][SM], cycles per hop
};

struct per_sm_result : result_envelope { // device, meta
  std::string profile;                   // the profile it tested
  std::uint64_t range_bytes = 0;         // the alias range walked (0: none)
  int reps = 0;
  std::vector<per_sm_level_result> levels;
  double wall_seconds = 0;
};

// The profile's view of one measured level: per SM the median hit and the median penalty over the
// reps, the rep-to-rep noise (with 2 reps or more), and in detail the source, the footprints and
// each spread's ends (min, median, max, with their SMs). profile.cpp adds the outliers.
model::level_per_sm summarize_per_sm(const per_sm_level_result &l, const std::string &source);

// The ends of one value per SM (`sms` in the same order, ascending) with their SMs (of a tie, the
// lowest SM at the minimum and the highest at the maximum), and the median; `v` not empty.
struct sm_spread {
  double min = 0, median = 0, max = 0;
  int min_sm = -1, max_sm = -1;
};
sm_spread spread_of(const std::vector<int> &sms, const std::vector<double> &v);
// "min (SM s) - median - max (SM t)", or "-" for no values.
std::string spread_text(const std::vector<int> &sms, const std::vector<double> &v);

per_sm_result run_per_sm(const per_sm_options &o, const model::tlb_hierarchy &tlb,
                         const std::string &profile_path, const device_info &dev);

nlohmann::json to_json(const per_sm_result &r);
per_sm_result per_sm_result_from_json(const nlohmann::json &doc); // throws gpuprobe::error
// One level of the result's "levels" (throws nlohmann's errors, or gpuprobe::error for sizes that
// do not agree).
per_sm_level_result per_sm_level_from_json(const nlohmann::json &j);

} // namespace gpuprobe::probes
