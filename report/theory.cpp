#include "report/parts.hpp"

#include "analysis/models.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::report::detail {

namespace fs = std::filesystem;

namespace {

// One BM_getpage case with TAS/WAS and their theory.
struct theory_cell {
  std::string alloc;
  int permille;
  double threads, tas, tas_th, was, was_th;
  double tas_occupancy = 0; // CRW: Eq. 9 with p = M / A of the measured occupancy (0: none)
  // CRW: the free pages A and clusters M of the occupancy, the measured p (threads whose page
  // after their last was used) and Eq. 9 at that p (0: not recorded)
  double free_pages = 0, clusters = 0, next_used = 0, tas_next_used = 0;
};

// BM_getpage/<alloc>/threads:<n>/free_permille:<f> cases of the allocators the models of Eqs. 3-9
// describe (RW, RW-BM and CoRW: Theorems 1-2; CRW: Eq. 7), at a thread count given as a number.
std::vector<theory_cell> theory_cells(const inputs &in) {
  std::vector<theory_cell> cells;
  for (const auto &[path, bench] : in.bench)
    for (const auto &b : bench.cases) {
      const std::string &name = b.name;
      if (name.rfind("BM_getpage/", 0) != 0 || !b.number("TAS") || !b.number("TAS_theory"))
        continue;
      const auto a0 = name.find('/') + 1, a1 = name.find('/', a0);
      const auto t0 = name.find("threads:"), f0 = name.find("free_permille:");
      if (t0 == std::string::npos || f0 == std::string::npos)
        continue;
      const std::string alloc = name.substr(a0, a1 - a0);
      if (alloc != "rw" && alloc.rfind("rw_bm", 0) != 0 && alloc.rfind("corw", 0) != 0 &&
          alloc != "crw")
        continue;
      const std::string tn = name.substr(t0 + 8, name.find('/', t0) - t0 - 8);
      if (tn == "full")
        continue;
      cells.push_back({alloc, std::atoi(name.c_str() + f0 + 14), std::atof(tn.c_str()),
                       *b.number("TAS"), *b.number("TAS_theory"), b.number_or("WAS", 0.0),
                       b.number_or("WAS_theory", 0.0), b.number_or("TAS_theory_occupancy", 0.0),
                       b.number_or("free_pages", 0.0), b.number_or("clusters", 0.0),
                       b.number_or("next_used", 0.0), b.number_or("TAS_theory_next_used", 0.0)});
    }
  return cells;
}

// TAS (was = false) or WAS against its theory; a measured WAS over its bound is flagged on the
// figure and listed in `over`.
report_figure theory_figure(const std::vector<theory_cell> &cells, bool was, report_table &over) {
  report_figure f{was ? "was_vs_theory" : "tas_vs_theory",
                  was ? "WAS measured vs the Eq. 4/6 bound (RW paper Fig. 11-12)"
                      : "TAS measured vs Eqs. 3/5 (RW paper Fig. 11-12)",
                  "lines",
                  "threads",
                  was ? "warp average steps" : "thread average steps",
                  true,
                  true,
                  {},
                  {},
                  ""};
  std::ostringstream o;
  o << "series,style,x,y\n";
  for (const auto &e : cells) {
    const std::string s = e.alloc + " " + std::to_string(e.permille) + "‰ free";
    row(o, s, "points", e.threads, was ? e.was : e.tas);
    if ((was ? e.was_th : e.tas_th) > 0) // CRW's model has no WAS bound
      row(o, s + " theory", "dashed", e.threads, was ? e.was_th : e.tas_th);
    if (!was && e.tas_occupancy > 0) // CRW: Eq. 8's p against the occupancy's own
      row(o, s + " theory, p = M/A of this occupancy", "dotted", e.threads, e.tas_occupancy);
  }
  // A measured WAS over its bound is not a broken model: Eqs. 4 and 6 assume every lane starts
  // on a distinct word (no LockMap collisions), which stops holding as N approaches the free
  // pages. Such points are flagged on the figure and listed with that reason.
  if (was)
    for (const auto &e : cells)
      if (e.was_th > 0 && e.was > e.was_th * 1.02) {
        row(o, "above the bound (lanes collide: the bound's assumption fails)", "flag", e.threads,
            e.was);
        over.rows.push_back({e.alloc, num(e.permille / 10.0) + " %", num(e.threads), num(e.was, 3),
                             num(e.was_th, 3)});
      }
  f.csv = o.str();
  return f;
}

// CRW's measured TAS against Eq. 9 at the occupancy's own M: with Eq. 8's p, with p = M / A, and
// with p as measured; within 10 % or not, for each (empty: no CRW case recorded M).
report_table crw_table(const std::vector<theory_cell> &cells) {
  report_table t{"CRW against Eq. 9 at the measured cluster count",
                 {"threads", "free", "A", "M", "p, Eq. 8", "p = M/A", "p measured", "TAS",
                  "Eq. 9, Eq. 8's p", "ratio", "Eq. 9, p = M/A", "ratio", "Eq. 9, p measured",
                  "ratio"},
                 {},
                 ""};
  int within = 0;
  for (const auto &e : cells) {
    if (e.alloc != "crw" || e.clusters <= 0 || e.free_pages <= 0)
      continue;
    const double p8 = analysis::crw_next_used(e.free_pages, e.clusters);
    within += std::abs(e.tas / e.tas_occupancy - 1) <= 0.10;
    t.rows.push_back({num(e.threads), num(e.permille / 10.0) + " %", num(e.free_pages),
                      num(e.clusters), num(p8, 3), num(e.clusters / e.free_pages, 3),
                      num(e.next_used, 3), num(e.tas, 4), num(e.tas_th, 4),
                      num(e.tas / e.tas_th, 3), num(e.tas_occupancy, 4),
                      num(e.tas / e.tas_occupancy, 3), num(e.tas_next_used, 4),
                      num(e.tas / e.tas_next_used, 3)});
  }
  if (!t.rows.empty())
    t.note =
        "Eq. 9 is 1 + p TAS_RW, p the chance that the page after a thread's last is used. Eq. 8 "
        "puts p at (M - 1) / (A + M - 1). In this benchmark a thread's last page is a free "
        "page of the occupancy, and the page after it is used when it ends its cluster: p = "
        "M / A, and `p measured` counts the threads whose first step did not serve them. "
        "Within 10 % at p = M / A in " +
        std::to_string(within) + " of " + std::to_string(t.rows.size()) + " cases.";
  return t;
}

} // namespace

// BM_getpage cases with TAS/WAS and their theory: a figure each, and the WAS points over the bound.
void theory_part(const inputs &in, report_content &c) {
  const std::vector<theory_cell> cells = theory_cells(in);
  if (cells.empty()) {
    c.missing.push_back("TAS/WAS vs theory (raw/ holds no gpuprobe-bench BM_getpage results: a "
                        "full `gpuprobe run` measures them into raw/bench_getpage.json)");
    return;
  }
  for (const bool was : {false, true}) {
    report_table over{"WAS above the Eq. 4/6 bound",
                      {"allocator", "free", "threads", "measured WAS", "bound"},
                      {},
                      ""};
    c.figures.push_back(theory_figure(cells, was, over));
    if (!over.rows.empty()) {
      over.note = "Eqs. 4 and 6 bound the warp's steps when the warp's lanes start on distinct "
                  "words (the RW paper's "
                  "assumption: no LockMap collisions). With many threads per free page that no "
                  "longer holds, and a measured WAS "
                  "can exceed the bound; these points are marked x on the figure.";
      c.tables.push_back(std::move(over));
    }
  }
  if (auto crw = crw_table(cells); !crw.rows.empty())
    c.tables.push_back(std::move(crw));
}

} // namespace gpuprobe::report::detail
