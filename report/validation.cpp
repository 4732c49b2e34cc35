#include "report/parts.hpp"

#include "common/escape.hpp"
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
    // A value not recorded is shown as missing, never as 0, and is not drawn.
    const auto shown = [](const std::optional<double> &v, int digits, const char *unit = "") {
      return v ? num(*v, digits) + unit : std::string("—");
    };
    const bool has_ci = w.ratio && w.ci_low && w.ci_high;
    t.rows.push_back(
        {name, pool, cfg, shown(w.median_default_ms, 4, " ms"), shown(w.median_tuned_ms, 4, " ms"),
         shown(w.ratio, 3) + " (" + shown(w.ci_low, 3) + "–" + shown(w.ci_high, 3) + ")",
         shown(w.p_holm, 3),
         has_ci ? w.verdict : "— (no ratio recorded; the file says '" + w.verdict + "')"});
    if (!has_ci)
      continue;
    o << csv_field(name + " (" + pool + ")") << ',' << num(*w.ratio, 10) << ','
      << num(*w.ci_low, 10) << ',' << num(*w.ci_high, 10) << ',' << csv_field(w.verdict) << '\n';
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
