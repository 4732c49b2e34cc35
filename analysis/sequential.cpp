#include "analysis/sequential.hpp"

#include <algorithm>

namespace gpuprobe::analysis {

int sequential_rule::looks() const {
  if (min_reps >= max_reps)
    return 1;
  const int s = std::max(step, 1);
  const int interim = (max_reps - min_reps - 1) / s + 1; // min_reps, +s, ... below max_reps
  return interim + 1;                                    // and the cap
}

const char *stop_name(stop_reason r) {
  switch (r) {
  case stop_reason::differs:
    return "differs";
  case stop_reason::equivalent:
    return "equivalent";
  case stop_reason::cap:
    break;
  }
  return "cap";
}

sequential_look look_at(const std::vector<double> &default_ms, const std::vector<double> &tuned_ms,
                        const sequential_rule &rule) {
  sequential_look l;
  const int n = int(std::min(default_ms.size(), tuned_ms.size()));
  if (n < std::min(rule.min_reps, rule.max_reps) || n < 2)
    return l;
  const int looks = rule.looks();
  l.p = mann_whitney_u(default_ms, tuned_ms).p;
  // Holm multiplies a p by at most the number of measured workloads; the looks by Bonferroni.
  const double bound = l.p * std::max(rule.workloads, 1) * looks;
  l.ci = bootstrap_ratio_ci(default_ms, tuned_ms, rule.alpha / looks, 4000, rule.seed);
  if (bound < rule.alpha && (l.ci.low > 1 || l.ci.high < 1)) {
    l.stop = true;
    l.reason = stop_reason::differs;
    return l;
  }
  const ratio_ci ci95 = bootstrap_ratio_ci(default_ms, tuned_ms, rule.alpha, 4000, rule.seed);
  if (ci95.low >= 1 - rule.equivalence && ci95.high <= 1 + rule.equivalence) {
    l.stop = true;
    l.reason = stop_reason::equivalent;
    l.ci = ci95;
    return l;
  }
  if (n >= rule.max_reps) {
    l.stop = true;
    l.reason = stop_reason::cap;
  }
  return l;
}

std::string sequential_samples::line() const {
  return std::string(stop_name(reason)) + " after " + std::to_string(default_ms.size()) + " of " +
         std::to_string(cap) + " pairs";
}

sequential_samples run_sequential(const std::function<double(bool)> &run,
                                  const sequential_rule &rule) {
  sequential_samples s;
  s.cap = rule.max_reps;
  const int step = std::max(rule.step, 1);
  for (int r = 0; r < rule.max_reps; ++r) {
    const bool tuned_first = r % 4 == 1 || r % 4 == 2; // ABBA: drifts cancel
    for (bool tuned : {tuned_first, !tuned_first})
      (tuned ? s.tuned_ms : s.default_ms).push_back(run(tuned));
    const int n = r + 1;
    const bool at_look =
        n == rule.max_reps || (n >= rule.min_reps && (n - rule.min_reps) % step == 0);
    if (!at_look)
      continue;
    const auto l = look_at(s.default_ms, s.tuned_ms, rule);
    if (l.stop) {
      s.reason = l.reason;
      return s;
    }
  }
  return s;
}

} // namespace gpuprobe::analysis
