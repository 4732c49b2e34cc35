// The clock probe's part of the report: the SM clock over the sample (median, lowest and highest
// SM per window, the stated peak) and the verdict of each result.
#include "probes/clock/driver.hpp"
#include "probes/clock/probe.hpp"
#include "probes/kit.hpp"

#include <filesystem>
#include <sstream>

namespace gpuprobe::probes::clock {

using namespace kit; // the report's inputs, types and helpers (probes/kit.hpp)

void draw(const report_inputs &in, report_content &c) {
  const auto &results = in.of(entry.id);
  if (results.empty())
    return; // an optional probe: characterize does not run it, so nothing is said missing
  report_table t{"SM clock under load (gpuprobe clock)",
                 {"input", "SMs", "seconds", "highest", "lowest", "last", "stated peak", "verdict"},
                 {},
                 "MHz: medians over the SMs of each window."};
  for (std::size_t k = 0; k < results.size(); ++k) {
    const auto r = probes::clock_result_from_json(results[k].doc);
    report_figure f{"sm_clock" + (k ? "_" + std::to_string(k + 1) : std::string()),
                    "SM clock while every SM is busy", "lines", "ms", "SM clock (MHz)"};
    std::ostringstream o;
    o << "series,style,x,y\n";
    for (const auto &w : r.windows) {
      row(o, "median SM", "line", w.t_ms, w.median_mhz);
      row(o, "lowest SM", "dotted", w.t_ms, w.lowest_mhz);
      row(o, "highest SM", "dotted", w.t_ms, w.highest_mhz);
      if (r.stated_peak_mhz > 0)
        row(o, "stated peak", "dashed", w.t_ms, r.stated_peak_mhz);
    }
    f.csv = o.str();
    c.figures.push_back(std::move(f));
    const auto &v = r.verdict;
    t.rows.push_back({std::filesystem::path(results[k].path).filename().string(),
                      std::to_string(r.sms_seen), num(r.options.seconds, 3), num(v.highest_mhz, 4),
                      num(v.lowest_mhz, 4), num(v.last_mhz, 4), num(r.stated_peak_mhz, 4),
                      v.reason});
  }
  c.tables.push_back(std::move(t));
}

} // namespace gpuprobe::probes::clock
