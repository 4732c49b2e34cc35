// validate's sequential stopping rule on synthetic ABBA pairs: a true 0.9, 1.0 and 1.02 each stop
// with the verdict a fixed design gives, within the cap; noise that hides the answer runs to the
// cap; a drift over time does not make two equal configurations differ.
#include "test_util.hpp"
#include "analysis/sequential.hpp"
#include "analysis/validation.hpp"
#include "model/validation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

using namespace gpuprobe::analysis;

namespace {

// One workload whose tuned configuration takes `ratio` x the default's 2 ms, with lognormal
// noise of `sigma` and a drift of `drift` per call (both configurations alike).
struct synthetic {
  double ratio, sigma, drift = 0;
  std::mt19937_64 rng;
  int calls = 0;
  synthetic(double r, double s, std::uint64_t seed, double d = 0)
      : ratio(r), sigma(s), drift(d), rng(seed) {}
  double operator()(bool tuned) {
    std::normal_distribution<double> noise(0.0, sigma);
    const double t = 2.0 * (tuned ? ratio : 1.0) * (1 + drift * calls++);
    return t * std::exp(noise(rng));
  }
};

constexpr int kWorkloads = 24; // validate's measured rows on a Hopper GPU

sequential_rule rule_for(std::uint64_t seed) {
  sequential_rule r;
  r.workloads = kWorkloads;
  r.seed = seed;
  return r; // min 10, step 4, cap 15: looks at 10, 14, 15
}

struct outcome {
  sequential_samples s;
  std::string verdict;
};

// kWorkloads rows of which `ratios` are measured by the rule, the verdicts as validate makes them.
std::vector<outcome> validate_synthetic(const std::vector<double> &ratios, double sigma,
                                        std::uint64_t seed, double drift = 0) {
  std::vector<outcome> out;
  std::vector<workload_samples> w;
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    synthetic g(ratios[i], sigma, seed * 1000 + i, drift);
    auto s = run_sequential([&](bool tuned) { return g(tuned); }, rule_for(seed));
    w.push_back({{"w" + std::to_string(i), "vmm", "a", "b", true}, s.default_ms, s.tuned_ms});
    out.push_back({std::move(s), ""});
  }
  const auto rows = validation_rows(w, 0.05, seed);
  for (std::size_t i = 0; i < rows.size(); ++i)
    out[i].verdict = rows[i].verdict;
  return out;
}

std::vector<double> mix() { // 24 workloads: 8 each of a true 0.9, 1.0 and 1.02
  std::vector<double> r;
  for (int i = 0; i < 8; ++i)
    r.insert(r.end(), {0.9, 1.0, 1.02});
  return r;
}

} // namespace

TEST(Sequential, LooksAtMinThenEveryStepThenTheCap) {
  sequential_rule r;
  EXPECT_EQ(r.looks(), 3); // 10, 14, 15
  r.max_reps = 14;
  EXPECT_EQ(r.looks(), 2); // 10, 14
  r.min_reps = 20;
  EXPECT_EQ(r.looks(), 1); // the cap only
}

TEST(Sequential, TrueRatiosStopWithTheRightVerdictWithinTheCap) {
  int early[3] = {0, 0, 0}, total = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const auto out = validate_synthetic(mix(), 0.005, seed);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto &o = out[i];
      SCOPED_TRACE("seed " + std::to_string(seed) + " row " + std::to_string(i) + ": " +
                   o.s.line() + ", " + o.verdict);
      ASSERT_LE(o.s.default_ms.size(), 15u);
      ASSERT_EQ(o.s.default_ms.size(), o.s.tuned_ms.size());
      switch (i % 3) {
      case 0:
        EXPECT_EQ(o.verdict, "faster");
        EXPECT_EQ(o.s.reason, stop_reason::differs);
        EXPECT_EQ(o.s.default_ms.size(), 10u); // the first look: 10 % apart is plain at once
        break;
      case 1:
        EXPECT_EQ(o.verdict, "no significant difference");
        break;
      default:
        EXPECT_EQ(o.verdict, "slower");
        EXPECT_EQ(o.s.reason, stop_reason::differs);
        break;
      }
      early[i % 3] += o.s.default_ms.size() < 15;
    }
    total += 8;
  }
  // The rule saves time where the answer is known: most true-1.0 rows stop as equivalent, most
  // 1.02 rows before the cap.
  EXPECT_EQ(early[0], total);
  EXPECT_GE(early[1], total * 3 / 4);
  EXPECT_GE(early[2], total * 3 / 4);
}

TEST(Sequential, NoiseThatHidesTheAnswerRunsToTheCap) {
  synthetic g(1.0, 0.05, 7);
  const auto s = run_sequential([&](bool tuned) { return g(tuned); }, rule_for(7));
  EXPECT_EQ(s.reason, stop_reason::cap);
  EXPECT_EQ(s.default_ms.size(), 15u);
  EXPECT_EQ(s.line(), "cap after 15 of 15 pairs");
}

TEST(Sequential, ADriftDoesNotMakeEqualConfigurationsDiffer) {
  // 0.1 % slower every call: 3 % over a workload, three times the noise; ABBA cancels it.
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto out = validate_synthetic(std::vector<double>(kWorkloads, 1.0), 0.003, seed, 0.001);
    for (const auto &o : out) {
      EXPECT_EQ(o.verdict, "no significant difference") << o.s.line();
      EXPECT_NE(o.s.reason, stop_reason::differs) << o.s.line();
    }
  }
}

TEST(Sequential, FewerThanMinRepsNeverStops) {
  const std::vector<double> a(5, 2.0), b(5, 1.0);
  EXPECT_FALSE(look_at(a, b, rule_for(1)).stop);
}

// The committed full runs (an H100's kept for the tests, the H200 example), replayed: each workload's
// recorded samples are fed to the rule in the order they were measured, and the verdicts on what
// the rule keeps are the verdicts of all 15 pairs. The pairs saved are printed.
TEST(Sequential, TheCommittedRunsKeepTheirVerdicts) {
  std::size_t saved = 0;
  for (const char *unit : {"nvidia-h100-80gb-hbm3-bba9cd54", "nvidia-h200-bc72dbee"}) {
    const auto v = gpuprobe::model::read_validation(
        gpuprobe::test::committed_run(unit) + "/validation.json");
    sequential_rule rule;
    rule.workloads = 0;
    for (const auto &r : v.workloads)
      rule.workloads += r.measured;
    std::vector<workload_samples> kept;
    std::size_t pairs = 0, all = 0;
    for (const auto &r : v.workloads) {
      workload_samples w{r, {}, {}}; // the row's workload, pool and configurations
      if (r.measured) {
        const auto &d = *r.default_ms, &t = *r.tuned_ms;
        std::size_t nd = 0, nt = 0; // the recorded samples, in the order they were measured
        rule.max_reps = int(d.size());
        const auto s =
            run_sequential([&](bool tuned) { return tuned ? t.at(nt++) : d.at(nd++); }, rule);
        w.default_ms = s.default_ms;
        w.tuned_ms = s.tuned_ms;
        pairs += s.default_ms.size();
        all += d.size();
      }
      kept.push_back(std::move(w));
    }
    const auto rows = validation_rows(kept, 0.05, 1);
    ASSERT_EQ(rows.size(), v.workloads.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
      EXPECT_EQ(rows[i].verdict, v.workloads[i].verdict)
          << unit << " " << rows[i].workload << " on " << rows[i].pool << " after "
          << kept[i].default_ms.size() << " pairs";
    std::printf("%s: %zu of %zu pairs measured (%.0f %%), the same %zu verdicts\n", unit, pairs,
                all, 100.0 * double(pairs) / double(all), rows.size());
    saved += all - pairs;
  }
  EXPECT_GT(saved, 0u) << "the rule saves pairs where the answer is plain";
}
