// The fleet part of the report (a folder written by `gpuprobe fleet`): the units of each model in
// a table, a spread figure per parameter (every unit's value, models apart) and the SM -> group
// maps of every unit side by side.
#include "analysis/report/parts.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace gpuprobe::analysis::report_detail {

namespace {

std::string short_uuid(const std::string &u) {
  return u.substr(u.rfind("GPU-", 0) == 0 ? 4 : 0, 8);
}

} // namespace

void fleet_part(const inputs &in, report_content &c) {
  if (!in.fleet.is_object())
    return; // a unit's folder: no fleet part (not "missing")
  const json units = in.fleet.value("units", json::array());
  const json models = in.fleet.value("models", json::object()); // named: items() of a temporary
                                                                  // would dangle
  for (const auto &[model, m] : models.items()) {
    report_table t{"Fleet: " + model + " (" + std::to_string(m["units"].size()) + " units)",
                   {"unit", "L1", "L2", "L3", "same_u32 slope", "status"},
                   {},
                   "Outlier rule: " + in.fleet["rule"].value("outlier", std::string("?"))};
    for (const auto &u : units) {
      if (u.value("model", "") != model)
        continue;
      const json n = u.value("numbers", json::object()), tx = u.value("text", json::object());
      auto level = [&](const std::string &L) {
        if (!n.contains(L + ".entries"))
          return std::string("—");
        std::string s = num(n[L + ".entries"].get<double>(), 5) + " x " +
                        num(n.value(L + ".page_mib", 0.0), 4) + " MiB, +" +
                        num(n.value(L + ".penalty_cycles", 0.0), 4);
        if (tx.contains(L + ".group_sizes"))
          s += ", groups " + tx[L + ".group_sizes"].get<std::string>();
        else if (tx.contains(L + ".sharing"))
          s += ", " + tx[L + ".sharing"].get<std::string>();
        return s;
      };
      t.rows.push_back({u.value("uuid", ""), level("L1"), level("L2"), level("L3"),
                        n.contains("atomics.same_u32.slope")
                            ? num(n["atomics.same_u32.slope"].get<double>(), 3)
                            : "—",
                        u.value("status", "")});
    }
    const json params = m.value("parameters", json::object());
    for (const auto &[name, p] : params.items())
      for (const auto &x : p.value("outliers", json::array()))
        t.note += "\nOutlier " + x.value("uuid", "") + ": " + x.value("why", "");
    for (const auto &d : m.value("differences", json::array()))
      t.note += "\nDiffers: " + d.get<std::string>();
    c.tables.push_back(std::move(t));
  }
  // The spread of the parameters a reader compares first, every unit a point, models apart.
  for (const char *param : {"L1.penalty_cycles", "L2.entries", "L2.penalty_cycles",
                            "L3.penalty_cycles", "L2.groups", "atomics.same_u32.slope"}) {
    std::ostringstream o;
    o << "series,style,x,y\n";
    std::map<std::string, int> index;
    int points = 0;
    for (const auto &u : units) {
      const json n = u.value("numbers", json::object());
      if (!n.contains(param))
        continue;
      const std::string model = u.value("model", "?");
      row(o, model, "points", ++index[model], n[param].get<double>());
      ++points;
    }
    if (points < 2)
      continue;
    std::string id = std::string("fleet_") + param;
    std::replace(id.begin(), id.end(), '.', '_');
    c.figures.push_back({id, std::string("Fleet spread: ") + param,
                         "lines", "unit (in the order of the table, per model)", param, false,
                         false, {}, {}, o.str()});
  }
  // Each unit's SM -> group map of every level measured with groups, one row per unit: the
  // groups are canonical (fleet.json), so group k is one colour on every unit that has it.
  std::set<std::string> levels;
  for (const auto &u : units) {
    const json g = u.value("groups", json::object()); // named: items() of a temporary dangles
    for (const auto &[L, v] : g.items())
      levels.insert(L);
  }
  for (const auto &L : levels) {
    std::vector<std::pair<std::string, std::vector<int>>> rows;
    std::size_t width = 0;
    for (const auto &u : units) {
      const json g = u.value("groups", json::object());
      if (!g.contains(L))
        continue;
      std::vector<int> of; // SM id -> group index (-1: in no group)
      for (std::size_t k = 0; k < g[L].size(); ++k)
        for (int sm : g[L][k]) {
          if (std::size_t(sm) >= of.size())
            of.resize(std::size_t(sm) + 1, -1);
          of[std::size_t(sm)] = int(k);
        }
      rows.emplace_back(short_uuid(u.value("uuid", "")) + " " + u.value("model", ""), of);
      width = std::max(width, of.size());
    }
    std::ostringstream o;
    o << "unit";
    for (std::size_t s = 0; s < width; ++s)
      o << ',' << s;
    o << '\n';
    for (auto &[label, g] : rows) {
      g.resize(width, -1);
      o << label;
      for (int v : g)
        o << ',' << v;
      o << '\n';
    }
    c.figures.push_back({"fleet_groups_" + L, "Fleet: " + L + " sharing groups, SM id -> group",
                         "groupmap", "SM id", "unit", false, false, {}, {}, o.str()});
  }
}

} // namespace gpuprobe::analysis::report_detail
