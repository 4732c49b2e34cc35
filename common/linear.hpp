#pragma once
// A small dense linear system, for the fits that need one (the TLB model's penalties, a logistic's
// Newton steps). Host-only.
#include <cstddef>
#include <vector>

namespace gpuprobe {

// Solves A x = b (A row-major, K x K) by Gaussian elimination with partial pivoting and a ridge of
// 1e-12 x (1 + each diagonal element): a rank-deficient A still gives an x (large where columns
// repeat); false only where a pivot stays below 1e-300.
bool solve_linear(std::vector<double> A, std::vector<double> b, std::size_t K,
                  std::vector<double> &x);

} // namespace gpuprobe
