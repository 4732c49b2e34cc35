#include "analysis/significance.hpp"

#include "common/error.hpp"
#include "common/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace gpuprobe::analysis {

ratio_ci bootstrap_ratio_ci(const std::vector<double> &a, const std::vector<double> &b,
                            double alpha, unsigned resamples, std::uint64_t seed) {
  if (a.empty() || b.empty())
    throw error("bootstrap: empty sample");
  if (resamples < 100)
    throw error("bootstrap: too few resamples");
  std::mt19937_64 rng(seed);
  auto ratios = bootstrap_median_ratios(a, b, resamples, rng);
  std::sort(ratios.begin(), ratios.end());
  const auto q = [&](double p) {
    return ratios[std::min<std::size_t>(resamples - 1, std::size_t(p * (resamples - 1) + 0.5))];
  };
  return {median(b) / median(a), q(alpha / 2), q(1 - alpha / 2)};
}

mann_whitney mann_whitney_u(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.empty() || b.empty())
    throw error("Mann-Whitney: empty sample");
  const std::size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
  std::vector<std::pair<double, int>> all;
  for (double x : a)
    all.emplace_back(x, 0);
  for (double x : b)
    all.emplace_back(x, 1);
  std::sort(all.begin(), all.end(), [](const auto &l, const auto &r) { return l.first < r.first; });
  double rank_a = 0, ties = 0; // midranks; ties: sum of t^3 - t
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && all[j].first == all[i].first)
      ++j;
    const double mid = 0.5 * double(i + 1 + j), t = double(j - i);
    for (std::size_t k = i; k < j; ++k)
      if (all[k].second == 0)
        rank_a += mid;
    ties += t * t * t - t;
    i = j;
  }
  const double u = rank_a - double(n1) * double(n1 + 1) / 2;
  const double mu = double(n1) * double(n2) / 2;
  const double var =
      double(n1) * double(n2) / 12 * (double(n + 1) - ties / (double(n) * double(n - 1)));
  if (var <= 0)
    return {u, 1.0};
  const double z = std::max(0.0, std::fabs(u - mu) - 0.5) / std::sqrt(var); // continuity correction
  return {u, std::min(1.0, std::erfc(z / std::sqrt(2.0)))};
}

std::vector<double> holm(const std::vector<double> &p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> idx(m);
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t l, std::size_t r) { return p[l] < p[r]; });
  std::vector<double> adj(m);
  double running = 0;
  for (std::size_t k = 0; k < m; ++k) {
    running = std::max(running, std::min(1.0, double(m - k) * p[idx[k]]));
    adj[idx[k]] = running;
  }
  return adj;
}

std::string verdict(const ratio_ci &ci, double p_adjusted, double alpha) {
  if (p_adjusted < alpha && ci.high < 1)
    return "faster";
  if (p_adjusted < alpha && ci.low > 1)
    return "slower";
  return "no significant difference";
}

double penalty_bar(double a, double b, double rel, double abs_cycles) {
  return std::max(rel * std::max(std::fabs(a), std::fabs(b)), abs_cycles);
}

} // namespace gpuprobe::analysis
