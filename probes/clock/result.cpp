// The host half of the clock probe: the windows, the verdict, the result's JSON.
#include "common/error.hpp"
#include "common/stats.hpp"
#include "probes/clock/driver.hpp"

#include <algorithm>
#include <cstdio>

namespace gpuprobe::probes {

using nlohmann::json;

std::vector<clock_window> clock_windows(const clock_samples &s) {
  std::vector<clock_window> out;
  if (s.blocks <= 0 || s.per_block < 2 || s.ns.size() < std::size_t(s.blocks) * s.per_block ||
      s.cycles.size() != s.ns.size())
    return out;
  const long long first = *std::min_element(s.ns.begin(), s.ns.end());
  for (int k = 0; k + 1 < s.per_block; ++k) {
    std::vector<double> mhz, mid;
    for (int b = 0; b < s.blocks; ++b) {
      const std::size_t i = std::size_t(b) * s.per_block + k;
      const long long dt = s.ns[i + 1] - s.ns[i], dc = s.cycles[i + 1] - s.cycles[i];
      if (dt <= 0 || dc <= 0)
        continue;
      mhz.push_back(double(dc) / double(dt) * 1e3); // cycles per ns = GHz
      mid.push_back((double(s.ns[i] + s.ns[i + 1]) / 2 - double(first)) / 1e6);
    }
    if (mhz.empty())
      continue;
    out.push_back({median(mid), median(mhz), *std::min_element(mhz.begin(), mhz.end()),
                   *std::max_element(mhz.begin(), mhz.end())});
  }
  return out;
}

clock_verdict judge_clock(const std::vector<clock_window> &w, double drop) {
  clock_verdict v;
  if (w.empty()) {
    v.reason = "no clock window was measured";
    return v;
  }
  v.highest_mhz = v.lowest_mhz = w.front().median_mhz;
  for (const auto &x : w) {
    v.highest_mhz = std::max(v.highest_mhz, x.median_mhz);
    v.lowest_mhz = std::min(v.lowest_mhz, x.median_mhz);
  }
  v.last_mhz = w.back().median_mhz;
  const double bar = v.highest_mhz * (1 - drop);
  double first_low_ms = -1;
  for (std::size_t k = 0; k + 1 < w.size() && first_low_ms < 0; ++k)
    if (w[k].median_mhz < bar && w[k + 1].median_mhz < bar)
      first_low_ms = w[k].t_ms;
  v.throttled = first_low_ms >= 0;
  char b[256];
  if (v.throttled)
    std::snprintf(b, sizeof b,
                  "throttled: the SM clock fell from %.0f to %.0f MHz (%.0f %% lower) from %.0f ms "
                  "on, more than %.0f %% under its highest for two windows in a row",
                  v.highest_mhz, v.lowest_mhz, 100 * (1 - v.lowest_mhz / v.highest_mhz),
                  first_low_ms, 100 * drop);
  else
    std::snprintf(b, sizeof b,
                  "steady: the SM clock stayed within %.0f %% of its highest, %.0f MHz (lowest "
                  "window %.0f MHz)",
                  100 * drop, v.highest_mhz, v.lowest_mhz);
  v.reason = b;
  return v;
}

json to_json(const clock_result &r) {
  json windows = json::array();
  for (const auto &w : r.windows)
    windows.push_back({{"t_ms", w.t_ms},
                       {"median_mhz", w.median_mhz},
                       {"lowest_mhz", w.lowest_mhz},
                       {"highest_mhz", w.highest_mhz}});
  const auto &v = r.verdict;
  return result_document("clock", r, "clock",
                         {{"options",
                           {{"seconds", r.options.seconds},
                            {"samples", r.options.samples},
                            {"threads", r.options.threads},
                            {"drop", r.options.drop}}},
                          {"blocks", r.blocks},
                          {"sms_seen", r.sms_seen},
                          {"stated_peak_mhz", r.stated_peak_mhz},
                          {"windows", windows},
                          {"verdict",
                           {{"throttled", v.throttled},
                            {"highest_mhz", v.highest_mhz},
                            {"lowest_mhz", v.lowest_mhz},
                            {"last_mhz", v.last_mhz},
                            {"reason", v.reason}}},
                          {"wall_seconds", r.wall_seconds}});
}

clock_result clock_result_from_json(const json &doc) {
  clock_result r;
  const json &c = result_body(doc, "clock", "clock", r);
  try {
    const json o = c.at("options");
    r.options.seconds = o.at("seconds").get<double>();
    r.options.samples = o.at("samples").get<int>();
    r.options.threads = o.at("threads").get<int>();
    r.options.drop = o.at("drop").get<double>();
    r.blocks = c.at("blocks").get<int>();
    r.sms_seen = c.at("sms_seen").get<int>();
    r.stated_peak_mhz = c.at("stated_peak_mhz").get<double>();
    for (const auto &w : c.at("windows"))
      r.windows.push_back({w.at("t_ms").get<double>(), w.at("median_mhz").get<double>(),
                           w.at("lowest_mhz").get<double>(), w.at("highest_mhz").get<double>()});
    const json &v = c.at("verdict");
    r.verdict = {v.at("throttled").get<bool>(), v.at("highest_mhz").get<double>(),
                 v.at("lowest_mhz").get<double>(), v.at("last_mhz").get<double>(),
                 v.at("reason").get<std::string>()};
    r.wall_seconds = c.at("wall_seconds").get<double>();
  } catch (const json::exception &e) {
    throw error(std::string("clock result: ") + e.what());
  }
  return r;
}

} // namespace gpuprobe::probes
