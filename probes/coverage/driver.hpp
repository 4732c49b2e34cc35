#pragma once
// `gpuprobe tlb-coverage`: what one entry of each TLB level covers, measured, not assumed. The
// sweep finds a level's coverage C (16 MiB for Hopper's L1) by striding over an alias range of
// 2 MiB slots; this probe asks what stands behind it, with walks over patterns of slots and
// layouts of the range. In windows of C, r = C / slot slots each:
//   tag    A (slot 0 of every window) against D (per pair of windows, two slots r - 1 apart that
//          straddle their boundary): the same onset if one tag covers an aligned window, twice
//          A's if an entry covers any r consecutive slots;
//   fill   a walk past the level's full miss that enters each window at slot 0, then touches a
//          slot of the same window beyond every inner level's coverage: a hit (the first miss
//          filled the whole window) or a miss of its own (one 2 MiB sector at a time);
//   mapped H (slots 0 and r/2 of every window) with every slot mapped against only those two:
//          does an entry need its neighbours mapped (a coalescing of valid entries)?
//   chunks A on one chunk at every slot (the alias) against a distinct physical chunk per window;
//          and, for the innermost level, every slot from one allocation in order (physically
//          contiguous as the driver hands it out) against the alias: is contiguity used?
//   onset  (fully associative levels) the walk of E and E + 1 windows repeated, clean, after a
//          foreign page is read, and by the conflict probe's list walk: what takes an entry.
// Planning, the searches and the verdicts are host code (result.cpp, tested on simulated TLBs of
// each kind); run_coverage needs a GPU (driver.cpp).
#include "common/device_info.hpp"
#include "common/device_memory.hpp"
#include "common/envelope.hpp"
#include "model/profile.hpp"
#include "probes/level_target.hpp"
#include "probes/coverage/kernel.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct coverage_options {
  std::uint64_t slot_bytes = 2ull << 20; // the alias granularity (Hopper: 2 MiB)
  std::uint64_t max_range_bytes = k_alias_default_bytes;
  std::uint32_t max_chunks = 8192; // distinct chunks (x slot bytes of device memory)
  std::uint32_t laps = 2;
  int repeats = 6; // onset walks of the fully associative level
  std::uint64_t seed = 1;
};

struct coverage_target : level_target {
  double inner_full_miss = 0;    // windows of the level inside past which it misses every hop
  std::uint32_t inner_slots = 0; // slots one entry of the level inside covers (0: innermost)
  std::uint32_t slots() const; // r
  std::uint32_t entries() const;
  double penalty_cycles() const;
  double full_miss_windows() const;
};
std::vector<coverage_target> plan_coverage(const model::tlb_hierarchy &tlb,
                                           const coverage_options &o);

// What the host logic asks of a GPU (or of a simulated TLB).
struct coverage_env {
  // The layout the next walks use; `key` names it, so one already mapped is kept.
  std::function<void(const std::string &key, const slot_layout &l)> map;
  std::function<walk_stats(const walk_pattern &p, std::uint32_t groups, std::uint32_t laps,
                           double thr, bool foreign)>
      walk;
  // The conflict probe's list walk over `pages` windows of `window_bytes` from window `start` of
  // the layout the walks use:
  // hops per lap above `thr` (absent: not measured).
  std::function<double(std::uint32_t start, std::uint32_t pages, std::uint64_t window_bytes,
                       double thr)>
      list_walk;
};

struct onset_search {
  std::string pattern, layout;
  std::uint32_t windows_per_group = 1;
  std::optional<double> onset_windows; // the fewest windows whose walk missed
  std::uint32_t max_windows = 0;       // searched up to
  double threshold_cycles = 0;         // this pattern's: its hit cost + half the penalty
  int walks = 0;
  std::string note; // why no onset
};

struct fill_test {
  bool testable = true; // false where the level inside covers as much as this one
  std::uint32_t second_slot = 0;
  std::uint32_t low_windows = 0, high_windows = 0;
  double hit_cycles = 0;          // slot 0, walk below the level's onset
  double first_cycles = 0;        // slot 0, walk past its full miss
  double second_cycles = 0;       // the second slot, same walk
  double first_miss_share = 0;    // of slot 0's hops past the threshold
  std::optional<double> fraction; // (second - hit) / (first - hit)
};

struct onset_repeat {
  std::string how; // "clean", "foreign page first", "conflict list walk"
  std::uint32_t start_window = 0, windows = 0;
  std::uint64_t range_bytes = 0; // the mapped range the walk ran in
  std::vector<double> misses_per_lap;
  std::vector<int> smids;
};

struct coverage_level_result {
  coverage_target target;
  double threshold_cycles = 0;
  std::vector<onset_search> onsets; // A, D, H, H (mapped pair only), A (distinct), B, B (ordered)
  fill_test fill;
  std::vector<onset_repeat> repeats;
  nlohmann::json verdict; // coverage_verdict()
  double seconds = 0;
  std::string finding() const; // the verdict in words ("" before it was made)
};

struct coverage_result : result_envelope {
  std::string profile;
  std::vector<coverage_level_result> levels;
  double wall_seconds = 0;
};

// The experiments on one level (host logic: every walk goes through `env`).
coverage_level_result measure_coverage(coverage_env &env, const coverage_target &t,
                                       const coverage_options &o);
// The verdict and its words, from the measurements.
nlohmann::json coverage_verdict(const coverage_level_result &l, const coverage_options &o);

coverage_result run_coverage(const coverage_options &o, const model::tlb_hierarchy &tlb,
                             const std::string &profile_path, const device_info &dev);

nlohmann::json to_json(const coverage_result &r);

} // namespace gpuprobe::probes
