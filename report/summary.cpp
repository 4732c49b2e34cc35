// The page's opening: what a performance engineer reads in ten seconds. The translation hierarchy
// as a table (each level: entries x coverage = reach, penalty, what serves a miss, who shares it)
// and a small diagram, the atomics scaling in one line, the tuning decisions and validate's
// verdicts. Everything comes from profile.json, tuning.json and validation.json.
#include "analysis/validation.hpp"
#include "model/atomics.hpp"
#include "model/run_folder.hpp"
#include "probes/sharing/analysis.hpp"
#include "probes/tlb/levels.hpp"
#include "report/parts.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/results_folder.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::report::detail {

// What this part reads of the analysis.
using analysis::tradeoffs;
using model::level_label;
using probes::group_sizes;
using probes::count_or_dash;
using probes::level_line;
using probes::searched_words;
using probes::structure_words;
using probes::to_string;

namespace {

// "private to each SM", "24 groups of 18 x 6 + 6 x 4 SMs", "all SMs".
std::string shared_by(const std::optional<model::level_sharing> &sharing) {
  const std::string scope = sharing ? sharing->scope : "not measured";
  if (scope == "private")
    return "private to each SM";
  if (scope == "global")
    return "all SMs";
  if (scope != "groups" || !sharing->groups)
    return scope;
  const auto &groups = *sharing->groups;
  return std::to_string(groups.size()) + " groups of " + group_sizes(groups) + " SMs";
}

// The levels as boxes whose widths grow with log2 of the reach (an inline SVG, no script).
std::string diagram(const std::vector<model::tlb_level> &levels,
                    const std::optional<model::tlb_cross_check> &checks) {
  const double w = 760, h = 34, gap = 8;
  std::ostringstream o;
  const double foot = 22; // the scale's note under the boxes
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\""
    << (h + gap) * double(levels.size()) + gap + foot
    << "\" role=\"img\" aria-label=\"TLB levels\">";
  const double top = std::log2(std::max(2.0, levels.back().reach_bytes / (1 << 20)));
  for (std::size_t k = 0; k < levels.size(); ++k) {
    const auto &L = levels[k];
    const double reach = L.reach_bytes;
    const double frac = std::max(0.18, std::log2(std::max(2.0, reach / (1 << 20))) / top);
    const double y = gap + double(k) * (h + gap);
    const model::level_check *c = checks ? checks->find(level_label(false, k)) : nullptr;
    const std::string served =
        c && c->miss_served_by.value_or("").rfind("memory", 0) == 0 ? " (page walk)" : "";
    const bool lower = L.coverage_bound == "lower";
    const std::string label =
        level_label(false, k) + ": " + count_or_dash(L.entries) + " x " +
        (lower ? "&#8805; " : "") + format_bytes(L.coverage_bytes) + " = " + format_bytes(reach) +
        ", " +
        (L.miss_penalty_cycles ? "+" + num(*L.miss_penalty_cycles, 5) + " cycles"
                               : std::string("penalty not measured")) +
        served;
    const char *fill[] = {"#cfe3f7", "#9cc7ee", "#5d9fd9", "#2f78bd"};
    o << "<rect x=\"0\" y=\"" << y << "\" width=\"" << w * frac << "\" height=\"" << h
      << "\" fill=\"" << fill[std::min<std::size_t>(k, 3)] << "\" stroke=\"#345\"/>"
      << "<text x=\"8\" y=\"" << y + h * 0.65 << "\" font-size=\"13\" font-family=\"sans-serif\">"
      << label << "</text>";
  }
  o << "<text x=\"0\" y=\"" << (h + gap) * double(levels.size()) + gap + 14
    << "\" font-size=\"11\" font-family=\"sans-serif\" fill=\"#444\">Box length grows with the "
       "reach on a log scale (log2 of the reach in MiB).</text>";
  o << "</svg>";
  return o.str();
}

// The hierarchy table's rows and the diagram: each level with its structure, penalty, what
// serves a miss and who shares it; then the line that says how far the search went.
void hierarchy_summary(const model::tlb_hierarchy &tlb, std::optional<double> mhz,
                       report_summary &s) {
  const auto &levels = tlb.levels;
  const auto &checks = tlb.cross_check;
  for (std::size_t k = 0; k < levels.size(); ++k) {
    const auto &L = levels[k];
    const model::level_check *ck = checks ? checks->find(level_label(false, k)) : nullptr;
    const std::string served = ck && ck->miss_served_by ? *ck->miss_served_by : "—";
    const std::string bound = L.coverage_bound.value_or("");
    // "2048 entries, 8 ways x 256 sets, 32 MiB each = 64 GiB" (the structure when resolved).
    const std::string st = structure_words(L);
    s.hierarchy.push_back(
        {level_label(false, k),
         (L.entries ? num(*L.entries, 5) + " entries" : std::string("entries not measured")) +
             (st.empty() ? "" : ", " + st) + ", " + (bound == "lower" ? "≥ " : "") +
             format_bytes(L.coverage_bytes) + " each = " + format_bytes(L.reach_bytes),
         L.miss_penalty_cycles ? "+" + cycles_ns(*L.miss_penalty_cycles, mhz)
                               : std::string("not measured"),
         served, shared_by(L.sharing)});
  }
  if (!levels.empty())
    s.diagram_svg = diagram(levels, checks);
  s.lines.push_back(levels.empty() ? "TLB: no level found, " + searched_words(tlb)
                                   : "TLB: " + std::to_string(levels.size()) + " level(s), " +
                                         searched_words(tlb));
}

// Atomics in one line: the slope per contending thread of each family, CAS's exponent ("" when
// the profile has no fits).
std::string atomics_line(const model::profile &p) {
  std::map<std::string, std::string> fits;
  for (const auto &v : model::atomics_of(p)) {
    const model::atomics_fit f = v.fit.value_or(model::atomics_fit{});
    if (f.model == "power")
      fits[v.variant] =
          f.power_exponent ? "~N^" + num(*f.power_exponent, 3) : "power law, exponent not measured";
    else if (f.slope_cycles_per_thread)
      fits[v.variant] = "+" + num(*f.slope_cycles_per_thread, 3) + " cycles/thread";
  }
  std::string a;
  for (const auto &[label, key] :
       std::vector<std::pair<std::string, std::string>>{{"one address", "same_u32"},
                                                        {"distinct lines", "distinct_u32"},
                                                        {"CAS loop", "cas_u32"},
                                                        {"warp-aggregated", "aggregated_u32"}})
    if (fits.count(key))
      a += (a.empty() ? "" : "; ") + label + " " + fits[key];
  return a.empty() ? "" : "Atomics (32-bit, latency per contending thread): " + a;
}

} // namespace

void summary_part(const inputs &in, report_content &c) {
  report_summary &s = c.summary;
  if (in.profile) {
    hierarchy_summary(in.profile->tlb, clock_mhz(in), s);
    if (const std::string a = atomics_line(*in.profile); !a.empty())
      s.lines.push_back(a);
  }
  if (in.tuning) {
    for (const auto &[key, what] :
         std::vector<std::pair<std::string, std::string>>{{"word_size", "bitmap word"},
                                                          {"regions", "TLB-scoped regions"},
                                                          {"crw_placement", "CRW placement"},
                                                          {"tlb_scope", "TLB scope"}})
      if (const auto &d = in.tuning->decision(key))
        s.decisions.push_back(what + ": " + d->reason);
  }
  if (in.validation) {
    s.lines.push_back("validate (default vs tuned, Holm-corrected): " + in.validation->summary);
    // A file without trade-offs: derived here from its rows' typed changes (a file from before
    // those has neither, and shows none).
    const auto t = in.validation->tradeoffs.value_or(tradeoffs(in.validation->workloads));
    for (const auto &x : t)
      s.decisions.push_back("trade-off, " + x.line);
  }
}

} // namespace gpuprobe::report::detail

namespace gpuprobe::report {

std::vector<std::string> run_summary_lines(const std::string &dir) {
  namespace fs = std::filesystem;
  using nlohmann::json;
  std::vector<std::string> out;
  char b[512];
  const model::run_folder run = model::read_run_folder(dir); // profile, tuning, validation: once
  if (!run.tuning || !run.valid)
    throw error(dir + " has no " +
                (run.tuning ? results_folder::validation_file : results_folder::tuning_file) +
                ": not a finished run (gpuprobe run makes one)");
  const model::tlb_hierarchy &tlb = run.prof.tlb;
  const auto &levels = tlb.levels;
  if (levels.empty())
    out.push_back("TLB: no level found, " + probes::searched_words(tlb));
  for (std::size_t k = 0; k < levels.size(); ++k) {
    out.push_back(probes::level_line(model::level_label(false, k), levels[k]));
    if (const std::string iv = probes::interval_words(levels[k]); !iv.empty())
      out.push_back("  " + model::level_label(false, k) + " intervals: " + iv);
    if (const std::string sp = probes::penalty_spread_words(levels[k]); !sp.empty())
      out.push_back("  " + model::level_label(false, k) + " penalty by SM: " + sp);
    if (const std::string cov = levels[k].coverage_finding(); !cov.empty())
      out.push_back("  " + model::level_label(false, k) + " entry: " + cov);
  }
  const model::tuning_file &tuning = *run.tuning;
  const alloc::tuning &a = tuning.allocator;
  std::snprintf(b, sizeof b, "tuning: %d-bit words, %u region(s), CRW start %s", a.word_bits,
                a.regions, alloc::to_string(a.crw));
  out.push_back(b);
  // Each level's region decision in a word and its ratio.
  std::string per_level;
  for (const auto &r : model::region_levels(tuning)) {
    if (r.ratio)
      std::snprintf(b, sizeof b, "%s x%.3f %s", r.level.c_str(), *r.ratio, r.decision.c_str());
    else
      std::snprintf(b, sizeof b, "%s %s", r.level.c_str(), r.decision.c_str());
    per_level += (per_level.empty() ? "" : ", ") + std::string(b);
  }
  if (!per_level.empty())
    out.push_back("regions per level: " + per_level);
  const model::validation &validation = *run.valid;
  out.push_back("validate: " + validation.summary);
  for (const auto &t : validation.tradeoffs.value_or(std::vector<model::tradeoff>{}))
    out.push_back("trade-off: " + t.line);
  out.push_back("report: " + (fs::path(dir) / "report" / "index.html").string());
  return out;
}

} // namespace gpuprobe::report
