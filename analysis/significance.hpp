#pragma once
// The statistics of `gpuprobe validate`: medians, a percentile-bootstrap confidence interval of
// the ratio of medians, the Mann-Whitney U test (normal approximation with tie and continuity
// corrections, as scipy's "asymptotic" method), Holm's step-down correction, and the verdict.
#include "common/stats.hpp" // median

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::analysis {

// The smallest miss-penalty difference between two values that may read DIFFERENT: the larger of
// `rel` x the larger value and `abs_cycles`. compare (its defaults: compare_thresholds), the
// fleet's outlier rule and tlb-per-sm's SMs apart use it (one bar).
inline constexpr double k_penalty_rel = 0.01;
inline constexpr double k_penalty_abs_cycles = 0.5;
double penalty_bar(double a, double b, double rel = k_penalty_rel,
                   double abs_cycles = k_penalty_abs_cycles);

struct ratio_ci {
  double ratio = 0; // median(b) / median(a)
  double low = 0, high = 0;
};
// Resamples a and b independently `resamples` times (seeded); the [alpha/2, 1 - alpha/2] quantiles.
ratio_ci bootstrap_ratio_ci(const std::vector<double> &a, const std::vector<double> &b,
                            double alpha = 0.05, unsigned resamples = 10000,
                            std::uint64_t seed = 1);

struct mann_whitney {
  double u = 0; // U of sample a
  double p = 1; // two-sided
};
mann_whitney mann_whitney_u(const std::vector<double> &a, const std::vector<double> &b);

// Holm-adjusted p-values, in the input order (monotone, capped at 1).
std::vector<double> holm(const std::vector<double> &p);

// "faster" / "slower" (tuned vs default) when the adjusted p < alpha and the CI excludes 1,
// else "no significant difference". ratio = tuned / default time.
std::string verdict(const ratio_ci &ci, double p_adjusted, double alpha = 0.05);

} // namespace gpuprobe::analysis
