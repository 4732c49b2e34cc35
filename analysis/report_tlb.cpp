#include "analysis/report_parts.hpp"

#include "analysis/tlb_data.hpp"
#include "analysis/tlb_levels.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::analysis::report_detail {

namespace fs = std::filesystem;

void tlb_part(const inputs& in, report_content& c) {
  if (in.tlb.empty()) {
    c.missing.push_back("TLB curves (raw/ holds no tlb result or CSV)");
    return;
  }
  const auto data = load_tlb_inputs(in.tlb);
  json levels = json::array(), candidates = json::array();
  std::string origin;
  if (in.profile.is_object() && in.profile.contains("tlb")) {
    levels = in.profile["tlb"].value("levels", json::array());
    candidates = in.profile["tlb"].value("candidates", json::array());
    origin = "profile.json";
  } else {
    const json a = to_json(analyze_tlb(data));
    levels = a["levels"];
    candidates = a["candidates"];
    origin = "analyzed here (no profile.json)";
  }
  report_figure f{"tlb_curves", "TLB: cycles per hop vs footprint, per stride (" + data.device_name + ")", "lines", "footprint (bytes)",
                  "cycles per hop", true, false, {}, {}, ""};
  std::ostringstream o;
  o << "series,style,x,y\n";
  std::map<double, int> per_stride;  // a stride measured by several files gets one series each
  for (const auto& cv : data.curves) ++per_stride[cv.stride_bytes];
  for (const auto& cv : data.curves) {
    std::string name = "stride " + format_bytes(cv.stride_bytes);
    if (per_stride[cv.stride_bytes] > 1) name += " (" + fs::path(cv.source).stem().string() + ")";
    for (std::size_t i = 0; i < cv.footprint_bytes.size(); ++i) row(o, name, "line", cv.footprint_bytes[i], cv.cycles[i]);
  }
  f.csv = o.str();
  report_table t{"TLB levels (" + origin + ")", {"kind", "entries", "page", "reach", "miss penalty (cycles)", "confidence"}, {}, ""};
  int k = 0;
  for (const auto* list : {&levels, &candidates}) {
    const bool lv = list == &levels;
    for (const auto& L : *list) {
      const double reach = L.value("reach_bytes", 0.0);
      f.vlines.emplace_back(reach, (lv ? "L" + std::to_string(++k) : std::string("candidate")) + " " + format_bytes(reach));
      t.rows.push_back({lv ? "level" : "candidate", num(L.value("entries", 0.0)), format_bytes(L.value("page_bytes", 0.0)), format_bytes(reach),
                        num(L.value("miss_penalty_cycles", 0.0), 3), num(L.value("confidence", 0.0), 2)});
    }
  }
  if (t.rows.empty()) t.note = "No TLB boundary found in the footprints measured.";
  c.figures.push_back(std::move(f));
  c.tables.push_back(std::move(t));
}

}  // namespace gpuprobe::analysis::report_detail
