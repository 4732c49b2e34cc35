// The host half of the clock probe: the windows, the verdict, the result's JSON.
#include "common/error.hpp"
#include "common/stats.hpp"
#include "model/fields.hpp"
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

// Each record's keys, once, for its reader and its writer (model/fields.hpp).
template <class F> void fields(clock_options &o, F &f) {
  f.required("seconds", o.seconds);
  f.required("samples", o.samples);
  f.required("threads", o.threads);
  f.required("drop", o.drop);
}
template <class F> void fields(clock_window &w, F &f) {
  f.required("t_ms", w.t_ms);
  f.required("median_mhz", w.median_mhz);
  f.required("lowest_mhz", w.lowest_mhz);
  f.required("highest_mhz", w.highest_mhz);
}
template <class F> void fields(clock_verdict &v, F &f) {
  f.required("throttled", v.throttled);
  f.required("highest_mhz", v.highest_mhz);
  f.required("lowest_mhz", v.lowest_mhz);
  f.required("last_mhz", v.last_mhz);
  f.required("reason", v.reason);
}
json to_json(const clock_options &o) { return model::write_record(o); }
json to_json(const clock_window &w) { return model::write_record(w); }
json to_json(const clock_verdict &v) { return model::write_record(v); }

template <class F> void fields(clock_result &r, F &f) {
  f.whole("options", r.options, model::read_record<clock_options>);
  f.required("blocks", r.blocks);
  f.required("sms_seen", r.sms_seen);
  f.required("stated_peak_mhz", r.stated_peak_mhz);
  f.required_list("windows", r.windows, model::read_record<clock_window>);
  f.whole("verdict", r.verdict, model::read_record<clock_verdict>);
  f.required("wall_seconds", r.wall_seconds);
}

json to_json(const clock_result &r) { return model::write_result(r, "clock", "clock"); }

clock_result clock_result_from_json(const json &doc) {
  return model::read_result<clock_result>(doc, "clock", "clock");
}

} // namespace gpuprobe::probes
