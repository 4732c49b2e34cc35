#include "report/parts.hpp"

#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::report::detail {

namespace fs = std::filesystem;

void validation_part(const inputs &in, report_content &c) {
  if (!in.validation) {
    c.missing.push_back("validation (no validation.json: `gpuprobe validate` not run)");
    return;
  }
  report_table t{"Validation: default vs tuned (ratio = tuned / default time, < 1: tuned faster)",
                 {"workload", "pool", "default → tuned", "median default", "median tuned",
                  "ratio (95% CI)", "p (Holm)", "verdict"},
                 {},
                 in.validation->summary};
  std::ostringstream o;
  o << "label,ratio,low,high,verdict\n";
  bool any = false;
  for (const auto &w : in.validation->workloads) {
    const std::string &name = w.workload, &pool = w.pool;
    const std::string cfg = w.config_default + " → " + w.config_tuned;
    if (!w.measured) {
      t.rows.push_back({name, pool, cfg, "—", "—", "—", "—", w.verdict});
      continue;
    }
    const double ratio = w.ratio.value_or(0), lo = w.ci_low.value_or(0), hi = w.ci_high.value_or(0);
    t.rows.push_back({name, pool, cfg, num(w.median_default_ms.value_or(0)) + " ms",
                      num(w.median_tuned_ms.value_or(0)) + " ms",
                      num(ratio, 3) + " (" + num(lo, 3) + "–" + num(hi, 3) + ")",
                      num(w.p_holm.value_or(1), 3), w.verdict});
    std::string label = name + " (" + pool + ")";
    for (auto &ch : label)
      if (ch == ',')
        ch = ';';
    o << '"' << label << "\"," << num(ratio, 10) << ',' << num(lo, 10) << ',' << num(hi, 10) << ','
      << w.verdict << '\n';
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

} // namespace gpuprobe::report::detail
