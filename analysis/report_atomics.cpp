#include "analysis/report_parts.hpp"

#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::analysis::report_detail {

namespace fs = std::filesystem;

void atomics_part(const inputs& in, report_content& c) {
  if (in.atomics.empty()) {
    c.missing.push_back("atomic latency curves (raw/ holds no atomics result)");
    const json variants = in.profile.is_object() ? in.profile.value("atomics", json::object()).value("variants", json::array()) : json::array();
    if (variants.empty()) return;
    report_table t{"Atomics fits (profile.json)", {"variant", "model", "slope (cycles/thread)", "r2", "fit range (threads)"}, {}, ""};
    for (const auto& v : variants) {
      const auto fit = v.value("fit", json::object());
      t.rows.push_back({v.value("variant", "?"), fit.value("model", std::string("line")), num(fit.value("slope_cycles_per_thread", 0.0)),
                        num(fit.value("r2", 0.0), 3), num(fit.value("from_threads", 0.0)) + "–" + num(fit.value("to_threads", 0.0))});
    }
    c.tables.push_back(std::move(t));
    return;
  }
  for (std::size_t r = 0; r < in.atomics.size(); ++r) {
    const auto& doc = in.atomics[r].second;
    report_figure f{"atomics_latency" + (r ? "_" + std::to_string(r + 1) : std::string()), "Atomic latency vs threads: measured, fit, queue model",
                    "lines", "threads", "mean cycles per atomic", true, true, {}, {}, ""};
    report_table t{"Atomics fits", {"variant", "slope (cycles/thread)", "r2", "fit range (threads)", "queue model slope"}, {}, ""};
    std::ostringstream o;
    o << "series,style,x,y\n";
    for (const auto& v : doc["atomics"].value("variants", json::array())) {
      const std::string name = v.value("variant", "?");
      std::vector<double> xs;
      for (const auto& p : v.value("points", json::array())) {
        row(o, name, "points", p.value("threads", 0.0), p.value("mean_cycles", 0.0));
        xs.push_back(p.value("threads", 0.0));
      }
      const auto fit = v.value("fit", json::object());
      const double a = fit.value("intercept_cycles", 0.0), b = fit.value("slope_cycles_per_thread", 0.0);
      const double lo = fit.value("from_threads", 0.0), hi = fit.value("to_threads", 0.0);
      for (double x : xs)
        if (x >= lo && x <= hi) row(o, name + " fit", "dashed", x, a + b * x);
      const auto model = v.value("queue_model", json::object());
      if (model.value("applies", false) && model.contains("mean_cycles") && model["mean_cycles"].is_array())
        for (std::size_t i = 0; i < std::min(xs.size(), model["mean_cycles"].size()); ++i)
          row(o, name + " queue model", "dotted", xs[i], model["mean_cycles"][i].get<double>());
      t.rows.push_back({name, num(b), num(fit.value("r2", 0.0), 3), num(lo) + "–" + num(hi),
                        model.value("applies", false) ? num(model.value("predicted_slope_cycles_per_thread", 0.0)) : "n/a"});
    }
    f.csv = o.str();
    c.figures.push_back(std::move(f));
    c.tables.push_back(std::move(t));
  }
}

}  // namespace gpuprobe::analysis::report_detail
