#include "analysis/models.hpp"

#include <algorithm>
#include <cmath>

namespace gpuprobe::analysis {

double queue_tas(double n) { return (n + 1) / 2; }

double queue_was(double n) {
  const double lanes = std::min(n, 32.0);
  double s = 0;
  for (double k = 0; k < n; ++k) s += 1 - std::pow(k / n, lanes);
  return s;
}

}  // namespace gpuprobe::analysis
