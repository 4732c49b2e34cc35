#include "report/compare_page.hpp"

#include "common/escape.hpp"
#include "common/results_folder.hpp"
#include "common/units.hpp"
#include "probes/tlb/data.hpp"
#include "probes/tlb/levels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <tuple>

namespace gpuprobe::report {

namespace {

struct series {
  std::string name, colour;
  std::vector<double> x, y;
};

std::string fmt(double v, int digits = 1) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

// The round step (1, 2 or 5 x 10^k) nearest above `raw`.
double nice_step(double raw) {
  if (!(raw > 0))
    return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0})
    if (m * p >= raw * (1 - 1e-9))
      return m * p;
  return 10 * p;
}

// One inline SVG: the series as polylines with points, x logarithmic (footprints) or linear (SM
// ids), a few ticks on each axis, a legend. Every text from data is escaped.
std::string svg_plot(const std::vector<series> &all, bool logx, const std::string &xlabel,
                     const std::string &ylabel,
                     const std::vector<std::pair<double, std::string>> &vlines) {
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  const auto tx = [&](double x) { return logx ? std::log2(std::max(x, 1.0)) : x; };
  for (const auto &s : all)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      x0 = std::min(x0, tx(s.x[i]));
      x1 = std::max(x1, tx(s.x[i]));
      y0 = std::min(y0, s.y[i]);
      y1 = std::max(y1, s.y[i]);
    }
  if (!(x1 > x0))
    x1 = x0 + 1;
  if (!(y1 > y0))
    y1 = y0 + 1;
  const double pad = 0.05 * (y1 - y0);
  y0 -= pad;
  y1 += pad;
  // Room on the right for the last x tick's label, centred on the frame's edge ("384.00 GiB").
  const double W = 900, H = 340, L = 70, R = 50, T = 20, B = 50;
  const auto px = [&](double x) { return L + (tx(x) - x0) / (x1 - x0) * (W - L - R); };
  const auto py = [&](double y) { return T + (y1 - y) / (y1 - y0) * (H - T - B); };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << W << ' ' << H
    << "\" style=\"max-width:100%;height:auto\" role=\"img\">\n"
    << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << W - L - R << "\" height=\""
    << H - T - B << "\" fill=\"none\" stroke=\"#888\"/>\n";
  // y ticks at a round step, with the digits that step needs (a range of 10.6-11.4 cycles reads
  // 10.6, 10.8, ..., never five ticks of "11").
  const double step = nice_step((y1 - y0) / 4);
  const int digits = std::max(0, int(-std::floor(std::log10(step) + 1e-9)));
  for (double y = std::ceil(y0 / step) * step; y <= y1 + 1e-9 * step; y += step) {
    o << "<text x=\"" << L - 6 << "\" y=\"" << fmt(py(y) + 4) << "\" font-size=\"11\" "
      << "text-anchor=\"end\">" << fmt(y, digits) << "</text>\n";
  }
  for (int k = 0; k <= 6; ++k) { // x ticks
    const double t = x0 + (x1 - x0) * k / 6;
    const double x = logx ? std::exp2(t) : t;
    o << "<text x=\"" << fmt(L + (t - x0) / (x1 - x0) * (W - L - R)) << "\" y=\"" << H - B + 16
      << "\" font-size=\"11\" text-anchor=\"middle\">"
      << html_text(logx ? format_bytes(x) : fmt(x, 0)) << "</text>\n";
  }
  for (const auto &[x, label] : vlines) {
    if (tx(x) < x0 || tx(x) > x1)
      continue;
    o << "<line x1=\"" << fmt(px(x)) << "\" x2=\"" << fmt(px(x)) << "\" y1=\"" << T << "\" y2=\""
      << H - B << "\" stroke=\"#999\" stroke-dasharray=\"4 3\"/><text x=\"" << fmt(px(x) + 3)
      << "\" y=\"" << T + 12 << "\" font-size=\"10\">" << html_text(label) << "</text>\n";
  }
  o << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 8
    << "\" font-size=\"12\" text-anchor=\"middle\">" << html_text(xlabel) << "</text>\n"
    << "<text x=\"14\" y=\"" << (T + H - B) / 2 << "\" font-size=\"12\" text-anchor=\"middle\" "
    << "transform=\"rotate(-90 14 " << (T + H - B) / 2 << ")\">" << html_text(ylabel)
    << "</text>\n";
  int k = 0;
  for (const auto &s : all) {
    o << "<polyline fill=\"none\" stroke=\"" << s.colour << "\" stroke-width=\"1.5\" points=\"";
    for (std::size_t i = 0; i < s.x.size(); ++i)
      o << (i ? " " : "") << fmt(px(s.x[i])) << ',' << fmt(py(s.y[i]));
    o << "\"/>\n<text x=\"" << L + 10 << "\" y=\"" << T + 16 + 14 * ++k << "\" font-size=\"12\" "
      << "fill=\"" << s.colour << "\">" << html_text(s.name) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

// One folder's aliased sweep (raw/tlb.json), read once for every level drawn, or why there is none.
struct folder_sweep {
  std::string name, colour;
  std::optional<probes::tlb_dataset> data;
  std::string why; // not read: why
  folder_sweep(const std::string &dir, std::string n, std::string c)
      : name(std::move(n)), colour(std::move(c)) {
    const auto path = results_folder{dir}.raw(results_folder::raw_file::tlb);
    if (!std::filesystem::exists(path)) {
      why = name + ": raw/tlb.json is not in the folder";
      return;
    }
    try {
      data = probes::load_tlb_inputs({path.string()});
    } catch (const std::exception &e) {
      why = name + ": " + e.what();
    }
  }
  // Its mean curve at `stride`, or why there is none.
  std::optional<series> at(double stride, std::string &not_drawn) const {
    if (!data) {
      not_drawn = why;
      return std::nullopt;
    }
    for (const auto &c : data->curves)
      if (c.stride_bytes == stride)
        return series{name, colour, c.footprint_bytes,
                      c.mean_cycles.empty() ? c.cycles : c.mean_cycles};
    not_drawn = name + ": its sweep has no stride of " + format_bytes(stride);
    return std::nullopt;
  }
};

const model::tlb_level *level_of(const model::run_folder *f, std::size_t k) {
  return f && k < f->prof.tlb.levels.size() ? &f->prof.tlb.levels[k] : nullptr;
}

void findings_table(std::ostringstream &o, const std::vector<findings::compare_finding> &fs) {
  o << "<table><tr><th>area</th><th>finding</th><th>A</th><th>B</th><th>verdict</th><th>why</th>"
       "</tr>\n";
  for (const auto &f : fs)
    o << "<tr><td>" << html_text(f.area) << "</td><td>" << html_text(f.item) << "</td><td>"
      << html_text(f.a) << "</td><td>" << html_text(f.b) << "</td><td class=\"v\"><b>"
      << html_text(f.verdict) << "</b></td><td>" << html_text(f.why) << "</td></tr>\n";
  o << "</table>\n";
}

} // namespace

namespace {

// One level's part: the two sweeps at its page stride, overlaid (each read once, at the first
// level drawn), and the per-SM penalty maps where both runs measured them.
void level_part(std::ostringstream &o, const std::string &label, std::size_t k,
                const model::run_folder &a, const model::run_folder &b,
                std::optional<folder_sweep> &sweep_a, std::optional<folder_sweep> &sweep_b) {
  const auto *la = level_of(&a, k), *lb = level_of(&b, k);
  const double page = la ? la->coverage_bytes : lb->coverage_bytes;
  o << "<h2>" << html_text(label) << ": the two sweeps at its page stride, "
    << html_text(format_bytes(page)) << "</h2>\n";
  std::string why_a, why_b;
  std::vector<series> s;
  if (!sweep_a) {
    sweep_a.emplace(a.dir, "A", "#1f77b4");
    sweep_b.emplace(b.dir, "B", "#ff7f0e");
  }
  if (auto x = sweep_a->at(page, why_a))
    s.push_back(*x);
  if (auto x = sweep_b->at(page, why_b))
    s.push_back(*x);
  std::vector<std::pair<double, std::string>> marks;
  if (la)
    marks.emplace_back(la->reach_bytes, "A's reach");
  if (lb && (!la || lb->reach_bytes != la->reach_bytes))
    marks.emplace_back(lb->reach_bytes, "B's reach");
  if (!s.empty())
    o << svg_plot(s, true, "footprint", "mean cycles per hop", marks);
  for (const auto &w : {why_a, why_b})
    if (!w.empty())
      o << "<p>Not drawn: " << html_text(w) << "</p>\n";
  if (la && lb && la->per_sm && lb->per_sm) {
    std::vector<series> m;
    for (const auto &[L, name, colour] :
         {std::tuple{la, "A", "#1f77b4"}, std::tuple{lb, "B", "#ff7f0e"}}) {
      series x{name, colour, {}, L->per_sm->penalty_cycles};
      for (int sm : L->per_sm->sms)
        x.x.push_back(sm);
      m.push_back(x);
    }
    o << "<h3>" << html_text(label) << ": miss penalty per SM</h3>\n"
      << svg_plot(m, false, "SM id", "miss penalty, cycles per hop", {});
  }
}

} // namespace

std::string compare_page_html(const findings::compare_result &r, const model::run_folder *a,
                              const model::run_folder *b) {
  std::ostringstream o;
  o << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>gpuprobe compare</title>\n"
       "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
       "table{border-collapse:collapse;margin:1em 0;max-width:100%}td,th{border:1px solid #bbb;"
       "padding:3px 8px;text-align:left}td{overflow-wrap:break-word}td.v{white-space:nowrap}"
       ".a{color:#1f77b4}"
       ".b{color:#ff7f0e}</style></head><body>\n<h1>gpuprobe compare</h1>\n<p>A: <span class=\"a\">"
    << html_text(r.a_dir) << "</span><br>B: <span class=\"b\">" << html_text(r.b_dir)
    << "</span></p>\n";
  if (r.reanalyzed)
    o << "<p><b>Re-analysed:</b> both profiles were derived again from their raw measurements by "
         "this build.</p>\n";
  if (r.method_differs)
    o << "<p><b>Method:</b> " << html_text(r.method_note) << "</p>\n";
  std::vector<findings::compare_finding> prov, differ, same, noted;
  for (const auto &f : r.findings)
    (f.area == "provenance" ? prov
     : f.verdict == "SAME"  ? same
     : f.verdict == "NOTE"  ? noted
                            : differ)
        .push_back(f);
  o << "<h2>Provenance</h2>\n<table><tr><th></th><th class=\"a\">A</th><th class=\"b\">B</th>"
       "</tr>\n";
  for (const auto &f : prov)
    o << "<tr><td>" << html_text(f.item) << "</td><td>" << html_text(f.a) << "</td><td>"
      << html_text(f.b) << "</td></tr>\n";
  o << "</table>\n<h2>" << r.differences() << " difference" << (r.differences() == 1 ? "" : "s")
    << " (" << same.size() << " findings the same)</h2>\n";
  if (!differ.empty())
    findings_table(o, differ);
  // What differs but is not counted (as the Markdown page's "Said, not counted").
  if (!noted.empty()) {
    o << "<h2>Said, not counted (" << noted.size() << ")</h2>\n";
    findings_table(o, noted);
  }
  // Each level with a finding that differs: the sweeps at its page stride, overlaid; and the
  // per-SM penalty maps where both runs measured them.
  const std::size_t levels =
      std::max(a ? a->prof.tlb.levels.size() : 0, b ? b->prof.tlb.levels.size() : 0);
  std::optional<folder_sweep> sweep_a, sweep_b; // read at the first level drawn
  for (std::size_t k = 0; k < levels; ++k) {
    const std::string label = model::level_label(false, k);
    const bool differs = std::any_of(differ.begin(), differ.end(), [&](const auto &f) {
      return f.item == label || f.item.rfind(label + " ", 0) == 0;
    });
    if (!differs || !a || !b)
      continue;
    level_part(o, label, k, *a, *b, sweep_a, sweep_b);
  }
  if (!same.empty()) {
    o << "<details><summary>The " << same.size() << " findings that are the same</summary>\n";
    findings_table(o, same);
    o << "</details>\n";
  }
  o << "</body></html>\n";
  return o.str();
}

} // namespace gpuprobe::report
