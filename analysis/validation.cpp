#include "analysis/validation.hpp"

#include "analysis/significance.hpp"
#include "common/error.hpp"
#include "common/stats.hpp"

#include <cstdio>
#include <map>

namespace gpuprobe::analysis {

using nlohmann::json;

std::vector<model::validation_row> validation_rows(const std::vector<workload_samples> &w,
                                                   double alpha, std::uint64_t seed) {
  std::vector<double> p;
  std::vector<ratio_ci> ci;
  for (const auto &s : w) {
    if (!s.measured)
      continue;
    if (s.default_ms.size() < 2 || s.tuned_ms.size() < 2)
      throw error("validate: " + s.workload + " has fewer than 2 samples");
    ci.push_back(bootstrap_ratio_ci(s.default_ms, s.tuned_ms, alpha, 10000, seed));
    p.push_back(mann_whitney_u(s.default_ms, s.tuned_ms).p);
  }
  const auto adj = holm(p);
  std::vector<model::validation_row> rows;
  std::size_t k = 0;
  for (const auto &s : w) {
    model::validation_row r;
    static_cast<model::compared_workload &>(r) = s;
    r.changes = s.changes;
    if (!s.measured) {
      r.verdict = "not tuned";
      r.reason = "the tuning profile runs the same configuration as the default here";
    } else {
      r.reps = s.default_ms.size();
      r.median_default_ms = median(s.default_ms);
      r.median_tuned_ms = median(s.tuned_ms);
      r.ratio = ci[k].ratio;
      r.ci_low = ci[k].low;
      r.ci_high = ci[k].high;
      r.p = p[k];
      r.p_holm = adj[k];
      r.verdict = verdict(ci[k], adj[k], alpha);
      r.default_ms = s.default_ms;
      r.tuned_ms = s.tuned_ms;
      ++k;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string verdict_summary(const std::vector<model::validation_row> &rows) {
  std::map<std::string, int> n;
  for (const auto &r : rows)
    ++n[r.verdict];
  std::string s;
  for (const char *v : {"faster", "no significant difference", "slower", "not tuned"}) {
    if (!s.empty())
      s += ", ";
    s += std::to_string(n[v]) + " " + v;
  }
  return s;
}

std::vector<model::tradeoff> tradeoffs(const std::vector<model::validation_row> &rows) {
  std::vector<model::tradeoff> out;
  for (const auto &r : rows) {
    if (r.verdict != "slower" || !r.changes)
      continue;
    for (const auto &c : *r.changes) {
      const std::string d = model::to_string(c.what);
      const double ratio = r.ratio.value_or(1.0), lo = r.ci_low.value_or(0),
                   hi = r.ci_high.value_or(0);
      char line[320];
      std::snprintf(line, sizeof line,
                    "%s (%s -> %s): %s on %s is %.1f %% slower (ratio %.3f, 95 %% CI %.3f-%.3f)",
                    d.c_str(), c.from.c_str(), c.to.c_str(), r.workload.c_str(), r.pool.c_str(),
                    100 * (ratio - 1), ratio, lo, hi);
      out.push_back({d, r.workload, r.pool, ratio, lo, hi, line});
    }
  }
  return out;
}

} // namespace gpuprobe::analysis
