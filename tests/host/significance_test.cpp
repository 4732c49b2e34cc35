// validate's statistics against reference values (scipy.stats.mannwhitneyu, method="asymptotic",
// use_continuity=True; Holm by hand) and the properties the verdict relies on.
#include "analysis/significance.hpp"
#include "common/linear.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace gpuprobe::analysis;
using gpuprobe::median;

TEST(Stats, MannWhitneyMatchesScipyAsymptotic) {
  const std::vector<double> a = {1.02, 1.05, 0.99, 1.01, 1.04, 1.03, 1.00, 1.06, 1.02, 1.01};
  const std::vector<double> b = {0.95, 0.97, 0.96, 0.94, 0.98, 0.93, 0.97, 0.96, 0.95, 0.99};
  auto r = mann_whitney_u(a, b);
  EXPECT_DOUBLE_EQ(r.u, 99.5);
  EXPECT_NEAR(r.p, 0.0002052746141274577, 1e-12);
  const std::vector<double> c = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_NEAR(mann_whitney_u(c, c).p, 1.0, 1e-12);
  r = mann_whitney_u({1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, {2, 2, 3, 3, 4, 4, 5, 5, 6, 6}); // ties
  EXPECT_DOUBLE_EQ(r.u, 32.0);
  EXPECT_NEAR(r.p, 0.17886068602453664, 1e-12);
  EXPECT_THROW(mann_whitney_u({}, c), std::exception);
}

TEST(Stats, HolmIsStepDownAndMonotone) {
  const auto adj = holm({0.01, 0.04, 0.03, 0.005});
  EXPECT_DOUBLE_EQ(adj[3], 0.02); // 4 x 0.005
  EXPECT_DOUBLE_EQ(adj[0], 0.03); // 3 x 0.01
  EXPECT_DOUBLE_EQ(adj[2], 0.06); // 2 x 0.03
  EXPECT_DOUBLE_EQ(adj[1], 0.06); // max(1 x 0.04, 0.06)
  EXPECT_DOUBLE_EQ(holm({0.9, 0.8})[0], 1.0);
}

TEST(Stats, BootstrapCiCoversTheRatioAndVerdictNeedsBoth) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> d(10.0, 0.2), t(9.0, 0.2), same(10.0, 0.2);
  std::vector<double> a, b, c;
  for (int i = 0; i < 15; ++i)
    a.push_back(d(rng)), b.push_back(t(rng)), c.push_back(same(rng));
  const auto ci = bootstrap_ratio_ci(a, b);
  EXPECT_NEAR(ci.ratio, 0.9, 0.02);
  EXPECT_LT(ci.low, ci.ratio);
  EXPECT_GT(ci.high, ci.ratio);
  EXPECT_LT(ci.high, 1.0);
  EXPECT_EQ(verdict(ci, mann_whitney_u(a, b).p), "faster");
  const auto ci2 = bootstrap_ratio_ci(a, c);
  EXPECT_EQ(verdict(ci2, mann_whitney_u(a, c).p), "no significant difference")
      << ci2.low << " " << ci2.high;
  EXPECT_EQ(verdict(bootstrap_ratio_ci(b, a), 0.001), "slower");
  EXPECT_EQ(verdict(ci, 0.2), "no significant difference")
      << "a gain inside the noise is not a gain";
  EXPECT_DOUBLE_EQ(median({3, 1, 2, 4}), 2.5);
}

// common/linear: over seeded random systems (1 to 8 unknowns, diagonally dominant) the solution
// reproduces b; a rank-deficient but consistent one is still solved (the ridge), to A x = b.
TEST(Linear, SmallSystemsAreSolvedEvenWhereRankDeficient) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int c = 0; c < 300; ++c) {
    const std::size_t K = 1 + rng() % 8;
    std::vector<double> A(K * K), b(K), x;
    for (std::size_t i = 0; i < K; ++i) {
      b[i] = u(rng) * 100;
      for (std::size_t j = 0; j < K; ++j)
        A[i * K + j] = u(rng) + (i == j ? double(K) + 1 : 0);
    }
    ASSERT_TRUE(gpuprobe::solve_linear(A, b, K, x));
    for (std::size_t i = 0; i < K; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < K; ++j)
        s += A[i * K + j] * x[j];
      EXPECT_NEAR(s, b[i], 1e-6 * (1 + std::fabs(b[i]))) << "case " << c << " row " << i;
    }
  }
  std::vector<double> x;
  ASSERT_TRUE(gpuprobe::solve_linear({1, 1, 1, 1}, {2, 2}, 2, x));
  EXPECT_NEAR(x[0] + x[1], 2, 1e-6);
}
