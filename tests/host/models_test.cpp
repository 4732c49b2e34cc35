// The RW paper's models: small cases by hand, the closed-form bound against brute force, the
// paper's theorems, and `gpuprobe theory` from the command line.
#include "analysis/models.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include <cmath>

using namespace gpuprobe::analysis;

namespace {
double brute_was(double T, double A, double N, int w) {
  const double q = std::pow((T - A + N) / T, w), L = std::min(N, 32.0);
  double s = 0;
  for (int k = 0; k < 2000000; ++k) {
    const double t = 1 - std::pow(1 - std::pow(q, k), L);
    s += t;
    if (k > 10 && t < 1e-16)
      break;
  }
  return s;
}
} // namespace

TEST(Models, RwTasSmallCases) {
  EXPECT_DOUBLE_EQ(rw_tas(10, 10, 1), 1.0); // all free: one step
  EXPECT_DOUBLE_EQ(rw_tas(4, 2, 1), 2.0);   // T/A
  EXPECT_NEAR(rw_tas(4, 2, 2), 3.0, 1e-12); // (4/2)(1/2 + 1/1)
  // Eq. 3's approximation is close for large A - N.
  EXPECT_NEAR(rw_tas(1 << 20, 524288, 5000),
              (1 << 20) / 5000.0 * std::log(524288.0 / (524288 - 5000)), 1e-3);
}

TEST(Models, WasBoundsMatchBruteForceSums) {
  EXPECT_NEAR(rw_was_bound(4, 2, 1), 4.0, 1e-9); // L = 1: 1 / (1 - q) = T / (A - N)
  for (auto [T, A, N] :
       {std::tuple{1000.0, 100.0, 50.0}, {1 << 20, 10486.0, 5000.0}, {1 << 20, 524288.0, 1000.0}}) {
    EXPECT_NEAR(rw_was_bound(T, A, N), brute_was(T, A, N, 1), 1e-6 * brute_was(T, A, N, 1))
        << T << " " << A << " " << N;
    EXPECT_NEAR(rw_bm_was_bound(T, A, N, 32), brute_was(T, A, N, 32),
                1e-6 * brute_was(T, A, N, 32));
    EXPECT_GT(rw_was_bound(T, A, N), rw_tas(T, A, N)); // the warp's max exceeds the mean
  }
}

TEST(Models, RwBmWithOneBitWordsIsRw) {
  EXPECT_NEAR(rw_bm_tas(1 << 20, 10486, 5000, 1), rw_tas(1 << 20, 10486, 5000), 1e-6);
}

TEST(Models, TheoremTwoRatioApproachesWordBits) {
  // 0.5 % free, N close to A: TAS_RW / TAS_RWBM -> w (Theorem 2: U' -> U/w + (w-1)/(2w)).
  const double T = 1 << 20, A = 5243, N = 5000;
  for (int w : {32, 64}) {
    const double U = rw_tas(T, A, N), Ub = rw_bm_tas(T, A, N, w);
    EXPECT_NEAR(Ub, U / w + (w - 1.0) / (2 * w), 0.1 * Ub) << w;
    EXPECT_NEAR(U / Ub, w, 0.2 * w) << w;
  }
}

TEST(Models, CrwAndQueue) {
  EXPECT_DOUBLE_EQ(crw_tas(1 << 20, 10000, 100, 1), 1.0); // one cluster: the next page is free
  EXPECT_NEAR(crw_tas(1 << 20, 10000, 100, 10000), 1 + 9999.0 / 19999 * rw_tas(1 << 20, 10000, 100),
              1e-9);
  EXPECT_DOUBLE_EQ(queue_tas(5), 3);
}

TEST(Models, ArgumentChecks) {
  EXPECT_THROW(check_model_args("rw", 100, 10, 10), gpuprobe::error);  // N = A
  EXPECT_THROW(check_model_args("crw", 100, 10, 20), gpuprobe::error); // N > A
  EXPECT_THROW(check_model_args("rw", 100, 200, 10), gpuprobe::error); // A > T
  EXPECT_THROW(check_model_args("rw", 0, 10, 1), gpuprobe::error);
  EXPECT_THROW(check_model_args("queue", 100, 10, -1), gpuprobe::error);
  EXPECT_NO_THROW(check_model_args("queue", 100, 10, 50)); // a queue has no such bound
}

TEST(CliTheory, PrintsOneJsonObjectAndRejectsBadArguments) {
  auto r = gpuprobe::test::run_gpuprobe(
      "theory --model rw-bm --pages 1048576 --free 10486 --threads 5000 --word-bits 64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "rw-bm");
  EXPECT_NEAR(j["tas"].get<double>(), rw_bm_tas(1048576, 10486, 5000, 64), 1e-9);
  EXPECT_TRUE(j.contains("was"));
  r = gpuprobe::test::run_gpuprobe(
      "theory --model crw --pages 1000 --free 100 --threads 10 --clusters 5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out).contains("was"));
  for (const char *bad : {"--model rw --pages 100 --free 10 --threads 10",
                          "--model rw --pages 100 --free 200 --threads 1",
                          "--model crw --pages 100 --free 50 --threads 1",
                          "--model lifo --pages 100 --free 50 --threads 1",
                          "--model rw --pages -5 --free 50 --threads 1"}) {
    r = gpuprobe::test::run_gpuprobe(std::string("theory ") + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_EQ(r.err.rfind("gpuprobe: error: ", 0), 0u) << bad << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << bad;
  }
}

namespace {
// The exact sums, by brute force (the reference for the closed forms beyond 2^20 terms).
long double exact_rw_tas(double T, double A, double N) {
  long double s = 0;
  for (double j = 0; j < N; ++j)
    s += 1.0L / (A - j);
  return (long double)T / N * s;
}
long double exact_rw_bm_tas(double T, double A, double N, int w) {
  long double s = 0;
  for (double j = 0; j < N; ++j)
    s += 1.0L / -std::expm1l((long double)w * std::log1pl(-(long double)(A - j) / T));
  return s / N;
}
long double exact_queue_was(double n) {
  long double s = 0;
  for (double k = 0; k < n; ++k)
    s += 1 - std::pow((long double)k / n, 32.0L);
  return s;
}
} // namespace

// Past 2^20 terms the models switch from the exact sums to closed forms (digamma differences,
// Euler-Maclaurin): both sides of the switch agree with the brute-force sums.
TEST(Models, LargeInputsMatchTheExactSums) {
  for (double N : {1048577.0, 3e6}) {
    for (double A : {N + 10, 2 * N, 1e9}) {
      const double T = 4 * A;
      EXPECT_NEAR(rw_tas(T, A, N) / double(exact_rw_tas(T, A, N)), 1, 1e-9)
          << "A " << A << " N " << N;
      for (int w : {32, 64})
        EXPECT_NEAR(rw_bm_tas(T, A, N, w) / double(exact_rw_bm_tas(T, A, N, w)), 1, 1e-7)
            << "A " << A << " N " << N << " w " << w;
    }
    EXPECT_NEAR(queue_was(N) / double(exact_queue_was(N)), 1, 1e-12) << N;
  }
}

// Any finite input answers fast (the sums once looped 10^28 times), and non-finite ones are a
// one-line error.
TEST(CliTheory, ExtremeInputsAnswerWithinASecond) {
  using clock = std::chrono::steady_clock;
  for (const char *args : {"--model rw --pages 1e30 --free 1e29 --threads 1e28",
                           "--model queue --pages 1e308 --free 1e308 --threads 1e308",
                           "--model rw-bm --pages 1e30 --free 1e29 --threads 1e28 --word-bits 64",
                           "--model crw --pages 1e30 --free 1e29 --threads 1e28 --clusters 1e6",
                           "--model rw --pages 4e9 --free 2e9 --threads 1e9"}) {
    const auto t0 = clock::now();
    const auto r = gpuprobe::test::run_gpuprobe(std::string("theory ") + args);
    const double secs = std::chrono::duration<double>(clock::now() - t0).count();
    ASSERT_EQ(r.exit_code, 0) << args << ": " << r.err;
    EXPECT_LT(secs, 1.0) << args;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j["tas"].is_number()) << args << ": " << r.out;
    EXPECT_TRUE(std::isfinite(j["tas"].get<double>())) << args;
  }
  // T/N (H_A - H_{A-N}) = 100 ln(10/9) for T = 1e30, A = 1e29, N = 1e28.
  const auto r =
      gpuprobe::test::run_gpuprobe("theory --model rw --pages 1e30 --free 1e29 --threads 1e28");
  EXPECT_NEAR(nlohmann::json::parse(r.out)["tas"].get<double>(), 100 * std::log(10.0 / 9.0), 1e-6);
  for (const char *bad : {"--model rw --pages inf --free 10 --threads 1",
                          "--model queue --pages 100 --free 10 --threads nan"}) {
    const auto b = gpuprobe::test::run_gpuprobe(std::string("theory ") + bad);
    EXPECT_NE(b.exit_code, 0) << bad;
    EXPECT_EQ(b.err.rfind("gpuprobe: error: ", 0), 0u) << bad << ": " << b.err;
  }
}
