#pragma once
// Order statistics every stage uses (probes' per-hop distributions, analysis, validate).
#include <cstddef>
#include <random>
#include <vector>

namespace gpuprobe {

double median(std::vector<double> v);
// The median of v[from, to).
double median(const std::vector<double> &v, std::size_t from, std::size_t to);
double quantile(std::vector<double> v,
                double q); // linear interpolation, q in [0,1]; NaN when empty

// `n` bootstrap resamples of the ratio of medians: each draws x' from x and then y' from y, with
// replacement, through `rng`, and gives median(y') / median(x'), in the order drawn.
template <class Rng>
std::vector<double> bootstrap_median_ratios(const std::vector<double> &x,
                                            const std::vector<double> &y, std::size_t n, Rng &rng) {
  std::vector<double> ratios(n), rx(x.size()), ry(y.size());
  std::uniform_int_distribution<std::size_t> px(0, x.size() - 1), py(0, y.size() - 1);
  for (auto &ratio : ratios) {
    for (auto &v : rx)
      v = x[px(rng)];
    for (auto &v : ry)
      v = y[py(rng)];
    ratio = median(ry) / median(rx);
  }
  return ratios;
}

} // namespace gpuprobe
