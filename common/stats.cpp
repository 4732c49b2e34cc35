#include "common/stats.hpp"

#include <algorithm>
#include <cmath>

namespace gpuprobe {

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }
double median(const std::vector<double> &v, std::size_t from, std::size_t to) {
  return median(std::vector<double>(v.begin() + long(from), v.begin() + long(to)));
}

double quantile(std::vector<double> v, double q) {
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

} // namespace gpuprobe
