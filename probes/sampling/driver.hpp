#pragma once
// `gpuprobe tlb-sampling`: the application-level cross-check of a TLB profile. For each level,
// random sampling over real memory (probes/sampling/kernel.hpp) just below and just above the
// level's reach; the time per read should change where the level says. Host code (planning, the
// verdict, JSON) in result.cpp; run_sampling needs a GPU (driver.cpp).
#include "common/device_info.hpp"
#include "common/envelope.hpp"
#include "model/profile.hpp"
#include "probes/level_target.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct sampling_options {
  // Footprints: `below` x each level's reach (where misses begin) and `above` x where every hop
  // misses (the reach again for a level without a ramp).
  double below = 0.8, above = 1.25;
  int reps = 7;
  double free_fraction = 0.9; // of the free memory, the most one footprint may take
  std::uint64_t seed = 1;
};

// One level of the profile and the two footprints that test it ("skipped" says why not).
struct sampling_target : level_target { // `tested`, read back from a result: reach and penalty
  std::uint64_t below_bytes = 0, above_bytes = 0;
  double reach_bytes() const { return tested.reach_bytes; }
  double penalty_cycles() const { return tested.miss_penalty_cycles.value_or(0); }
};

// Targets for every level of a profile's TLB hierarchy (labelled as everywhere,
// model::level_label). A footprint is rounded down to 2 MiB; the one above is capped at
// `budget_bytes`, and a level whose capped footprint is under 1.1 x its reach is skipped with the
// reason (a level beyond the device memory, e.g.).
std::vector<sampling_target> plan_sampling(const model::tlb_hierarchy &tlb,
                                           std::uint64_t budget_bytes, const sampling_options &o);

struct sampling_level_result {
  sampling_target target;
  std::vector<double> below_ms, above_ms; // one launch each
  model::sampling_check verdict;     // its sentence and ratio typed, the rest in detail
  std::string verdict_words() const; // the verdict's line ("" before it was made)
};

struct sampling_result : result_envelope { // device, meta
  std::string profile;                     // the profile it tested
  double reads_per_launch = 0;
  std::vector<sampling_level_result> levels;
  double wall_seconds = 0;
};

// The verdict of one level: the ratio of the medians (above / below), its noise (the reps'
// robust spread), whether the change is real (> max(3 %, 3 noise)), the L2 cache's share of
// each footprint (a change then is not translation alone), and a sentence.
model::sampling_check sampling_verdict(const sampling_level_result &r, double l2_bytes,
                                       double reads_per_launch);

sampling_result run_sampling(const sampling_options &o, const model::tlb_hierarchy &tlb,
                             const std::string &profile_path, const device_info &dev);

nlohmann::json to_json(const sampling_result &r);
sampling_result sampling_result_from_json(const nlohmann::json &doc); // throws gpuprobe::error

} // namespace gpuprobe::probes
