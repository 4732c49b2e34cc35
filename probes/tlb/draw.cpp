#include "probes/kit.hpp"
#include "probes/tlb/probe.hpp"

#include "common/units.hpp"
#include "probes/tlb/data.hpp"
#include "probes/tlb/levels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>

namespace gpuprobe::probes::tlb {

using namespace kit; // the report's inputs, types and helpers (probes/kit.hpp)
using model::level_label;

namespace fs = std::filesystem;

namespace {

using vlines = std::vector<std::pair<double, std::string>>;

// The lines CSV of `curves`, keeping the points with lo <= x <= hi; a stride measured by several
// files gets a series per file.
std::string curves_csv(const std::vector<const tlb_curve *> &curves, double lo, double hi) {
  std::ostringstream o;
  o << "series,style,x,y\n";
  std::map<double, int> per_stride;
  for (const auto *cv : curves)
    ++per_stride[cv->stride_bytes];
  for (const auto *cv : curves) {
    std::string name = "stride " + format_bytes(cv->stride_bytes);
    if (per_stride[cv->stride_bytes] > 1)
      name += " (" + fs::path(cv->source).stem().string() + ")";
    for (std::size_t i = 0; i < cv->footprint_bytes.size(); ++i)
      if (cv->footprint_bytes[i] >= lo && cv->footprint_bytes[i] <= hi)
        row(o, name, "line", cv->footprint_bytes[i], cv->cycles[i]);
  }
  return o.str();
}

report_figure curve_figure(std::string id, std::string title, vlines marks, std::string csv) {
  return {std::move(id), std::move(title), "lines", "footprint (bytes)", "cycles per hop", true,
          false,         std::move(marks), {},      std::move(csv)};
}

// The curves as figures a reader can read: the sweep the levels were found on (raw/tlb.json, the
// aliased chase) apart from the cross-check's curves (raw/tlb_real.json), and each level in a
// figure of its own range, with the strides up to its page, so that a step of 10 cycles is not
// lost on an axis that spans 500.
void curve_figures(const tlb_dataset &data, const model::tlb_hierarchy &tlb, const vlines &reaches,
                   report_content &c) {
  const auto stem = [](const tlb_curve &cv) { return fs::path(cv.source).stem().string(); };
  const bool has_sweep = std::any_of(data.curves.begin(), data.curves.end(),
                                     [&](const tlb_curve &cv) { return stem(cv) == "tlb"; });
  std::vector<const tlb_curve *> sweep, others;
  for (const auto &cv : data.curves)
    (has_sweep && stem(cv) != "tlb" ? others : sweep).push_back(&cv);
  const double all = std::numeric_limits<double>::infinity();
  c.figures.push_back(
      curve_figure("tlb_curves",
                   "TLB: cycles per hop vs footprint, per stride (" + data.device_name +
                       (others.empty() ? ")" : ", raw/tlb.json: the sweep the levels come from)"),
                   reaches, curves_csv(sweep, 0, all)));
  if (!others.empty())
    c.figures.push_back(curve_figure("tlb_real_curves",
                                     "TLB cross-check: the same strides on real memory (" +
                                         data.device_name + ", the other raw/tlb*.json)",
                                     reaches, curves_csv(others, 0, all)));
  for_each_level(tlb, [&](const model::tlb_level &L, bool, const std::string &label) {
    const double reach = L.reach_bytes, page = L.coverage_bytes;
    double lo = reach / 8, hi = reach * 8;
    vlines marks = {{reach, label + " " + format_bytes(reach)}};
    double full = reach;
    if (L.structure && L.structure->resolved && L.structure->full_miss_entries) {
      full = *L.structure->full_miss_entries * page;
      if (full > reach * 1.25) // a mark of its own where the labels do not overlap
        marks.emplace_back(full, "every hop misses " + format_bytes(full));
      hi = std::max(hi, full * 2);
    }
    for (const auto &[r, name] : reaches) // up to the next level: its rise is its own figure's
      if (r > full * 1.05)
        hi = std::min(hi, r * 0.95);
    // The strides that show the level at its reach: from an eighth of its page to the page (the
    // smaller ones stay within a few pages and only add lines); else every stride up to the page.
    std::vector<const tlb_curve *> mine, up_to_page;
    for (const auto *cv : sweep)
      if (cv->stride_bytes <= page) {
        up_to_page.push_back(cv);
        if (cv->stride_bytes * 8 >= page)
          mine.push_back(cv);
      }
    if (mine.empty())
      mine = up_to_page.empty() ? sweep : up_to_page;
    std::string csv = curves_csv(mine, lo, hi);
    if (std::count(csv.begin(), csv.end(), '\n') < 3)
      return; // nothing measured around this level
    char title[200];
    std::snprintf(title, sizeof title,
                  "%s: %s x %s = %s, +%.0f cycles (strides of 1/8 of the page to the page)",
                  label.c_str(), num(L.entries.value_or(0)).c_str(), format_bytes(page).c_str(),
                  format_bytes(reach).c_str(), L.miss_penalty_cycles.value_or(0));
    c.figures.push_back(curve_figure("tlb_level_" + label, title, marks, std::move(csv)));
  });
}

// Each level's structure: the ramp (or step) between where misses begin and where every hop
// misses, its fit, and the ways the conflict sets give.
void structure_table(const model::tlb_hierarchy &tlb, report_content &c) {
  report_table st{"Structure of each level (profile.json tlb.levels[].structure)",
                  {"", "entries", "ways x sets", "misses begin / every hop misses", "shape, fit",
                   "conflict sets (pages)", "set index", "intervals"},
                  {},
                  ""};
  for (std::size_t k = 0; k < tlb.levels.size(); ++k) {
    const auto &L = tlb.levels[k];
    if (!L.structure)
      continue;
    const auto &S = *L.structure;
    const double page = L.coverage_bytes;
    const bool ok = S.resolved;
    const auto cf = S.conflict && !S.conflict->empty()
                        ? std::optional(model::level_conflict_from_json(*S.conflict))
                        : std::nullopt;
    const std::string intervals = interval_words(L);
    std::string sizes;
    for (const int n : cf ? cf->set_sizes : std::vector<int>{})
      sizes += (sizes.empty() ? "" : " ") + std::to_string(n);
    st.rows.push_back(
        {level_label(false, k), num(L.entries.value_or(0)),
         ok ? structure_words(L) : "not resolved",
         ok ? format_bytes(S.entries.value_or(0) * page) + " / " +
                  format_bytes(S.full_miss_entries.value_or(0) * page)
            : "—",
         ok ? S.shape + ", residual " + num(S.residual_cycles.value_or(0), 2) + " cycles of " +
                  num(S.after_cycles.value_or(0) - S.before_cycles.value_or(0), 3)
            : S.why.value_or("?"),
         !cf        ? "—"
         : cf->ways ? sizes + ": " + num(*cf->ways) + " ways, " +
                          (cf->agrees.value_or(false) ? "agrees" : "does not agree")
                    : (cf->why.empty() ? "?" : cf->why),
         cf && cf->set_index ? *cf->set_index : "—", intervals.empty() ? "—" : intervals});
  }
  if (!st.rows.empty()) {
    st.note = "A level of S sets of W ways under a cyclic walk: misses begin past S x W pages and "
              "every hop misses from S x (W + 1); the ramp between gives the sets, a conflict set "
              "(pages that evict each other, found by group testing) holds W + 1.";
    c.tables.push_back(std::move(st));
  }
}

// characterize's cross-check of each level: real memory, what serves a miss, random sampling.
void cross_check_table(const report_inputs &in, report_content &c) {
  if (!in.profile || !in.profile->tlb.cross_check)
    return;
  const model::tlb_cross_check &check = *in.profile->tlb.cross_check;
  report_table x{
      "Cross-check of each level (profile.json tlb.cross_check)",
      {"", "real-memory chase", "a miss is served by", "random sampling below/above the reach"},
      {},
      ""};
  for (const auto &r : check.levels)
    x.rows.push_back({r.level, r.real_memory, r.miss_served_by.value_or("—"),
                      r.sampling ? r.sampling->verdict.value_or("—") : "—"});
  if (const auto &sp = check.l2_split)
    x.note = "Real-memory chase: near/far L2 split " + num(sp->split_cycles.value_or(0), 3) +
             " cycles (p10 " + num(sp->p10_cycles.value_or(0), 3) + ", p90 " +
             num(sp->p90_cycles.value_or(0), 3) + " per hop).";
  if (const auto &m = check.memory_access)
    x.note += " Memory access: L2 hit " + num(m->l2_hit_cycles.value_or(0), 3) + ", DRAM " +
              num(m->memory_cycles.value_or(0), 3) + " cycles (" + m->source.value_or("") + ").";
  c.tables.push_back(std::move(x));
}

} // namespace

void draw(const report_inputs &in, report_content &c) {
  const bool have_profile = in.profile.has_value();
  const auto files = in.paths_of(entry.id); // tlb results and the 2017 tool's CSVs
  if (files.empty() && !have_profile) {
    c.missing.push_back(
        "TLB curves and levels (raw/ holds no tlb result or CSV, and there is no profile.json)");
    return;
  }
  model::tlb_hierarchy tlb;
  std::string origin;
  tlb_dataset data;
  if (!files.empty()) { // the documents the report's scan parsed (the 2017 tool's CSVs by path)
    std::vector<probes::tlb_input> given;
    for (const auto &r : in.of(entry.id))
      given.push_back({r.path, r.doc.is_null() ? nullptr : &r.doc});
    data = load_tlb_inputs(given);
  }
  if (have_profile) {
    tlb = in.profile->tlb;
    origin = "profile.json";
  } else {
    tlb = analyze_tlb(data);
    origin = "analyzed here (no profile.json)";
  }
  report_table t{"TLB levels (" + origin + ")",
                 {"", "kind", "entries", "coverage per entry", "reach", "miss penalty, cycles (ns)",
                  "confidence", "tlb-coverage's finding"},
                 {},
                 ""};
  vlines reaches;
  for_each_level(tlb, [&](const model::tlb_level &L, bool candidate, const std::string &label) {
    const double reach = L.reach_bytes;
    reaches.emplace_back(reach, label + " " + format_bytes(reach));
    t.rows.push_back({label, candidate ? "candidate" : "level", num(L.entries.value_or(0)),
                      format_bytes(L.coverage_bytes), format_bytes(reach),
                      cycles_ns(L.miss_penalty_cycles.value_or(0), clock_mhz(in)),
                      num(L.confidence.value_or(0), 2),
                      L.coverage_finding().empty() ? "not measured" : L.coverage_finding()});
  });
  if (t.rows.empty())
    t.note = "No TLB boundary found in the footprints measured.";
  if (!files.empty())
    curve_figures(data, tlb, reaches, c);
  else
    c.missing.push_back(
        "TLB curves (raw/ holds no tlb result: the levels below come from profile.json)");
  c.tables.push_back(std::move(t));
  structure_table(tlb, c);
  cross_check_table(in, c);
}

} // namespace gpuprobe::probes::tlb
