#include "report/parts.hpp"

#include "common/error.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::report::detail {

namespace fs = std::filesystem;

// tune's decisions with their reasons, and the word-size measurement beside Theorem 1.
void tuning_part(const inputs &in, report_content &c) {
  if (!in.tuning) {
    c.missing.push_back("tuning decisions (no tuning.json: `gpuprobe tune` not run)");
    return;
  }
  const model::tuning_file &tf = *in.tuning;
  const alloc::tuning &a = tf.allocator;
  report_table t{"Tuning decisions (tuning.json)", {"decision", "choice", "reason"}, {}, ""};
  const auto reason = [&](const char *k) {
    const auto &d = tf.decision(k);
    return d ? d->reason : std::string("—");
  };
  t.rows.push_back({"bitmap word size", std::to_string(a.word_bits) + "-bit", reason("word_size")});
  t.rows.push_back({"TLB-scoped regions",
                    a.regions > 1 ? std::to_string(a.regions) + " regions of at most " +
                                        format_bytes(double(a.max_region_bytes))
                                  : "one region",
                    reason("regions")});
  t.rows.push_back({"CRW cluster placement", alloc::to_string(a.crw), reason("crw_placement")});
  t.rows.push_back({"TLB scope of scoped kernels",
                    tf.tlb_scope_missing    ? "not in tuning.json"
                    : a.tlb_scope_bytes > 0 ? format_bytes(double(a.tlb_scope_bytes))
                                            : "one pass",
                    reason("tlb_scope")});
  c.tables.push_back(std::move(t));
  std::vector<model::word_measurement> m;
  try {
    m = model::word_measurements(tf);
  } catch (const gpuprobe::error
               &e) { // the table stands; the figure is not drawn, and the page says why
    c.skipped.push_back(std::string("the word-size figure: ") + e.what());
    return;
  }
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
  for (const auto &p : m) {
    row(o, p.allocator + " 32-bit", "line", 100 * p.free_fraction, p.ms32);
    row(o, p.allocator + " 64-bit", "line", 100 * p.free_fraction, p.ms64);
  }
  f.csv = o.str();
  c.figures.push_back(std::move(f));
}

} // namespace gpuprobe::report::detail
