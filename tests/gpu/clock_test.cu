// The clock probe on a real GPU: every SM sampled, and each window's clock between 100 MHz and
// the device's stated peak (+10 %): a unit slip (kHz, GHz) or a lost SM fails here.
#include "gpu_test_util.hpp"
#include "probes/clock/driver.hpp"

using namespace gpuprobe;

TEST(ClockGpu, EverySmSampledAndTheClockIsUnderTheStatedPeak) {
  GPUPROBE_REQUIRE_GPU();
  const auto dev = query_device(0);
  probes::clock_options o;
  o.seconds = 0.3;
  o.samples = 16;
  const auto r = probes::run_clock(o, dev);
  EXPECT_EQ(r.sms_seen, dev.sm_count);
  ASSERT_EQ(r.windows.size(), 15u);
  ASSERT_GT(r.stated_peak_mhz, 0);
  for (const auto &w : r.windows) {
    EXPECT_GT(w.lowest_mhz, 100) << "at " << w.t_ms << " ms";
    EXPECT_LT(w.highest_mhz, 1.1 * r.stated_peak_mhz) << "at " << w.t_ms << " ms";
  }
  EXPECT_NEAR(r.windows.back().t_ms, 280, 30); // the middle of the last of 15 windows of 20 ms
  EXPECT_FALSE(r.verdict.reason.empty());
  std::printf("clock: %s\n", r.verdict.reason.c_str());
}
