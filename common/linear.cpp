#include "common/linear.hpp"

#include <cmath>
#include <utility>

namespace gpuprobe {

bool solve_linear(std::vector<double> A, std::vector<double> b, std::size_t K,
                  std::vector<double> &x) {
  for (std::size_t i = 0; i < K; ++i)
    A[i * K + i] += 1e-12 * (1 + A[i * K + i]);
  for (std::size_t i = 0; i < K; ++i) {
    std::size_t piv = i;
    for (std::size_t r = i + 1; r < K; ++r)
      if (std::fabs(A[r * K + i]) > std::fabs(A[piv * K + i]))
        piv = r;
    if (std::fabs(A[piv * K + i]) < 1e-300)
      return false;
    for (std::size_t c = 0; c < K; ++c)
      std::swap(A[i * K + c], A[piv * K + c]);
    std::swap(b[i], b[piv]);
    for (std::size_t r = i + 1; r < K; ++r) {
      const double f = A[r * K + i] / A[i * K + i];
      for (std::size_t c = i; c < K; ++c)
        A[r * K + c] -= f * A[i * K + c];
      b[r] -= f * b[i];
    }
  }
  x.assign(K, 0);
  for (std::size_t i = K; i-- > 0;) {
    double s = b[i];
    for (std::size_t c = i + 1; c < K; ++c)
      s -= A[i * K + c] * x[c];
    x[i] = s / A[i * K + i];
  }
  return true;
}

} // namespace gpuprobe
