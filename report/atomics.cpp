#include "report/parts.hpp"

#include "analysis/atomics_fit.hpp"

#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::report::detail {

// What this part reads of the analysis.
using analysis::atomics_curve;
using analysis::fit_atomics;

namespace fs = std::filesystem;

namespace {

// No raw atomics result: the fits the profile kept, as a table.
void profile_fits(const inputs &in, report_content &c) {
  const json variants =
      in.profile
          ? in.profile->detail.value("atomics", json::object()).value("variants", json::array())
          : json::array();
  if (variants.empty())
    return;
  report_table t{
      "Atomics fits (profile.json)",
      {"variant", "model", "slope (cycles/thread) or c · N^p", "r2", "fit range (threads)"},
      {},
      ""};
  for (const auto &v : variants) {
    const auto fit = v.value("fit", json::object());
    const bool line = fit.value("model", std::string("line")) == "line";
    t.rows.push_back(
        {v.value("variant", "?"), fit.value("model", std::string("line")),
         line ? num(fit.value("slope_cycles_per_thread", 0.0))
              : num(fit.value("power_coefficient_cycles", 0.0)) + " · N^" +
                    num(fit.value("power_exponent", 0.0), 3),
         num(line ? fit.value("r2", 0.0) : fit.value("power_r2_log", 0.0), 3),
         num(fit.value("from_threads", 0.0)) + "–" + num(fit.value("to_threads", 0.0))});
  }
  c.tables.push_back(std::move(t));
}

// A variant's fit as the result holds it, or fitted again here (a result from before the
// power-law fits).
json variant_fit(const json &v) {
  auto fit = v.value("fit", json::object());
  if (fit.contains("model"))
    return fit;
  atomics_curve curve;
  for (const auto &p : v.value("points", json::array()))
    curve.threads.push_back(p.value("threads", 0.0)),
        curve.mean_cycles.push_back(p.value("mean_cycles", 0.0));
  curve.queues = false;
  return to_json(fit_atomics(curve, 0))["fit"];
}

// One variant: its points, its fit over the range it was fitted on, its queue model (into the
// figure's CSV), and its table row.
void variant_curves(const json &v, std::ostringstream &o, report_table &t) {
  const std::string name = v.value("variant", "?");
  std::vector<double> xs;
  for (const auto &p : v.value("points", json::array())) {
    row(o, name, "points", p.value("threads", 0.0), p.value("mean_cycles", 0.0));
    xs.push_back(p.value("threads", 0.0));
  }
  const json fit = variant_fit(v);
  const std::string kind = fit.value("model", std::string("line"));
  const double a = fit.value("intercept_cycles", 0.0),
               b = fit.value("slope_cycles_per_thread", 0.0);
  const double pc = fit.value("power_coefficient_cycles", 0.0),
               pe = fit.value("power_exponent", 0.0);
  const double lo = fit.value("from_threads", 0.0), hi = fit.value("to_threads", 0.0);
  // Drawn only over the range it was fitted on, densely (a straight line is curved on log axes).
  if (kind != "none" && lo > 0 && hi > lo)
    for (double x = lo; x <= hi * (1 + 1e-9); x *= std::pow(hi / lo, 1.0 / 64))
      row(o, name + " fit", "dashed", x, kind == "power" ? pc * std::pow(x, pe) : a + b * x);
  const auto model = v.value("queue_model", json::object());
  if (model.value("applies", false) && model.contains("mean_cycles") &&
      model["mean_cycles"].is_array())
    for (std::size_t i = 0; i < std::min(xs.size(), model["mean_cycles"].size()); ++i)
      row(o, name + " queue model", "dotted", xs[i], model["mean_cycles"][i].get<double>());
  t.rows.push_back({name,
                    kind == "line"    ? num(b)
                    : kind == "power" ? num(pc) + " · N^" + num(pe, 3) + " (power law)"
                                      : "no model fits (" + fit.value("why", std::string("")) + ")",
                    num(kind == "line" ? fit.value("r2", 0.0) : fit.value("power_r2_log", 0.0), 3),
                    num(lo) + "–" + num(hi),
                    model.value("applies", false)
                        ? num(model.value("predicted_slope_cycles_per_thread", 0.0))
                        : "n/a"});
}

} // namespace

void atomics_part(const inputs &in, report_content &c) {
  if (in.atomics.empty()) {
    c.missing.push_back("atomic latency curves (raw/ holds no atomics result)");
    profile_fits(in, c);
    return;
  }
  for (std::size_t r = 0; r < in.atomics.size(); ++r) {
    const auto &doc = in.atomics[r].second;
    report_figure f{"atomics_latency" + (r ? "_" + std::to_string(r + 1) : std::string()),
                    "Atomic latency vs threads: measured, fit, queue model",
                    "lines",
                    "threads",
                    "mean cycles per atomic",
                    true,
                    true,
                    {},
                    {},
                    ""};
    report_table t{"Atomics fits",
                   {"variant", "model: slope (cycles/thread) or c · N^p", "r2",
                    "fit range (threads)", "queue model slope"},
                   {},
                   ""};
    std::ostringstream o;
    o << "series,style,x,y\n";
    for (const auto &v : doc["atomics"].value("variants", json::array()))
      variant_curves(v, o, t);
    f.csv = o.str();
    c.figures.push_back(std::move(f));
    c.tables.push_back(std::move(t));
  }
}

} // namespace gpuprobe::report::detail
