#include "analysis/report.hpp"

#include "analysis/sharing.hpp"
#include "analysis/tlb_data.hpp"
#include "analysis/tlb_levels.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::analysis {

namespace fs = std::filesystem;
using nlohmann::json;

json report_figure::manifest() const {
  json v = json::array(), b = json::array();
  for (const auto& [x, label] : vlines) v.push_back({{"x", x}, {"label", label}});
  for (const auto& [lo, hi] : boxes) b.push_back({lo, hi});
  return {{"id", id}, {"title", title}, {"kind", kind}, {"xlabel", xlabel}, {"ylabel", ylabel},
          {"logx", logx}, {"logy", logy}, {"vlines", v}, {"boxes", b}, {"csv", id + ".csv"}};
}

namespace {

std::string num(double x, int digits = 4) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, x);
  return b;
}
void row(std::ostringstream& o, const std::string& series, const std::string& style, double x, double y) {
  if (std::isfinite(x) && std::isfinite(y)) o << '"' << series << "\"," << style << ',' << num(x, 10) << ',' << num(y, 10) << '\n';
}

struct inputs {
  std::vector<std::string> tlb, sharing;
  std::vector<std::pair<std::string, json>> atomics, bench;
  json profile, tuning, validation;
  std::string device;
};

inputs scan(const std::string& dir, report_content& c) {
  if (!fs::is_directory(dir)) throw error("report: '" + dir + "' is not a folder");
  inputs in;
  std::vector<fs::path> files;
  const fs::path raw = fs::path(dir) / "raw";
  if (fs::is_directory(raw))
    for (const auto& e : fs::directory_iterator(raw))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    const std::string path = p.string(), ext = p.extension().string();
    if (ext == ".csv") {
      in.tlb.push_back(path);
    } else if (ext == ".txt") {
      in.sharing.push_back(path);
    } else if (ext == ".json") {
      const json doc = read_json_file(path);
      const std::string schema = doc.value("schema", "");
      if (doc.contains("benchmarks")) {
        in.bench.emplace_back(path, doc);
      } else if (schema.rfind("gpuprobe.profile/", 0) == 0 || schema.rfind("gpuprobe.sharing/", 0) == 0) {
        continue;  // derived files (a stage's TLB profile, an analysis): the raw results are drawn
      } else {
        require_schema(doc, schema::result, path);
        const std::string probe = doc.value("probe", "");
        if (probe == "tlb") in.tlb.push_back(path);
        else if (probe == "atomics") in.atomics.emplace_back(path, doc);
        else if (probe == "tlb-sharing") in.sharing.push_back(path);
        else throw error("report: '" + path + "' is a result of unknown probe '" + probe + "'");
        if (in.device.empty() && doc.contains("device")) {
          const auto& d = doc["device"];
          const auto text = [&](const char* k) { return d.contains(k) ? (d[k].is_string() ? d[k].get<std::string>() : d[k].dump()) : "?"; };
          in.device = text("name") + ", " + text("sm_count") + " SMs, UUID " + text("uuid") + ", driver " + text("driver_version") +
                      ", SM clock seen " + text("sm_clock_mhz_seen") + " MHz";
        }
      }
    } else {
      continue;
    }
    c.sources.push_back(path);
  }
  const fs::path prof = fs::path(dir) / "profile.json", val = fs::path(dir) / "validation.json", tun = fs::path(dir) / "tuning.json";
  if (fs::exists(prof)) {
    in.profile = read_json_file(prof.string());
    require_schema(in.profile, schema::profile, prof.string());
    c.sources.push_back(prof.string());
  }
  if (fs::exists(tun)) {
    in.tuning = read_json_file(tun.string());
    require_schema(in.tuning, schema::tuning, tun.string());
    c.sources.push_back(tun.string());
  }
  if (fs::exists(val)) {
    in.validation = read_json_file(val.string());
    require_schema(in.validation, schema::validation, val.string());
    c.sources.push_back(val.string());
  }
  return in;
}

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

void atomics_part(const inputs& in, report_content& c) {
  if (in.atomics.empty()) {
    c.missing.push_back("atomic latency (raw/ holds no atomics result)");
    return;
  }
  for (std::size_t r = 0; r < in.atomics.size(); ++r) {
    const auto& doc = in.atomics[r].second;
    report_figure f{"atomics_latency" + (r ? "_" + std::to_string(r + 1) : std::string()), "Atomic latency vs threads: measured, fit, queue model",
                    "lines", "threads", "mean cycles per atomic", true, true, {}, {}, ""};
    report_table t{"Atomics fits", {"variant", "slope (cycles/thread)", "r2", "fit range (threads)", "queue model slope"}, {}, ""};
    std::ostringstream o;
    o << "series,style,x,y\n";
    for (const auto& v : doc["atomics"].value("variants", json::array())) {
      const std::string name = v.value("variant", "?");
      std::vector<double> xs;
      for (const auto& p : v.value("points", json::array())) {
        row(o, name, "points", p.value("threads", 0.0), p.value("mean_cycles", 0.0));
        xs.push_back(p.value("threads", 0.0));
      }
      const auto fit = v.value("fit", json::object());
      const double a = fit.value("intercept_cycles", 0.0), b = fit.value("slope_cycles_per_thread", 0.0);
      const double lo = fit.value("from_threads", 0.0), hi = fit.value("to_threads", 0.0);
      for (double x : xs)
        if (x >= lo && x <= hi) row(o, name + " fit", "dashed", x, a + b * x);
      const auto model = v.value("queue_model", json::object());
      if (model.value("applies", false) && model.contains("mean_cycles") && model["mean_cycles"].is_array())
        for (std::size_t i = 0; i < std::min(xs.size(), model["mean_cycles"].size()); ++i)
          row(o, name + " queue model", "dotted", xs[i], model["mean_cycles"][i].get<double>());
      t.rows.push_back({name, num(b), num(fit.value("r2", 0.0), 3), num(lo) + "–" + num(hi),
                        model.value("applies", false) ? num(model.value("predicted_slope_cycles_per_thread", 0.0)) : "n/a"});
    }
    f.csv = o.str();
    c.figures.push_back(std::move(f));
    c.tables.push_back(std::move(t));
  }
}

void sharing_part(const inputs& in, report_content& c) {
  if (in.sharing.empty()) {
    c.missing.push_back("TLB sharing (raw/ holds no tlb-sharing result or matrix)");
    return;
  }
  report_table t{"TLB sharing", {"input", "scope", "groups", "reason"}, {}, ""};
  int k = 0;
  for (const auto& path : in.sharing) {
    const auto m = load_sharing_input(path);
    const auto a = analyze_sharing(m);
    // Rows and columns in group order (members of a group adjacent), so each group is one box.
    std::vector<int> order;
    report_figure f{"sharing_" + std::to_string(++k), "Sharing: " + fs::path(path).filename().string() + " — " + to_string(a.scope), "heatmap",
                    "disruptor SM", "victim SM: cycles per hop above the row's reference", false, false, {}, {}, ""};
    std::vector<bool> used(m.sm_ids.size(), false);
    std::map<int, std::size_t> index;
    for (std::size_t i = 0; i < m.sm_ids.size(); ++i) index[m.sm_ids[i]] = i;
    std::string groups;
    for (const auto& g : a.groups) {
      const int first = int(order.size());
      for (int id : g)
        if (index.count(id) && !used[index[id]]) order.push_back(int(index[id])), used[index[id]] = true;
      f.boxes.emplace_back(first, int(order.size()) - 1);
      groups += (groups.empty() ? "" : " ") + std::string("{");
      for (std::size_t j = 0; j < g.size(); ++j) groups += (j ? "," : "") + std::to_string(g[j]);
      groups += "}";
    }
    for (std::size_t i = 0; i < used.size(); ++i)
      if (!used[i]) order.push_back(int(i));
    std::ostringstream o;
    for (std::size_t j = 0; j < order.size(); ++j) o << (j ? "," : "") << m.sm_ids[std::size_t(order[j])];
    o << '\n';
    for (int i : order) {
      const auto& r = m.cycles[std::size_t(i)];
      std::vector<double> sorted(r);
      std::sort(sorted.begin(), sorted.end());
      const double ref = m.baseline.empty() ? sorted[sorted.size() / 2] : m.baseline[std::size_t(i)];
      for (std::size_t j = 0; j < order.size(); ++j) o << (j ? "," : "") << num(r[std::size_t(order[j])] - ref, 6);
      o << '\n';
    }
    f.csv = o.str();
    c.figures.push_back(std::move(f));
    t.rows.push_back({fs::path(path).filename().string(), to_string(a.scope), groups.empty() ? "—" : groups, a.reason});
  }
  c.tables.push_back(std::move(t));
}

// BM_getpage/<alloc>/threads:<n>/free_permille:<f> cases with TAS/WAS and their theory.
void theory_part(const inputs& in, report_content& c) {
  struct cell {
    std::string alloc;
    int permille;
    double threads, tas, tas_th, was, was_th;
  };
  std::vector<cell> cells;
  for (const auto& [path, doc] : in.bench)
    for (const auto& b : doc["benchmarks"]) {
      const std::string name = b.value("name", "");
      if (name.rfind("BM_getpage/", 0) != 0 || !b.contains("TAS") || !b.contains("TAS_theory")) continue;
      const auto a0 = name.find('/') + 1, a1 = name.find('/', a0);
      const auto t0 = name.find("threads:"), f0 = name.find("free_permille:");
      if (t0 == std::string::npos || f0 == std::string::npos) continue;
      const std::string alloc = name.substr(a0, a1 - a0);
      if (alloc != "rw" && alloc.rfind("rw_bm", 0) != 0) continue;  // the models of Eqs. 3-6
      const std::string tn = name.substr(t0 + 8, name.find('/', t0) - t0 - 8);
      if (tn == "full") continue;
      cells.push_back({alloc, std::atoi(name.c_str() + f0 + 14), std::atof(tn.c_str()), b.value("TAS", 0.0), b.value("TAS_theory", 0.0),
                       b.value("WAS", 0.0), b.value("WAS_theory", 0.0)});
    }
  if (cells.empty()) {
    c.missing.push_back("TAS/WAS vs theory (raw/ holds no gpuprobe-bench BM_getpage results)");
    return;
  }
  for (const bool was : {false, true}) {
    report_figure f{was ? "was_vs_theory" : "tas_vs_theory",
                    was ? "WAS measured vs the Eq. 4/6 bound (RW paper Fig. 11-12)" : "TAS measured vs Eqs. 3/5 (RW paper Fig. 11-12)", "lines",
                    "threads", was ? "warp average steps" : "thread average steps", true, true, {}, {}, ""};
    std::ostringstream o;
    o << "series,style,x,y\n";
    for (const auto& e : cells) {
      const std::string s = e.alloc + " " + std::to_string(e.permille) + "‰ free";
      row(o, s, "points", e.threads, was ? e.was : e.tas);
      row(o, s + " theory", "dashed", e.threads, was ? e.was_th : e.tas_th);
    }
    f.csv = o.str();
    c.figures.push_back(std::move(f));
  }
}

// tune's decisions with their reasons, and the word-size measurement beside Theorem 1.
void tuning_part(const inputs& in, report_content& c) {
  if (!in.tuning.is_object()) {
    c.missing.push_back("tuning decisions (no tuning.json: `gpuprobe tune` not run)");
    return;
  }
  const json d = in.tuning.value("decisions", json::object());
  const json a = in.tuning.value("allocator", json::object());
  report_table t{"Tuning decisions (tuning.json)", {"decision", "choice", "reason"}, {}, ""};
  const auto reason = [&](const char* k) { return d.value(k, json::object()).value("reason", std::string("—")); };
  t.rows.push_back({"bitmap word size", std::to_string(a.value("word_bits", 0)) + "-bit", reason("word_size")});
  t.rows.push_back({"TLB-scoped regions",
                    a.value("regions", 1) > 1 ? std::to_string(a.value("regions", 1)) + " regions of at most " +
                                                    format_bytes(a.value("max_region_bytes", 0.0))
                                              : "one region",
                    reason("regions")});
  t.rows.push_back({"CRW cluster placement", a.value("crw_start", std::string("?")), reason("crw_placement")});
  t.rows.push_back({"TLB scope of scoped kernels", a.value("tlb_scope_bytes", 0.0) > 0 ? format_bytes(a.value("tlb_scope_bytes", 0.0)) : "one pass",
                    reason("tlb_scope")});
  c.tables.push_back(std::move(t));
  const json m = d.value("word_size", json::object()).value("measurements", json::array());
  if (m.empty()) return;
  report_figure f{"word_size", "Bitmap word size: get_page time, 32- vs 64-bit words (tune)", "lines", "free pages (%)", "median time (ms)",
                  true, true, {}, {}, ""};
  std::ostringstream o;
  o << "series,style,x,y\n";
  for (const auto& p : m)
    for (const char* w : {"32", "64"}) {
      const std::string s = p.value("allocator", std::string("?")) + " " + w + "-bit";
      row(o, s, "line", 100 * p.value("free_fraction", 0.0), p.value(std::string("ms") + w, 0.0));
    }
  f.csv = o.str();
  c.figures.push_back(std::move(f));
}

void validation_part(const inputs& in, report_content& c) {
  if (!in.validation.is_object()) {
    c.missing.push_back("validation (no validation.json: `gpuprobe validate` not run)");
    return;
  }
  report_table t{"Validation: default vs tuned (ratio = tuned / default time, < 1: tuned faster)",
                 {"workload", "pool", "default → tuned", "median default", "median tuned", "ratio (95% CI)", "p (Holm)", "verdict"},
                 {},
                 in.validation.value("summary", std::string(""))};
  std::ostringstream o;
  o << "label,ratio,low,high,verdict\n";
  bool any = false;
  for (const auto& w : in.validation.value("workloads", json::array())) {
    const std::string name = w.value("workload", std::string("?")), pool = w.value("pool", std::string("?"));
    const std::string cfg = w.value("config_default", std::string("?")) + " → " + w.value("config_tuned", std::string("?"));
    if (!w.value("measured", true)) {
      t.rows.push_back({name, pool, cfg, "—", "—", "—", "—", w.value("verdict", std::string("not tuned"))});
      continue;
    }
    t.rows.push_back({name, pool, cfg, num(w.value("median_default_ms", 0.0)) + " ms", num(w.value("median_tuned_ms", 0.0)) + " ms",
                      num(w.value("ratio", 0.0), 3) + " (" + num(w.value("ci_low", 0.0), 3) + "–" + num(w.value("ci_high", 0.0), 3) + ")",
                      num(w.value("p_holm", 1.0), 3), w.value("verdict", std::string("?"))});
    std::string label = name + " (" + pool + ")";
    for (auto& ch : label)
      if (ch == ',') ch = ';';
    o << '"' << label << "\"," << num(w.value("ratio", 0.0), 10) << ',' << num(w.value("ci_low", 0.0), 10) << ',' << num(w.value("ci_high", 0.0), 10)
      << ',' << w.value("verdict", std::string("?")) << '\n';
    any = true;
  }
  c.tables.push_back(std::move(t));
  if (!any) return;
  report_figure f{"validation_ratios", "Tuned / default time with 95% bootstrap CI (validate)", "forest", "tuned / default time", "", false, false,
                  {}, {}, o.str()};
  c.figures.push_back(std::move(f));
}

std::string escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '<') o += "&lt;";
    else if (ch == '>') o += "&gt;";
    else if (ch == '&') o += "&amp;";
    else o += ch;
  }
  return o;
}

}  // namespace

report_content build_report(const std::string& dir) {
  report_content c;
  const inputs in = scan(dir, c);
  c.device = in.device.empty() ? "device not recorded (2017-format inputs only)" : in.device;
  tlb_part(in, c);
  sharing_part(in, c);
  atomics_part(in, c);
  theory_part(in, c);
  tuning_part(in, c);
  validation_part(in, c);
  return c;
}

std::string base64(const std::string& bytes) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string o;
  o.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t v = 0;
    for (std::size_t j = 0; j < 3; ++j) v = v << 8 | (j < n ? std::uint8_t(bytes[i + j]) : 0u);
    for (std::size_t j = 0; j < 4; ++j) o += j <= n ? k[(v >> (18 - 6 * j)) & 63] : '=';
  }
  return o;
}

std::string render_html(const report_content& c, const std::map<std::string, std::string>& png) {
  std::ostringstream o;
  o << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>gpuprobe report</title>\n"
       "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse;margin:1em 0}"
       "td,th{border:1px solid #bbb;padding:3px 8px;text-align:left}img{max-width:100%}figure{margin:2em 0}</style></head><body>\n";
  o << "<h1>gpuprobe report</h1>\n<p>" << escape(c.device) << "</p>\n";
  for (const auto& f : c.figures) {
    const auto it = png.find(f.id);
    const std::string src = it != png.end() ? "data:image/png;base64," + base64(it->second) : "figures/" + f.id + ".png";
    o << "<figure><img src=\"" << src << "\" alt=\"" << escape(f.title) << "\"><figcaption>" << escape(f.title) << " — <a href=\"figures/"
      << f.id << ".png\">PNG</a>, <a href=\"figures/" << f.id << ".svg\">SVG</a>, <a href=\"figures/" << f.id << ".csv\">CSV</a></figcaption></figure>\n";
  }
  for (const auto& t : c.tables) {
    o << "<h2>" << escape(t.title) << "</h2>\n";
    if (!t.note.empty()) o << "<p>" << escape(t.note) << "</p>\n";
    if (t.rows.empty()) continue;
    o << "<table><tr>";
    for (const auto& h : t.header) o << "<th>" << escape(h) << "</th>";
    o << "</tr>\n";
    for (const auto& r : t.rows) {
      o << "<tr>";
      for (const auto& cell : r) o << "<td>" << escape(cell) << "</td>";
      o << "</tr>\n";
    }
    o << "</table>\n";
  }
  if (!c.missing.empty()) {
    o << "<h2>Not in this folder</h2><ul>\n";
    for (const auto& m : c.missing) o << "<li>" << escape(m) << "</li>\n";
    o << "</ul>\n";
  }
  o << "<h2>Inputs</h2><ul>\n";
  for (const auto& s : c.sources) o << "<li>" << escape(s) << "</li>\n";
  o << "</ul></body></html>\n";
  return o.str();
}

std::string render_markdown(const report_content& c) {
  std::ostringstream o;
  o << "# gpuprobe report\n\n" << c.device << "\n\n";
  for (const auto& f : c.figures) o << "![" << f.title << "](figures/" << f.id << ".png)\n\n";
  for (const auto& t : c.tables) {
    o << "## " << t.title << "\n\n";
    if (!t.note.empty()) o << t.note << "\n\n";
    if (t.rows.empty()) continue;
    o << "|";
    for (const auto& h : t.header) o << ' ' << h << " |";
    o << "\n|";
    for (std::size_t i = 0; i < t.header.size(); ++i) o << "---|";
    o << "\n";
    for (const auto& r : t.rows) {
      o << "|";
      for (const auto& cell : r) o << ' ' << cell << " |";
      o << "\n";
    }
    o << "\n";
  }
  if (!c.missing.empty()) {
    o << "## Not in this folder\n\n";
    for (const auto& m : c.missing) o << "- " << m << "\n";
  }
  return o.str();
}

}  // namespace gpuprobe::analysis
