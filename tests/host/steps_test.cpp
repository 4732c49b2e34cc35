// Boundary detection on generated curves: noise, missing cells, several levels, small penalties.
#include "common/steps.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using gpuprobe::detect_steps;

namespace {

struct curve {
  std::vector<double> x, y;
};

// Levels: (boundary footprint, rise) pairs; value = base + sum of rises whose boundary < x.
curve make_curve(const std::vector<std::pair<double, double>> &rises, double base, int n,
                 double sigma, unsigned seed, int drop_every = 0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  curve c;
  for (int i = 1; i <= n; ++i) {
    if (drop_every && i % drop_every == 0)
      continue; // missing cell
    const double x = i;
    double v = base;
    for (const auto &[b, r] : rises)
      if (x > b)
        v += r;
    c.x.push_back(x);
    c.y.push_back(v + noise(rng));
  }
  return c;
}

} // namespace

TEST(Steps, FindsOneStepAtTheRightPlace) {
  const auto c = make_curve({{40, 50}}, 300, 100, 1.0, 1);
  const auto s = detect_steps(c.x, c.y);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].x_lo, 40);
  EXPECT_EQ(s[0].x_hi, 41);
  EXPECT_NEAR(s[0].jump, 50, 2.0);
  EXPECT_GT(s[0].snr, 20);
}

TEST(Steps, FlatNoisyCurveHasNoStep) {
  for (unsigned seed = 1; seed <= 50; ++seed) {
    const auto c = make_curve({}, 270, 200, 3.0, seed);
    EXPECT_TRUE(detect_steps(c.x, c.y).empty()) << "seed " << seed;
  }
}

TEST(Steps, SeveralLevelsWithNoiseAndMissingCells) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto c = make_curve({{30, 20}, {90, 60}, {150, 120}}, 250, 220, 1.5, seed, 7);
    const auto s = detect_steps(c.x, c.y);
    ASSERT_EQ(s.size(), 3u) << "seed " << seed;
    EXPECT_NEAR(s[0].x_lo, 30, 1.01);
    EXPECT_NEAR(s[1].x_lo, 90, 1.01);
    EXPECT_NEAR(s[2].x_lo, 150, 1.01);
    EXPECT_NEAR(s[1].jump, 60, 5);
  }
}

TEST(Steps, PenaltyOfAFewCyclesOnAQuietCurve) {
  // A 3-cycle miss penalty with 0.3-cycle noise (10 sigmas) must be found.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto c = make_curve({{64, 3}}, 240, 128, 0.3, seed);
    const auto s = detect_steps(c.x, c.y);
    ASSERT_EQ(s.size(), 1u) << "seed " << seed;
    EXPECT_NEAR(s[0].x_lo, 64, 1.01);
    EXPECT_NEAR(s[0].jump, 3, 0.6);
  }
}

TEST(Steps, PenaltyInsideTheNoiseIsNotReported) {
  // The same 3 cycles under 3-cycle noise are not a detectable level.
  int found = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto c = make_curve({{64, 3}}, 240, 128, 3.0, seed);
    found += !detect_steps(c.x, c.y).empty();
  }
  EXPECT_LE(found, 1);
}

TEST(Steps, BumpThatComesBackDownIsNotALevel) {
  curve c = make_curve({{50, 15}, {80, -15}}, 270, 160, 0.5, 3);
  EXPECT_TRUE(detect_steps(c.x, c.y).empty());
}

TEST(Steps, DipAndRecoveryIsNotASecondLevel) {
  curve c = make_curve({{40, 50}, {100, -12}, {106, 12}}, 300, 160, 0.5, 4);
  const auto s = detect_steps(c.x, c.y);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].x_lo, 40);
}

TEST(Steps, RampAfterTheBoundaryKeepsTheOnset) {
  // K80 L3 shape: a small step, then a long ramp; the onset is the boundary.
  curve c;
  for (int i = 1; i <= 300; ++i) {
    c.x.push_back(i);
    c.y.push_back(i <= 100 ? 277.0 : 284.0 + 0.5 * (i - 100));
  }
  const auto s = detect_steps(c.x, c.y);
  ASSERT_GE(s.size(), 1u);
  EXPECT_EQ(s[0].x_lo, 100);
}

TEST(Steps, TooFewPointsGiveNothing) {
  EXPECT_TRUE(detect_steps({1, 2, 3}, {1, 100, 100}).empty());
  EXPECT_TRUE(detect_steps({}, {}).empty());
}

// A coarse, integer-valued curve (4 points per octave, as --quick sweeps) with the aliased chase's
// three steps: the big ones must not count as noise and hide the 10-cycle one (they did while
// the fallback noise was half the mean absolute difference: H200 --quick read L1 at 2 GiB).
TEST(Steps, BigStepsDoNotHideASmallOneOnACoarseCurve) {
  curve c;
  for (int i = 0; i < 60; ++i) {
    const double fp = std::pow(2.0, i / 4.0); // 1 .. 2^14.75
    double v = 301.0 + (fp > 16 ? 10 : 0) + (fp > 4300 ? 96 : 0) + (fp > 17400 ? 434 : 0);
    if (i % 7 == 3)
      v += 1.0; // the chase's rare one-cycle jitter
    c.x.push_back(fp);
    c.y.push_back(v);
  }
  EXPECT_LT(gpuprobe::curve_noise(c.y, 0.3), 1.0);
  const auto s = detect_steps(c.x, c.y);
  ASSERT_GE(s.size(), 2u);
  EXPECT_NEAR(s[0].x_lo, 16, 3);
  EXPECT_NEAR(s[0].jump, 10, 1.5);
  EXPECT_NEAR(s[1].x_lo, 4300, 700);
}

// Jitter that moves single points is noise; the estimate follows it on a quantized curve.
TEST(Steps, NoiseFollowsTheJitterOfSinglePoints) {
  std::vector<double> y;
  for (int i = 0; i < 100; ++i)
    y.push_back(300.0 + (i % 10 == 1 ? 6.0 : 0.0)); // every tenth point 6 cycles high: MAD 0
  const double n = gpuprobe::curve_noise(y, 0.3);
  EXPECT_GT(n, 0.45);
  EXPECT_LT(n, 3.0);
}

// A small creep just below a large step does not move the boundary by more than it weighs.
TEST(Steps, CreepBelowALargeStepKeepsItsBoundary) {
  curve c;
  for (int i = 1; i <= 120; ++i) {
    c.x.push_back(i);
    double v = 335;
    if (i > 75 && i <= 80)
      v += i - 75; // +1 .. +5 cycles, as the L2 TLB's last footprints before it misses
    if (i > 80)
      v = 489;
    c.y.push_back(v);
  }
  const auto s = detect_steps(c.x, c.y);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].x_lo, 80);
}

// Issue 48 (r96, H100 GPU-51c0adbc): the medians of a sweep are whole cycles, and on a quiet curve
// they wiggle by one. L1's rise is 10 cycles, so a tenth of it is one cycle: two points at +1
// before the step joined it as a "creep", the rise began 2 points early, its stride no longer
// matched the other strides' hop count, and one quick run of three read L1's page as 32 MiB (and
// tuned 132 regions). Generated: 2,000 curves of whole-cycle medians, a rise of 8-14 cycles at a
// random point, each point +1 with probability 0.1-0.5: the onset is the step's, every time.
TEST(Steps, AOneCycleWiggleOfWholeCycleMediansIsNotACreep) {
  std::mt19937 rng(4896);
  int wrong = 0, missed = 0;
  const int cases = 2000;
  for (int c = 0; c < cases; ++c) {
    const double base = 300 + double(rng() % 50), rise = 8 + double(rng() % 7);
    const int n = 40 + int(rng() % 60), b = 10 + int(rng() % unsigned(n - 20));
    const double p = 0.1 + 0.1 * double(rng() % 5);
    std::uniform_real_distribution<double> u(0, 1);
    curve cv;
    for (int i = 1; i <= n; ++i) {
      cv.x.push_back(i);
      const double wiggle = u(rng) < p ? 1 : 0;
      cv.y.push_back(base + (i > b ? rise : 0) + wiggle);
    }
    const auto s = detect_steps(cv.x, cv.y);
    if (s.empty()) {
      ++missed;
      continue;
    }
    wrong += s.size() != 1 || s[0].x_lo != b;
  }
  std::printf("%d curves: %d with the onset elsewhere, %d with no step\n", cases, wrong, missed);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(missed, 0);
}
