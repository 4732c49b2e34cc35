#include "analysis/models.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

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

// Sums of up to this many terms are added exactly; larger ones take closed forms or
// Euler-Maclaurin (a few milliseconds for any finite input).
constexpr double k_exact_terms = 1 << 20;

// psi(x) - psi(y) for x >= y > 0 (digamma), without the cancellation of two large logs: both are
// shifted to >= 16 by psi(z) = psi(z + 1) - 1/z, then the asymptotic series is differenced term
// by term (-log1p for the logs).
long double digamma_difference(long double x, long double y) {
  long double shift = 0;
  while (y < 16)
    shift += 1 / x - 1 / y, x += 1, y += 1; // at most 16 steps
  const long double d = x - y;
  const long double logs = -std::log1pl(-d / x);
  const long double inv1 = d / (x * y);                              // 1/y - 1/x
  const long double inv2 = inv1 * (x + y) / (x * y);                 // 1/y^2 - 1/x^2
  const long double inv4 = inv2 * (x * x + y * y) / (x * x * y * y); // 1/y^4 - 1/x^4
  const long double inv6 =
      inv2 * (x * x * x * x + x * x * y * y + y * y * y * y) / (x * x * x * x * y * y * y * y);
  return -shift + logs + inv1 / 2 + inv2 / 12 - inv4 / 120 + inv6 / 252;
}

// sum_{u = lo}^{hi} h(u) over integers, h smooth and decreasing (a sum over free pages left).
// Exact for few terms; else the first terms exactly (where h bends most), the rest by
// Euler-Maclaurin with the integral by Simpson's rule in log u.
template <class H> long double sum_decreasing(H h, long double lo, long double hi) {
  long double s = 0;
  if (hi - lo + 1 <= k_exact_terms) {
    for (long double u = lo; u <= hi; ++u)
      s += h(u);
    return s;
  }
  const long double head = 1 << 16;
  for (long double u = lo; u < lo + head; ++u)
    s += h(u);
  const long double a = lo + head, b = hi;
  const int n = 1 << 14; // Simpson intervals (even)
  const long double ta = std::log(a), tb = std::log(b), dt = (tb - ta) / n;
  long double integral = 0;
  for (int i = 0; i <= n; ++i) {
    const long double u = std::exp(ta + dt * i);
    integral += (i == 0 || i == n ? 1 : (i % 2 ? 4 : 2)) * h(u) * u;
  }
  integral *= dt / 3;
  const long double e = 1e-3L * a; // h' by a central difference (h varies on the scale of u)
  const long double da = (h(a + e) - h(a - e)) / (2 * e), db = (h(b + e) - h(b - e)) / (2 * e);
  return s + integral + (h(a) + h(b)) / 2 + (db - da) / 12;
}

} // namespace

double queue_tas(double n) { return (n + 1) / 2; }

double queue_was(double n) {
  const double L = lanes(n);
  if (n <= k_exact_terms) {
    double s = 0;
    for (double k = 0; k < n; ++k)
      s += 1 - std::pow(k / n, L);
    return s;
  }
  // sum_{k<n} (k/n)^L by Euler-Maclaurin: n/(L+1) - 1/2 + L/(12n) - L(L-1)(L-2)/(720 n^3).
  const double powers =
      n / (L + 1) - 0.5 + L / (12 * n) - L * (L - 1) * (L - 2) / (720 * n * n * n);
  return n - powers;
}

double rw_tas(double T, double A, double N) {
  if (N <= k_exact_terms) {
    long double s = 0;
    for (double j = 0; j < N; ++j)
      s += 1.0L / (A - j);
    return double((long double)T / N * s);
  }
  // H_A - H_{A-N} = psi(A + 1) - psi(A - N + 1).
  return double((long double)T / N *
                digamma_difference((long double)A + 1, (long double)A - N + 1));
}

double rw_was_bound(double T, double A, double N) {
  return max_geometric_bound(std::log1p(-(A - N) / T), 1, int(lanes(N)));
}

double rw_bm_tas(double T, double A, double N, int w) {
  // j = 0..N-1 is u = A - j free pages: u from A - N + 1 to A.
  const auto h = [&](long double u) {
    // u never exceeds T (all pages free); exp(log(u)) may round a hair past it
    return 1.0L / -std::expm1l((long double)w * std::log1pl(-std::min(u, (long double)T) / T));
  };
  return double(sum_decreasing(h, (long double)A - N + 1, (long double)A) / N);
}

double rw_bm_was_bound(double T, double A, double N, int w) {
  return max_geometric_bound(std::log1p(-(A - N) / T), w, int(lanes(N)));
}

double crw_tas_at(double T, double A, double N, double p) { return 1 + p * rw_tas(T, A, N); }
double crw_next_used(double A, double M) { return (M - 1) / (A + M - 1); }
double crw_tas(double T, double A, double N, double M) {
  return crw_tas_at(T, A, N, crw_next_used(A, M));
}

namespace {
std::string whole(double v) { // a count as a person writes it, at any size
  char b[64];
  std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}
} // namespace

void check_model_args(const std::string &model, double T, double A, double N) {
  if (!std::isfinite(T) || !std::isfinite(A) || !std::isfinite(N))
    throw error("theory: --pages, --free and --threads must be finite numbers");
  if (!(T > 0) || !(A > 0) || !(N > 0))
    throw error("theory: --pages, --free and --threads must be positive");
  for (const auto &[name, v] : {std::pair{"--pages", T}, {"--free", A}, {"--threads", N}}) {
    if (v != std::floor(v))
      throw error(std::string("theory: ") + name +
                  " counts pages or threads: a whole number, not " + std::to_string(v));
  }
  if (A > T)
    throw error("theory: --free (" + whole(A) + ") exceeds --pages (" + whole(T) + ")");
  if (model != "queue" && N >= A)
    throw error("theory: model " + model + " needs --threads < --free (N = " + whole(N) +
                ", A = " + whole(A) + "): the bound diverges at N = A");
}

} // namespace gpuprobe::analysis
