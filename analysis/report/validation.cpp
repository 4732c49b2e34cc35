#include "analysis/report/parts.hpp"

#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::analysis::report_detail {

namespace fs = std::filesystem;

void validation_part(const inputs &in, report_content &c) {
  if (!in.validation.is_object()) {
    c.missing.push_back("validation (no validation.json: `gpuprobe validate` not run)");
    return;
  }
  report_table t{"Validation: default vs tuned (ratio = tuned / default time, < 1: tuned faster)",
                 {"workload", "pool", "default → tuned", "median default", "median tuned",
                  "ratio (95% CI)", "p (Holm)", "verdict"},
                 {},
                 in.validation.value("summary", std::string(""))};
  std::ostringstream o;
  o << "label,ratio,low,high,verdict\n";
  bool any = false;
  for (const auto &w : in.validation.value("workloads", json::array())) {
    const std::string name = w.value("workload", std::string("?")),
                      pool = w.value("pool", std::string("?"));
    const std::string cfg = w.value("config_default", std::string("?")) + " → " +
                            w.value("config_tuned", std::string("?"));
    if (!w.value("measured", true)) {
      t.rows.push_back(
          {name, pool, cfg, "—", "—", "—", "—", w.value("verdict", std::string("not tuned"))});
      continue;
    }
    t.rows.push_back({name, pool, cfg, num(w.value("median_default_ms", 0.0)) + " ms",
                      num(w.value("median_tuned_ms", 0.0)) + " ms",
                      num(w.value("ratio", 0.0), 3) + " (" + num(w.value("ci_low", 0.0), 3) + "–" +
                          num(w.value("ci_high", 0.0), 3) + ")",
                      num(w.value("p_holm", 1.0), 3), w.value("verdict", std::string("?"))});
    std::string label = name + " (" + pool + ")";
    for (auto &ch : label)
      if (ch == ',')
        ch = ';';
    o << '"' << label << "\"," << num(w.value("ratio", 0.0), 10) << ','
      << num(w.value("ci_low", 0.0), 10) << ',' << num(w.value("ci_high", 0.0), 10) << ','
      << w.value("verdict", std::string("?")) << '\n';
    any = true;
  }
  c.tables.push_back(std::move(t));
  if (!any)
    return;
  report_figure f{"validation_ratios",
                  "Tuned / default time with 95% bootstrap CI (validate)",
                  "forest",
                  "tuned / default time",
                  "",
                  false,
                  false,
                  {},
                  {},
                  o.str()};
  c.figures.push_back(std::move(f));
}

} // namespace gpuprobe::analysis::report_detail
