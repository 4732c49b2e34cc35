#include "probes/sharing/probe.hpp"
#include "report/parts.hpp"

#include "common/units.hpp"
#include "probes/sharing/analysis.hpp"
#include "probes/tlb/levels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace gpuprobe::catalog::sharing {

using namespace report::detail; // the report's inputs, types and helpers (report/parts.hpp)

// What this part reads of the analysis.
using analysis::analyze_sharing;
using analysis::load_sharing_input;
using analysis::sharing_analysis;
using analysis::sharing_matrix;
using analysis::to_string;

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

// One matrix as a heatmap, rows and columns in group order (members of a group adjacent, so each
// group is one box), each cell above its row's reference; `groups` gets the groups in words.
report_figure sharing_heatmap(const std::string &path, int k, const sharing_matrix &m,
                              const sharing_analysis &a, std::string &groups) {
  report_figure f{"sharing_" + std::to_string(k),
                  "Sharing: " + fs::path(path).filename().string() + " — " + to_string(a.scope),
                  "heatmap",
                  "disruptor SM",
                  "victim SM: cycles per hop above the row's reference",
                  false,
                  false,
                  {},
                  {},
                  ""};
  std::vector<int> order;
  std::vector<bool> used(m.sm_ids.size(), false);
  std::map<int, std::size_t> index;
  for (std::size_t i = 0; i < m.sm_ids.size(); ++i)
    index[m.sm_ids[i]] = i;
  for (const auto &g : a.groups) {
    const int first = int(order.size());
    for (int id : g)
      if (index.count(id) && !used[index[id]])
        order.push_back(int(index[id])), used[index[id]] = true;
    f.boxes.emplace_back(first, int(order.size()) - 1);
    groups += (groups.empty() ? "" : " ") + std::string("{");
    for (std::size_t j = 0; j < g.size(); ++j)
      groups += (j ? "," : "") + std::to_string(g[j]);
    groups += "}";
  }
  for (std::size_t i = 0; i < used.size(); ++i)
    if (!used[i])
      order.push_back(int(i));
  std::ostringstream o;
  for (std::size_t j = 0; j < order.size(); ++j)
    o << (j ? "," : "") << m.sm_ids[std::size_t(order[j])];
  o << '\n';
  for (int i : order) {
    const auto &r = m.cycles[std::size_t(i)];
    std::vector<double> sorted(r);
    std::sort(sorted.begin(), sorted.end());
    const double ref = m.baseline.empty() ? sorted[sorted.size() / 2] : m.baseline[std::size_t(i)];
    for (std::size_t j = 0; j < order.size(); ++j)
      o << (j ? "," : "") << num(r[std::size_t(order[j])] - ref, 6);
    o << '\n';
  }
  f.csv = o.str();
  return f;
}

} // namespace

void draw(const inputs &in, report_content &c) {
  const auto files = in.paths_of(entry.id); // tlb-sharing results and the 2017 tool's matrices
  if (files.empty()) {
    c.missing.push_back("TLB sharing matrices (raw/ holds no tlb-sharing result or matrix)");
    if (in.profile)
      sharing_from_profile(*in.profile, c);
    return;
  }
  report_table t{"TLB sharing", {"input", "scope", "groups", "reason"}, {}, ""};
  int k = 0;
  for (const auto &path : files) {
    const auto m = load_sharing_input(path);
    const auto a = analyze_sharing(m);
    std::string groups;
    c.figures.push_back(sharing_heatmap(path, ++k, m, a, groups));
    t.rows.push_back({fs::path(path).filename().string(), to_string(a.scope),
                      groups.empty() ? "—" : groups, a.reason});
  }
  c.tables.push_back(std::move(t));
}

} // namespace gpuprobe::catalog::sharing
