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

// tune's decisions with their reasons, and the word-size measurement beside Theorem 1.
void tuning_part(const inputs &in, report_content &c) {
  if (!in.tuning.is_object()) {
    c.missing.push_back("tuning decisions (no tuning.json: `gpuprobe tune` not run)");
    return;
  }
  const json d = in.tuning.value("decisions", json::object());
  const json a = in.tuning.value("allocator", json::object());
  report_table t{"Tuning decisions (tuning.json)", {"decision", "choice", "reason"}, {}, ""};
  const auto reason = [&](const char *k) {
    return d.value(k, json::object()).value("reason", std::string("—"));
  };
  t.rows.push_back(
      {"bitmap word size", std::to_string(a.value("word_bits", 0)) + "-bit", reason("word_size")});
  t.rows.push_back({"TLB-scoped regions",
                    a.value("regions", 1) > 1
                        ? std::to_string(a.value("regions", 1)) + " regions of at most " +
                              format_bytes(a.value("max_region_bytes", 0.0))
                        : "one region",
                    reason("regions")});
  t.rows.push_back(
      {"CRW cluster placement", a.value("crw_start", std::string("?")), reason("crw_placement")});
  t.rows.push_back({"TLB scope of scoped kernels",
                    a.value("tlb_scope_bytes", 0.0) > 0
                        ? format_bytes(a.value("tlb_scope_bytes", 0.0))
                        : "one pass",
                    reason("tlb_scope")});
  c.tables.push_back(std::move(t));
  const json m = d.value("word_size", json::object()).value("measurements", json::array());
  if (m.empty())
    return;
  report_figure f{"word_size",
                  "Bitmap word size: get_page time, 32- vs 64-bit words (tune)",
                  "lines",
                  "free pages (%)",
                  "median time (ms)",
                  true,
                  true,
                  {},
                  {},
                  ""};
  std::ostringstream o;
  o << "series,style,x,y\n";
  for (const auto &p : m)
    for (const char *w : {"32", "64"}) {
      const std::string s = p.value("allocator", std::string("?")) + " " + w + "-bit";
      row(o, s, "line", 100 * p.value("free_fraction", 0.0), p.value(std::string("ms") + w, 0.0));
    }
  f.csv = o.str();
  c.figures.push_back(std::move(f));
}

} // namespace gpuprobe::analysis::report_detail
