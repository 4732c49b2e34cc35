#pragma once
// Least-squares line and the contended range of a latency-vs-threads curve.
#include <vector>

namespace gpuprobe::analysis {

struct line_fit {
  double slope = 0, intercept = 0, r2 = 0;
  int points = 0;
};

// Ordinary least squares of y on x (at least 2 points with distinct x, else points = 0).
line_fit fit_line(const std::vector<double> &x, const std::vector<double> &y);

// First index from which the curve stays contended: y >= rise * y[0] at that point and every
// later one. Returns y.size() when no such point exists.
std::size_t contended_from(const std::vector<double> &y, double rise = 1.5);

} // namespace gpuprobe::analysis
