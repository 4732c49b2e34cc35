#include "analysis/validation.hpp"

#include "analysis/stats.hpp"
#include "common/error.hpp"
#include "common/stats.hpp"

#include <map>

namespace gpuprobe::analysis {

using nlohmann::json;

json validation_rows(const std::vector<workload_samples> &w, double alpha, std::uint64_t seed) {
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
  json rows = json::array();
  std::size_t k = 0;
  for (const auto &s : w) {
    json r = {{"workload", s.workload},
              {"pool", s.pool},
              {"config_default", s.config_default},
              {"config_tuned", s.config_tuned},
              {"measured", s.measured}};
    if (!s.measured) {
      r["verdict"] = "not tuned";
      r["reason"] = "the tuning profile runs the same configuration as the default here";
    } else {
      r["reps"] = s.default_ms.size();
      r["median_default_ms"] = median(s.default_ms);
      r["median_tuned_ms"] = median(s.tuned_ms);
      r["ratio"] = ci[k].ratio;
      r["ci_low"] = ci[k].low;
      r["ci_high"] = ci[k].high;
      r["p"] = p[k];
      r["p_holm"] = adj[k];
      r["verdict"] = verdict(ci[k], adj[k], alpha);
      r["default_ms"] = s.default_ms;
      r["tuned_ms"] = s.tuned_ms;
      ++k;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string verdict_summary(const json &rows) {
  std::map<std::string, int> n;
  for (const auto &r : rows)
    ++n[r.value("verdict", "?")];
  std::string s;
  for (const char *v : {"faster", "no significant difference", "slower", "not tuned"}) {
    if (!s.empty())
      s += ", ";
    s += std::to_string(n[v]) + " " + v;
  }
  return s;
}

} // namespace gpuprobe::analysis
