// The clock probe's host half (probes/clock/): the windows of simulated readings, the throttle
// verdict, the result's JSON, and its part of the report.
#include "common/error.hpp"
#include "probes/clock/driver.hpp"
#include "report/report.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace gpuprobe;
using nlohmann::json;

namespace {

// `blocks` SMs read every 10 ms; block b runs at mhz(k) + b MHz in window k.
template <class Mhz> probes::clock_samples simulate(int blocks, int per_block, Mhz mhz) {
  probes::clock_samples s;
  s.blocks = blocks;
  s.per_block = per_block;
  for (int b = 0; b < blocks; ++b) {
    long long t = 1000 + b, c = 0;
    for (int k = 0; k < per_block; ++k) {
      s.ns.push_back(t);
      s.cycles.push_back(c);
      t += 10'000'000;
      c += (long long)((mhz(k) + b) * 1e4); // MHz x 10 ms
    }
    s.sm.push_back(b);
  }
  return s;
}

} // namespace

TEST(ClockProbe, WindowsAreCyclesOverNanosecondsPerSm) {
  const auto w = probes::clock_windows(simulate(3, 6, [](int) { return 1755.0; }));
  ASSERT_EQ(w.size(), 5u);
  for (std::size_t k = 0; k < w.size(); ++k) {
    EXPECT_NEAR(w[k].median_mhz, 1756, 1e-6);
    EXPECT_NEAR(w[k].lowest_mhz, 1755, 1e-6);
    EXPECT_NEAR(w[k].highest_mhz, 1757, 1e-6);
    EXPECT_NEAR(w[k].t_ms, 5 + 10.0 * double(k), 1e-3);
  }
  EXPECT_TRUE(probes::clock_windows({}).empty());
}

TEST(ClockProbe, ThrottledOnlyWhenTwoWindowsInARowFallUnderTheBar) {
  const auto steady = probes::judge_clock(
      probes::clock_windows(simulate(2, 11, [](int k) { return k == 4 ? 1600.0 : 1980.0; })), 0.05);
  EXPECT_FALSE(steady.throttled) << steady.reason; // one low window is noise, not a throttle
  EXPECT_NEAR(steady.highest_mhz, 1980.5, 1e-6);
  EXPECT_NEAR(steady.lowest_mhz, 1600.5, 1e-6);
  const auto fell = probes::judge_clock(
      probes::clock_windows(simulate(2, 11, [](int k) { return k < 6 ? 1980.0 : 1410.0; })), 0.05);
  EXPECT_TRUE(fell.throttled);
  EXPECT_NEAR(fell.last_mhz, 1410.5, 1e-6);
  EXPECT_NE(fell.reason.find("from 65 ms"), std::string::npos) << fell.reason;
  EXPECT_FALSE(probes::judge_clock({}, 0.05).throttled);
}

TEST(ClockProbe, ResultRoundTripsAndTheReportDrawsIt) {
  probes::clock_result r;
  r.device = {{"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-test"}, {"sm_count", 2}};
  r.meta = {{"tool", "gpuprobe"}};
  r.blocks = r.sms_seen = 2;
  r.stated_peak_mhz = 1980;
  r.windows = probes::clock_windows(simulate(2, 5, [](int k) { return k < 2 ? 1980.0 : 1400.0; }));
  r.verdict = probes::judge_clock(r.windows, r.options.drop);
  const auto doc = to_json(r);
  const auto back = probes::clock_result_from_json(doc);
  EXPECT_EQ(to_json(back), doc);
  EXPECT_THROW(probes::clock_result_from_json({{"probe", "atomics"}}), gpuprobe::error);
  // The format's keys, as the first clock results were written.
  const auto keys = [](const json &j) {
    std::vector<std::string> k;
    for (const auto &[key, v] : j.items())
      k.push_back(key);
    return k;
  };
  const json &body = doc["clock"];
  using names = std::vector<std::string>;
  EXPECT_EQ(keys(body), (names{"blocks", "options", "sms_seen", "stated_peak_mhz", "verdict",
                               "wall_seconds", "windows"}));
  EXPECT_EQ(keys(body["options"]), (names{"drop", "samples", "seconds", "threads"}));
  EXPECT_EQ(keys(body["windows"][0]), (names{"highest_mhz", "lowest_mhz", "median_mhz", "t_ms"}));
  EXPECT_EQ(keys(body["verdict"]),
            (names{"highest_mhz", "last_mhz", "lowest_mhz", "reason", "throttled"}));

  const fs::path dir = test::temp_path("clock_report");
  fs::remove_all(dir);
  fs::create_directories(dir / "raw");
  std::ofstream(dir / "raw" / "clock.json") << doc.dump();
  const auto c = report::build_report(dir.string());
  ASSERT_EQ(c.figures.size(), 1u);
  EXPECT_EQ(c.figures[0].id, "sm_clock");
  EXPECT_NE(c.figures[0].csv.find("\"stated peak\",dashed"), std::string::npos);
  bool table = false;
  for (const auto &t : c.tables)
    if (t.title.find("SM clock") != std::string::npos) {
      table = true;
      ASSERT_EQ(t.rows.size(), 1u);
      EXPECT_NE(t.rows[0].back().find("throttled"), std::string::npos) << t.rows[0].back();
    }
  EXPECT_TRUE(table);
  EXPECT_TRUE(c.not_drawn.empty());
}
