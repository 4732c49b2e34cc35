#include "analysis/fit.hpp"

#include <algorithm>
#include <cstddef>

namespace gpuprobe::analysis {

line_fit fit_line(const std::vector<double> &x, const std::vector<double> &y) {
  line_fit f;
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2)
    return f;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i)
    mx += x[i], my += y[i];
  mx /= double(n);
  my /= double(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0)
    return f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
  f.points = int(n);
  return f;
}

std::size_t contended_from(const std::vector<double> &y, double rise) {
  if (y.empty())
    return 0;
  std::size_t from = y.size();
  for (std::size_t i = y.size(); i-- > 0;) {
    if (y[i] >= rise * y[0])
      from = i;
    else
      break;
  }
  return from;
}

} // namespace gpuprobe::analysis
