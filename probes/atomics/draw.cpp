#include "probes/atomics/probe.hpp"
#include "probes/kit.hpp"

#include "model/atomics.hpp"
#include "probes/atomics/fit.hpp"

#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::probes::atomics {

using namespace kit; // the report's inputs, types and helpers (probes/kit.hpp)

// What this part reads of the analysis and the models.
using model::atomics_variant;
using probes::atomics_curve;
using probes::fit_atomics;

namespace fs = std::filesystem;

namespace {

// No raw atomics result: the fits the profile kept, as a table.
// A fit in a table cell: the slope, or c · N^p; "—" for a number the fit does not hold (never 0).
std::string fit_cell(const model::atomics_fit &fit, const std::string &kind) {
  const auto n = [](const std::optional<double> &x, int digits) {
    return x ? num(*x, digits) : std::string("—");
  };
  return kind == "line" ? n(fit.slope_cycles_per_thread, 4)
                        : n(fit.power_coefficient_cycles, 4) + " · N^" + n(fit.power_exponent, 3);
}

void profile_fits(const report_inputs &in, report_content &c) {
  const auto variants =
      in.profile ? model::atomics_of(*in.profile) : std::vector<atomics_variant>{};
  if (variants.empty())
    return;
  report_table t{
      "Atomics fits (profile.json)",
      {"variant", "model", "slope (cycles/thread) or c · N^p", "r2", "fit range (threads)"},
      {},
      ""};
  for (const auto &v : variants) {
    const model::atomics_fit fit = v.fit.value_or(model::atomics_fit{});
    const std::string kind = fit.model.value_or("line");
    const bool line = kind == "line";
    t.rows.push_back({v.variant.empty() ? "?" : v.variant, kind, fit_cell(fit, kind),
                      num(line ? fit.r2.value_or(0) : fit.power_r2_log.value_or(0), 3),
                      num(fit.from_threads.value_or(0)) + "–" + num(fit.to_threads.value_or(0))});
  }
  c.tables.push_back(std::move(t));
}

// A variant's fit as the result holds it, or fitted again here (a result from before the
// power-law fits).
model::atomics_fit variant_fit(const atomics_variant &v) {
  if (v.fit && v.fit->model)
    return *v.fit;
  atomics_curve curve;
  for (const auto &p : v.points)
    curve.threads.push_back(p.threads), curve.mean_cycles.push_back(p.mean_cycles);
  curve.queues = false;
  return fit_model(fit_atomics(curve, 0));
}

// One variant: its points, its fit over the range it was fitted on, its queue model (into the
// figure's CSV), and its table row.
void variant_curves(const atomics_variant &v, std::ostringstream &o, report_table &t) {
  const std::string name = v.variant.empty() ? "?" : v.variant;
  std::vector<double> xs;
  for (const auto &p : v.points) {
    row(o, name, "points", p.threads, p.mean_cycles);
    xs.push_back(p.threads);
  }
  const model::atomics_fit fit = variant_fit(v);
  const std::string kind = fit.model.value_or("line");
  const double a = fit.intercept_cycles.value_or(0), b = fit.slope_cycles_per_thread.value_or(0);
  const double pc = fit.power_coefficient_cycles.value_or(0), pe = fit.power_exponent.value_or(0);
  const double lo = fit.from_threads.value_or(0), hi = fit.to_threads.value_or(0);
  // Drawn only over the range it was fitted on, densely (a straight line is curved on log axes),
  // and only where the fit holds its numbers.
  const bool whole = kind == "power" ? fit.power_coefficient_cycles && fit.power_exponent
                                     : fit.slope_cycles_per_thread && fit.intercept_cycles;
  if (kind != "none" && whole && lo > 0 && hi > lo)
    for (double x = lo; x <= hi * (1 + 1e-9); x *= std::pow(hi / lo, 1.0 / 64))
      row(o, name + " fit", "dashed", x, kind == "power" ? pc * std::pow(x, pe) : a + b * x);
  const model::atomics_queue_model &q = v.queue_model;
  if (q.applies && q.mean_cycles)
    for (std::size_t i = 0; i < std::min(xs.size(), q.mean_cycles->size()); ++i)
      row(o, name + " queue model", "dotted", xs[i], (*q.mean_cycles)[i]);
  t.rows.push_back({name,
                    kind == "line"    ? fit_cell(fit, kind)
                    : kind == "power" ? fit_cell(fit, kind) + " (power law)"
                                      : "no model fits (" + fit.why.value_or("") + ")",
                    num(kind == "line" ? fit.r2.value_or(0) : fit.power_r2_log.value_or(0), 3),
                    num(lo) + "–" + num(hi),
                    q.applies ? num(q.predicted_slope_cycles_per_thread.value_or(0)) : "n/a"});
}

} // namespace

void draw(const report_inputs &in, report_content &c) {
  const auto &results = in.of(entry.id);
  if (results.empty()) {
    c.missing.push_back("atomic latency curves (raw/ holds no atomics result)");
    profile_fits(in, c);
    return;
  }
  for (std::size_t r = 0; r < results.size(); ++r) {
    const auto &doc = results[r].doc;
    report_figure f{"atomics_latency" + (r ? "_" + std::to_string(r + 1) : std::string()),
                    "Atomic latency vs threads: measured, fit, queue model",
                    "small_multiples", // 8 variants a panel: every colour and legend entry one
                                       // series
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
    for (const auto &v : model::atomics_of_result(doc))
      variant_curves(v, o, t);
    f.csv = o.str();
    c.figures.push_back(std::move(f));
    c.tables.push_back(std::move(t));
  }
}

} // namespace gpuprobe::probes::atomics
