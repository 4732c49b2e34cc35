#include "analysis/models.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <cmath>

namespace gpuprobe::analysis {

namespace {

double lanes(double n) { return std::min(n, 32.0); }

// sum_{k>=0} [1 - (1 - x^k)^L] for x = q^w = exp(w * log q), by inclusion-exclusion:
// sum_{j=1}^{L} (-1)^{j+1} C(L, j) / (1 - x^j). Long double keeps the cancellation small
// (terms up to C(32,16)/(1-x) ~ 1e16 against a 1e-19 unit roundoff).
double max_geometric_bound(double log_q, int w, int L) {
  long double sum = 0, binom = 1;
  for (int j = 1; j <= L; ++j) {
    binom = binom * (L - j + 1) / j;
    const long double one_minus = -std::expm1l((long double)w * j * (long double)log_q);
    sum += (j % 2 ? 1 : -1) * binom / one_minus;
  }
  return double(sum);
}

}  // namespace

double queue_tas(double n) { return (n + 1) / 2; }

double queue_was(double n) {
  const double L = lanes(n);
  double s = 0;
  for (double k = 0; k < n; ++k) s += 1 - std::pow(k / n, L);
  return s;
}

double rw_tas(double T, double A, double N) {
  long double s = 0;
  for (double j = 0; j < N; ++j) s += 1.0L / (A - j);
  return double((long double)T / N * s);
}

double rw_was_bound(double T, double A, double N) {
  return max_geometric_bound(std::log1p(-(A - N) / T), 1, int(lanes(N)));
}

double rw_bm_tas(double T, double A, double N, int w) {
  long double s = 0;
  for (double j = 0; j < N; ++j) s += 1.0L / -std::expm1l((long double)w * std::log1pl(-(long double)(A - j) / T));
  return double(s / N);
}

double rw_bm_was_bound(double T, double A, double N, int w) {
  return max_geometric_bound(std::log1p(-(A - N) / T), w, int(lanes(N)));
}

double crw_tas(double T, double A, double N, double M) { return 1 + (M - 1) / (A + M - 1) * rw_tas(T, A, N); }

void check_model_args(const std::string& model, double T, double A, double N) {
  if (!(T > 0) || !(A > 0) || !(N > 0)) throw error("theory: --pages, --free and --threads must be positive");
  if (A > T) throw error("theory: --free (" + std::to_string((long long)A) + ") exceeds --pages (" + std::to_string((long long)T) + ")");
  if (model != "queue" && N >= A)
    throw error("theory: model " + model + " needs --threads < --free (N = " + std::to_string((long long)N) + ", A = " +
                std::to_string((long long)A) + "): the bound diverges at N = A");
}

}  // namespace gpuprobe::analysis
