// Queue model sums and the atomics fit: exact values, and a curve the fit must recover.
#include "analysis/models.hpp"
#include "probes/atomics/fit.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace gpuprobe::analysis;
using namespace gpuprobe::probes;

TEST(QueueModel, TasAndWasExactSums) {
  EXPECT_DOUBLE_EQ(queue_tas(1), 1);
  EXPECT_DOUBLE_EQ(queue_tas(1000), 500.5);
  EXPECT_DOUBLE_EQ(queue_was(1), 1); // one thread: one step
  // N = 2, L = 2: (1 - 0) + (1 - 1/4) = 1.75
  EXPECT_DOUBLE_EQ(queue_was(2), 1.75);
  // Large N: the slowest of 32 random positions is near the end of the queue, N * 32/33 + ...
  const double n = 100000;
  EXPECT_NEAR(queue_was(n) / n, 32.0 / 33.0, 1e-3);
  EXPECT_GT(queue_was(64), queue_tas(64));
}

TEST(AtomicsFit, RecoversTheSlopeOverTheContendedRange) {
  atomics_curve c;
  for (double n = 1; n <= 65536; n *= 2) {
    c.threads.push_back(n);
    c.mean_cycles.push_back(n < 64 ? 700 : 700 + 0.5 * (n - 64)); // flat, then linear
  }
  c.ops_per_s_at_max = 1.98e9; // one op per cycle at 1980 MHz: step 1 cycle
  const auto f = fit_atomics(c, 1980);
  EXPECT_TRUE(f.contended);
  EXPECT_NEAR(f.fit.slope, 0.5, 1e-6);
  EXPECT_NEAR(f.fit.r2, 1.0, 1e-9);
  EXPECT_GT(f.from_threads, 64);
  EXPECT_TRUE(f.queue_model);
  EXPECT_NEAR(f.step_cycles, 1.0, 1e-9);
  EXPECT_NEAR(f.model_slope, 0.5, 1e-9);
  EXPECT_EQ(f.model_mean_cycles.size(), c.threads.size());
  EXPECT_NEAR(f.model_mean_cycles.back(), 700 + (65536 + 1) / 2.0 - 1, 1e-6);
}

TEST(AtomicsFit, FlatCurveIsNotContendedAndDistinctAddressesHaveNoQueueModel) {
  atomics_curve c;
  for (double n = 1; n <= 1024; n *= 2) {
    c.threads.push_back(n);
    c.mean_cycles.push_back(600 + std::fmod(n, 3.0));
  }
  c.ops_per_s_at_max = 1e9;
  c.queues = false;
  const auto f = fit_atomics(c, 1980);
  EXPECT_FALSE(f.contended);
  EXPECT_EQ(f.fit.points, int(c.threads.size()));
  EXPECT_NEAR(f.fit.slope, 0, 0.01);
  EXPECT_FALSE(f.queue_model);
  EXPECT_EQ(to_json(f)["queue_model"]["applies"], false);
}

TEST(Fit, LineAndContendedFrom) {
  const auto f = fit_line({1, 2, 3}, {3, 5, 7});
  EXPECT_DOUBLE_EQ(f.slope, 2);
  EXPECT_DOUBLE_EQ(f.intercept, 1);
  EXPECT_EQ(fit_line({1, 1}, {2, 3}).points, 0);                 // no spread in x
  EXPECT_EQ(contended_from({100, 110, 160, 140, 200, 300}), 4u); // must stay above 150 to the end
  EXPECT_EQ(contended_from({100, 100}), 2u);
}

// A CAS loop's latency grows faster than linearly: a straight line through it has a large
// negative intercept (the H100's: -1.27 M cycles). The fit then is a power law, drawn and reported
// as such; a curve nothing fits says so.
TEST(AtomicsFit, SuperlinearGrowthGetsAPowerLawNotALine) {
  atomics_curve c;
  for (double n = 1; n <= 16384; n *= 2) {
    c.threads.push_back(n);
    c.mean_cycles.push_back(1200 * std::pow(n, 1.5));
  }
  c.queues = true;
  const auto f = fit_atomics(c, 1980);
  EXPECT_EQ(f.model, "power");
  EXPECT_NEAR(f.power_exponent, 1.5, 1e-6);
  EXPECT_NEAR(f.power_coefficient, 1200, 1e-3);
  const auto j = to_json(f);
  EXPECT_EQ(j["fit"]["model"], "power");
  EXPECT_TRUE(j["fit"].contains("why"));
  // The H100's measured cas_u32 curve (reports/examples): a power law, exponent between 1 and 2.
  atomics_curve cas;
  const double pts[][2] = {{1, 1192},       {2, 1590},        {4, 2265},        {8, 3633},
                           {16, 6447},      {32, 12393},      {64, 22718},      {128, 44586},
                           {256, 88797},    {512, 179761},    {1024, 519508},   {2048, 1380677},
                           {4096, 2792757}, {8192, 10125520}, {16384, 37862281}};
  for (const auto &p : pts)
    cas.threads.push_back(p[0]), cas.mean_cycles.push_back(p[1]);
  const auto g = fit_atomics(cas, 1980);
  EXPECT_EQ(g.model, "power");
  EXPECT_GT(g.power_exponent, 1.0);
  EXPECT_LT(g.power_exponent, 2.0);
  // Noise with no trend: no model.
  atomics_curve flat;
  for (double n = 1; n <= 4096; n *= 2)
    flat.threads.push_back(n),
        flat.mean_cycles.push_back(n < 8 ? 100 : (int(std::log2(n)) % 2 ? 400 : 900));
  EXPECT_EQ(fit_atomics(flat, 1980).model, "none");
}

// A measured variant as the probe hands it over: fitted into its result (the queue model only
// where its threads queue on one address) and summarised in one line.
TEST(AtomicsFit, AVariantIsFittedIntoItsResultWithItsSummaryLine) {
  gpuprobe::probes::atomics_variant_result same, distinct;
  same.variant = gpuprobe::probes::atomic_variant::same_u32;
  distinct.variant = gpuprobe::probes::atomic_variant::distinct_u32;
  for (std::uint64_t n = 1; n <= 65536; n *= 2) {
    gpuprobe::probes::atomic_point p;
    p.threads = n;
    p.mean_cycles = n < 64 ? 700 : 700 + 0.5 * double(n - 64);
    p.warp_max_mean_cycles = p.mean_cycles;
    p.ops_per_s = 1.98e9;
    same.points.push_back(p);
    distinct.points.push_back(p);
  }
  const std::string line = fit_variant(same, 1980);
  EXPECT_NE(line.find("same_u32"), std::string::npos) << line;
  EXPECT_NE(line.find("slope     0.5000 cycles/thread"), std::string::npos) << line;
  EXPECT_NE(line.find("queue model 0.5000"), std::string::npos) << line;
  EXPECT_NEAR(same.analysis["fit"]["slope_cycles_per_thread"].get<double>(), 0.5, 1e-9);
  EXPECT_NE(fit_variant(distinct, 1980).find("queue model n/a"), std::string::npos);
}
