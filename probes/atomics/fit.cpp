#include "probes/atomics/fit.hpp"

#include "analysis/models.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace gpuprobe::probes {

using namespace analysis; // the analysis/ tools: fits, input text, statistics, the models

atomics_fit fit_atomics(const atomics_curve &c, double sm_clock_mhz) {
  atomics_fit f;
  const std::size_t n = std::min(c.threads.size(), c.mean_cycles.size());
  if (n == 0)
    return f;
  std::size_t from = contended_from(c.mean_cycles);
  f.contended = from < n && n - from >= 3;
  if (!f.contended)
    from = 0;
  const std::vector<double> x(c.threads.begin() + long(from), c.threads.begin() + long(n));
  const std::vector<double> y(c.mean_cycles.begin() + long(from), c.mean_cycles.begin() + long(n));
  f.fit = fit_line(x, y);
  if (!(f.fit.r2 >= 0.98)) {
    std::vector<double> lx, ly;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i] > 0 && y[i] > 0)
        lx.push_back(std::log(x[i])), ly.push_back(std::log(y[i]));
    const line_fit p = fit_line(lx, ly);
    f.power_coefficient = std::exp(p.intercept), f.power_exponent = p.slope, f.power_r2 = p.r2;
    f.model = p.points >= 3 && p.r2 >= 0.95 ? "power" : "none";
  }
  f.from_threads = c.threads[from];
  f.to_threads = c.threads[n - 1];
  f.queue_model = c.queues && c.ops_per_s_at_max > 0 && sm_clock_mhz > 0;
  if (!f.queue_model)
    return f;
  f.step_cycles = sm_clock_mhz * 1e6 / c.ops_per_s_at_max;
  f.model_slope = f.step_cycles / 2;
  const double base = c.mean_cycles[0];
  for (std::size_t i = 0; i < n; ++i) {
    f.model_mean_cycles.push_back(base + f.step_cycles * (queue_tas(c.threads[i]) - 1));
    f.model_warp_max_cycles.push_back(base + f.step_cycles * (queue_was(c.threads[i]) - 1));
  }
  return f;
}

model::atomics_fit fit_model(const atomics_fit &f) {
  model::atomics_fit m;
  m.model = f.model;
  m.slope_cycles_per_thread = f.fit.slope;
  m.intercept_cycles = f.fit.intercept;
  m.r2 = f.fit.r2;
  m.from_threads = f.from_threads;
  m.to_threads = f.to_threads;
  if (f.model != "line") {
    m.power_coefficient_cycles = f.power_coefficient;
    m.power_exponent = f.power_exponent;
    m.power_r2_log = f.power_r2;
    m.why = f.model == "power"
                ? "a line does not fit (r2 " + std::to_string(f.fit.r2).substr(0, 5) +
                      "): cycles = c N^p fitted in log-log"
                : "neither a line nor a power law fits the contended range";
  }
  m.detail = {{"points", f.fit.points}, {"contended", f.contended}};
  return m;
}

nlohmann::json to_json(const atomics_fit &f) {
  nlohmann::json model = {{"applies", false},
                          {"why", "distinct addresses do not queue on one atomic unit"}};
  if (f.queue_model)
    model = {{"applies", true},
             {"equations", "RW paper Eqs. 1-2: TAS (N+1)/2, WAS sum_{k<N} 1-(k/N)^min(N,32)"},
             {"step_cycles", f.step_cycles},
             {"step_source", "SM clock / measured operations per second at the most threads"},
             {"predicted_slope_cycles_per_thread", f.model_slope},
             {"mean_cycles", f.model_mean_cycles},
             {"warp_max_cycles", f.model_warp_max_cycles}};
  return {{"fit", model::to_json(fit_model(f))}, {"queue_model", model}};
}

std::string fit_variant(probes::atomics_variant_result &v, double sm_clock_mhz) {
  atomics_curve curve;
  curve.queues = v.variant != probes::atomic_variant::distinct_u32 &&
                 v.variant != probes::atomic_variant::distinct_u64;
  for (const auto &p : v.points) {
    curve.threads.push_back(double(p.threads));
    curve.mean_cycles.push_back(p.mean_cycles);
    curve.warp_max_mean_cycles.push_back(p.warp_max_mean_cycles);
    curve.ops_per_s_at_max = p.ops_per_s;
  }
  const auto fit = fit_atomics(curve, sm_clock_mhz);
  v.analysis = to_json(fit);
  char line[256];
  int len = fit.model == "line"
                ? std::snprintf(line, sizeof line,
                                "  %-15s slope %10.4f cycles/thread (r2 %.3f, %s %.0f..%.0f "
                                "threads)  queue model ",
                                probes::to_string(v.variant).c_str(), fit.fit.slope, fit.fit.r2,
                                fit.contended ? "contended" : "all points", fit.from_threads,
                                fit.to_threads)
                : std::snprintf(line, sizeof line,
                                "  %-15s %s %.4g x N^%.3f cycles (r2 of logs %.3f, %.0f..%.0f "
                                "threads)  queue model ",
                                probes::to_string(v.variant).c_str(),
                                fit.model == "power" ? "power" : "no fit:", fit.power_coefficient,
                                fit.power_exponent, fit.power_r2, fit.from_threads, fit.to_threads);
  if (fit.queue_model)
    std::snprintf(line + len, sizeof line - std::size_t(len), "%.4f (step %.4f)", fit.model_slope,
                  fit.step_cycles);
  else
    std::snprintf(line + len, sizeof line - std::size_t(len), "n/a");
  return line;
}

} // namespace gpuprobe::probes
