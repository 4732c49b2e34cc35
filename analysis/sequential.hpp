#pragma once
// validate's sequential stopping rule on the ABBA pairs. A workload is measured in balanced
// blocks (AB BA); after `min_reps` per side, and after every block of `step` from there, it looks
// at what it has. It stops once the answer is known:
//   - differs:    the Mann-Whitney p, times the measured workloads (the most Holm can multiply it
//                 by) and times the looks (Bonferroni over the looks), is below alpha, and the
//                 ratio's CI at alpha / looks excludes 1: the final verdict cannot be "no
//                 significant difference";
//   - equivalent: the ratio's 95 % CI lies within 1 +- `equivalence`;
//   - cap:        `max_reps` per side (validate's --reps), what a fixed design measured.
// The verdict itself is unchanged: validation_rows runs the same statistics on whatever was
// measured. Host-only, so the rule is tested on synthetic pairs.
#include "analysis/significance.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpuprobe::analysis {

struct sequential_rule {
  int min_reps = 10;         // per side before the first look
  int step = 4;              // per side between looks (whole ABBA blocks)
  int max_reps = 15;         // the cap per side
  int workloads = 1;         // the measured workloads Holm will correct across
  double alpha = 0.05;       // the family's level, as the verdicts use
  double equivalence = 0.01; // "the same" when the CI lies within 1 +- this
  std::uint64_t seed = 1;    // the bootstrap's
  // The number of looks this rule can take, min_reps..max_reps (at least 1).
  int looks() const;
};

enum class stop_reason { differs, equivalent, cap };
const char *stop_name(stop_reason r);

struct sequential_look {
  bool stop = false;
  stop_reason reason = stop_reason::cap;
  double p = 1;
  ratio_ci ci; // at alpha / looks for "differs", 95 % for "equivalent"
};

// The decision after the samples so far (equal counts per side; fewer than min_reps: no stop).
sequential_look look_at(const std::vector<double> &default_ms, const std::vector<double> &tuned_ms,
                        const sequential_rule &rule);

// Runs `run(tuned)` (one timed repetition, ms) in ABBA order until the rule stops.
struct sequential_samples {
  std::vector<double> default_ms, tuned_ms;
  stop_reason reason = stop_reason::cap;
  std::string line() const; // e.g. "differs after 10 of 15 pairs"
  int cap = 0;
};
sequential_samples run_sequential(const std::function<double(bool)> &run,
                                  const sequential_rule &rule);

} // namespace gpuprobe::analysis
