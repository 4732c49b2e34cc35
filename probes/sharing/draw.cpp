#include "probes/kit.hpp"
#include "probes/sharing/probe.hpp"

#include "common/results_folder.hpp"
#include "common/units.hpp"
#include "probes/sharing/analysis.hpp"
#include "probes/tlb/levels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::probes::sharing {

using namespace kit; // the report's inputs, types and helpers (probes/kit.hpp)
using nlohmann::json;

namespace fs = std::filesystem;

namespace {
// The profile's sharing answer per level and candidate, for a folder without the matrices.
void sharing_from_profile(const model::profile &profile, report_content &c) {
  report_table t{"TLB sharing (profile.json; the matrices are not in this folder)",
                 {"", "scope", "groups", "reason"},
                 {},
                 ""};
  for_each_level(profile.tlb, [&](const model::tlb_level &L, bool, const std::string &label) {
    if (!L.sharing)
      return;
    const auto &s = *L.sharing;
    std::string groups;
    for (const auto &g : s.groups.value_or(std::vector<std::vector<int>>{}))
      groups += (groups.empty() ? "" : " ") + json(g).dump();
    t.rows.push_back({label, s.scope, groups.empty() ? "—" : groups, s.reason.value_or("")});
  });
  if (t.rows.empty())
    return;
  c.tables.push_back(std::move(t));
}

// What a matrix is drawn with: its scope, groups and reason as profile.json holds them for the
// level read from this file; where the folder has no profile, or the profile no answer from this
// file (the 2017 tool's matrices, a level measured for another geometry), this report's own
// analysis of it.
struct verdict {
  std::string scope;
  std::vector<std::vector<int>> groups;
  std::string reason;
};
verdict verdict_of(const report_inputs &in, const std::string &path, const sharing_matrix &m) {
  const std::string source = results_folder::raw_rel(fs::path(path).filename().string());
  std::optional<verdict> held;
  if (in.profile)
    for_each_level(in.profile->tlb, [&](const model::tlb_level &L, bool, const std::string &) {
      if (!held && L.sharing && L.sharing->source == source)
        held =
            verdict{L.sharing->scope, L.sharing->groups.value_or(std::vector<std::vector<int>>{}),
                    L.sharing->reason.value_or("")};
    });
  if (held)
    return *held;
  const sharing_analysis a = analyze_sharing(m);
  return {to_string(a.scope), a.groups,
          a.reason + " (this report's analysis: no answer in profile.json from this file)"};
}

// A matrix's rows in group order (members of a group adjacent; the rows of no group last), each
// group's [first, last] positions, and the groups in words: made once, drawn by both figures.
struct grouped {
  std::vector<int> order;
  std::vector<std::pair<int, int>> boxes;
  std::string words;
};
grouped group_order(const sharing_matrix &m, const verdict &a) {
  grouped out;
  auto &order = out.order;
  auto &groups = out.words;
  std::vector<bool> used(m.sm_ids.size(), false);
  std::map<int, std::size_t> index;
  for (std::size_t i = 0; i < m.sm_ids.size(); ++i)
    index[m.sm_ids[i]] = i;
  for (const auto &g : a.groups) {
    const int first = int(order.size());
    for (int id : g)
      if (index.count(id) && !used[index[id]])
        order.push_back(int(index[id])), used[index[id]] = true;
    out.boxes.emplace_back(first, int(order.size()) - 1);
    groups += (groups.empty() ? "" : " ") + std::string("{");
    for (std::size_t j = 0; j < g.size(); ++j)
      groups += (j ? "," : "") + std::to_string(g[j]);
    groups += "}";
  }
  for (std::size_t i = 0; i < used.size(); ++i)
    if (!used[i])
      order.push_back(int(i));
  return out;
}

// Row i's reference: its baseline (no disruptor), else the row's median.
double row_reference(const sharing_matrix &m, std::size_t i) {
  if (!m.baseline.empty())
    return m.baseline[i];
  std::vector<double> sorted(m.cycles[i]);
  std::sort(sorted.begin(), sorted.end());
  return sorted[sorted.size() / 2];
}

// One matrix as a heatmap, rows and columns in group order (so each group is one box), each cell
// above its row's reference.
report_figure sharing_heatmap(const std::string &path, int k, const sharing_matrix &m,
                              const verdict &a, const grouped &g) {
  report_figure f{"sharing_" + std::to_string(k),
                  "Sharing: " + fs::path(path).filename().string() + " — " + a.scope, "heatmap",
                  "disruptor SM", "victim SM: cycles per hop above the row's reference"};
  f.boxes = g.boxes;
  const std::vector<int> &order = g.order;
  std::ostringstream o;
  for (std::size_t j = 0; j < order.size(); ++j)
    o << (j ? "," : "") << m.sm_ids[std::size_t(order[j])];
  o << '\n';
  for (int i : order) {
    const auto &r = m.cycles[std::size_t(i)];
    const double ref = row_reference(m, std::size_t(i));
    for (std::size_t j = 0; j < order.size(); ++j)
      o << (j ? "," : "") << num(r[std::size_t(order[j])] - ref, 6);
    o << '\n';
  }
  f.csv = o.str();
  return f;
}

// The sharing matrices' per-SM view: each SM's latency with no disruptor (its baseline:
// where its loads' L2 lines live, seen from that SM, and any level below this one that its walk
// misses) and its rise with itself as the disruptor (its row's diagonal cell above the baseline:
// this level's misses mixed with what the disruptor's walk does to the victim's lines, so not the
// level's per-hop penalty; the tlb-per-sm stage measures that, probes/per_sm/draw.cpp draws it),
// in group order, coloured by group. A row of `stats` per matrix: the spreads and their SMs.
report_figure per_sm_figure(const std::string &path, int k, const sharing_matrix &m,
                            const grouped &g, report_table &stats) {
  report_figure f{"per_sm_" + std::to_string(k),
                  "Per SM: " + fs::path(path).filename().string() +
                      " — latency (bars) and rise with itself as the disruptor (dots)",
                  "per_sm", "SM, in sharing-group order", "cycles per hop"};
  f.boxes = g.boxes;
  const std::vector<int> &order = g.order;
  std::vector<int> group_of(m.sm_ids.size(), -1);
  for (std::size_t b = 0; b < f.boxes.size(); ++b)
    for (int p = f.boxes[b].first; p <= f.boxes[b].second; ++p)
      group_of[std::size_t(order[std::size_t(p)])] = int(b);
  std::ostringstream o;
  o << "sm,group,baseline,penalty\n";
  std::vector<std::pair<double, int>> base, pen;
  for (int i : order) {
    const std::size_t u = std::size_t(i);
    const double ref = row_reference(m, u), p = m.cycles[u][u] - ref;
    o << m.sm_ids[u] << ',' << group_of[u] << ',' << num(ref, 6) << ',' << num(p, 6) << '\n';
    base.emplace_back(ref, m.sm_ids[u]);
    pen.emplace_back(p, m.sm_ids[u]);
  }
  f.csv = o.str();
  const auto spread = [](std::vector<std::pair<double, int>> v) {
    std::sort(v.begin(), v.end());
    char b[160];
    std::snprintf(b, sizeof b, "%.1f (SM %d) – %.1f – %.1f (SM %d)", v.front().first,
                  v.front().second, v[v.size() / 2].first, v.back().first, v.back().second);
    return std::string(b);
  };
  if (!base.empty())
    stats.rows.push_back({fs::path(path).filename().string(), std::to_string(base.size()),
                          m.baseline.empty() ? "— (no baseline: the row's median)" : spread(base),
                          spread(pen)});
  return f;
}

} // namespace

void draw(const report_inputs &in, report_content &c) {
  const auto files = in.paths_of(entry.id); // tlb-sharing results and the 2017 tool's matrices
  if (files.empty()) {
    c.missing.push_back("TLB sharing matrices (raw/ holds no tlb-sharing result or matrix)");
    if (in.profile)
      sharing_from_profile(*in.profile, c);
    return;
  }
  report_table t{"TLB sharing", {"input", "scope", "groups", "reason"}, {}, ""};
  report_table per_sm{"Per SM (cycles per hop): min (SM) – median – max (SM)",
                      {"input", "SMs", "latency, no disruptor", "rise, itself the disruptor"},
                      {},
                      "The latency is the victim walk's alone: where the SM's loads find their L2 "
                      "lines, plus any level below this one that the walk misses. The rise is its "
                      "row's cell with itself as the disruptor, above that: this level's misses "
                      "mixed with the disruptor's effect on the victim's lines, not the level's "
                      "per-hop penalty."};
  int k = 0;
  for (const auto &[path, doc] : in.of(entry.id)) {
    // The document the report's scan parsed; the 2017 tool's text matrices by path.
    const auto m = doc.is_null() ? load_sharing_input(path) : parse_sharing_result(doc, path);
    const verdict a = verdict_of(in, path, m);
    const grouped g = group_order(m, a);
    c.figures.push_back(sharing_heatmap(path, ++k, m, a, g));
    c.figures.push_back(per_sm_figure(path, k, m, g, per_sm));
    t.rows.push_back(
        {fs::path(path).filename().string(), a.scope, g.words.empty() ? "—" : g.words, a.reason});
  }
  c.tables.push_back(std::move(t));
  if (!per_sm.rows.empty())
    c.tables.push_back(std::move(per_sm));
}

} // namespace gpuprobe::probes::sharing
