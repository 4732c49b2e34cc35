// The fleet part of the report (a folder written by `gpuprobe fleet`): the units of each model in
// a table, a spread figure per parameter (every unit's value, models apart) and the SM -> group
// maps of every unit side by side.
#include "report/parts.hpp"

#include "common/escape.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace gpuprobe::report::detail {

namespace {

std::string short_uuid(const std::string &u) {
  return u.substr(u.rfind("GPU-", 0) == 0 ? 4 : 0, 8);
}

// A table per model: each unit's levels, atomics slope and status; outliers and differences
// below it.
void model_tables(const inputs &in, report_content &c) {
  const auto &units = in.fleet->units;
  for (const auto &[model, m] : in.fleet->models) {
    report_table t{"Fleet: " + model + " (" + std::to_string(m.units.size()) + " units)",
                   {"unit", "L1", "L2", "L3", "same_u32 slope", "status"},
                   {},
                   "Outlier rule: " + in.fleet->outlier_rule};
    for (const auto &u : units) {
      if (u.model != model)
        continue;
      // A value the profile does not hold reads "—", never 0.
      const auto number = [&](const std::string &k, int digits) {
        const auto v = u.number(k);
        return v ? num(*v, digits) : std::string("—");
      };
      auto level = [&](const std::string &L) {
        if (!u.number(L + ".coverage_mib"))
          return std::string("—");
        std::string s = number(L + ".entries", 5) + " x " + number(L + ".coverage_mib", 4) +
                        " MiB, +" + number(L + ".penalty_cycles", 4);
        if (u.text.count(L + ".group_sizes"))
          s += ", groups " + u.text.at(L + ".group_sizes");
        else if (u.text.count(L + ".sharing"))
          s += ", " + u.text.at(L + ".sharing");
        return s;
      };
      t.rows.push_back(
          {u.uuid, level("L1"), level("L2"), level("L3"),
           number("atomics.same_u32.slope", 3),
           u.status});
    }
    c.tables.push_back(std::move(t));
    // The outliers and the differences, a row each (never a paragraph).
    report_table o{"Fleet: " + model + ", outliers and differences",
                   {"unit", "figure", "value", "model's median", "why"},
                   {},
                   "An outlier by the rule above; a difference: units whose structure or maps "
                   "differ, or whose figures another method made."};
    for (const auto &[name, p] : m.parameters)
      for (const auto &x : p.outliers)
        o.rows.push_back({x.uuid, name, num(x.value, 4), num(p.median, 4), x.why});
    for (const auto &d : m.differences)
      o.rows.push_back({"—", "—", "—", "—", d});
    if (o.rows.empty())
      o.rows.push_back({"none", "—", "—", "—", "no unit past the outlier rule, no difference"});
    c.tables.push_back(std::move(o));
  }
}

// Where each unit's figures come from: when, in which mode, on which driver, by which build.
void provenance_table(const inputs &in, report_content &c) {
  report_table t{"Fleet: provenance of each unit",
                 {"unit", "model", "measured (UTC)", "mode", "driver", "analysis commit"},
                 {},
                 "Units measured by other builds or modes may differ by the method: "
                 "`gpuprobe characterize --reanalyze` on each folder makes them comparable."};
  for (const auto &u : in.fleet->units) {
    const auto text = [&](const char *k) { return u.word(k).value_or("—"); };
    t.rows.push_back({u.uuid, u.model, text("measured_utc"), text("mode"), text("driver"),
                      text("analysis_commit")});
  }
  c.tables.push_back(std::move(t));
}

// A fleet figure's key in words, with its unit: the spread plot's y label.
std::string figure_words(const std::string &key) {
  const auto dot = key.find('.');
  const std::string head = key.substr(0, dot), rest = dot == std::string::npos ? "" : key.substr(dot + 1);
  if (head == "atomics") { // atomics.same_u32.slope
    const auto d2 = rest.find('.');
    return rest.substr(0, d2) + " atomics, " +
           (rest.substr(d2 + 1) == "slope" ? "slope (cycles per thread)" : "exponent");
  }
  static const std::map<std::string, std::string> words = {
      {"penalty_cycles", "miss penalty (cycles)"},
      {"entries", "entries"},
      {"groups", "sharing groups (count)"},
      {"coverage_mib", "what one entry covers (MiB)"},
      {"reach_gib", "reach (GiB)"}};
  const auto it = words.find(rest);
  return head + " " + (it == words.end() ? rest : it->second);
}

void spread_figures(const inputs &in, report_content &c) {
  const auto &units = in.fleet->units;
  // The spread of the parameters a reader compares first, every unit a point named on the x axis,
  // models apart (plot.py "spread": csv model,unit,value).
  for (const char *param : {"L1.penalty_cycles", "L2.entries", "L2.penalty_cycles",
                            "L3.penalty_cycles", "L2.groups", "atomics.same_u32.slope"}) {
    std::ostringstream o;
    o << "model,unit,value\n";
    int points = 0;
    for (const auto &u : units)
      if (const auto x = u.number(param)) {
        o << csv_field(u.model) << ',' << csv_field(short_uuid(u.uuid)) << ',' << num(*x, 10)
          << '\n';
        ++points;
      }
    if (points < 2)
      continue;
    std::string id = std::string("fleet_") + param;
    std::replace(id.begin(), id.end(), '.', '_');
    c.figures.push_back({id,
                         "Fleet spread: " + figure_words(param) + ", every unit",
                         "spread",
                         "unit (the first 8 digits of its UUID)",
                         figure_words(param),
                         false,
                         false,
                         {},
                         {},
                         o.str()});
  }
}

void group_map_figures(const inputs &in, report_content &c) {
  const auto &units = in.fleet->units;
  // Each unit's SM -> group map of every level measured with groups, one row per unit: the
  // groups are canonical (fleet.json), so group k is one colour on every unit that has it.
  std::set<std::string> levels;
  for (const auto &u : units)
    for (const auto &[L, v] : u.groups)
      levels.insert(L);
  for (const auto &L : levels) {
    std::vector<std::pair<std::string, std::vector<int>>> rows;
    std::size_t width = 0;
    for (const auto &u : units) {
      const auto g = u.groups.find(L);
      if (g == u.groups.end())
        continue;
      std::vector<int> of; // SM id -> group index (-1: in no group)
      for (std::size_t k = 0; k < g->second.size(); ++k)
        for (int sm : g->second[k]) {
          if (std::size_t(sm) >= of.size())
            of.resize(std::size_t(sm) + 1, -1);
          of[std::size_t(sm)] = int(k);
        }
      rows.emplace_back(short_uuid(u.uuid) + " " + u.model, of);
      width = std::max(width, of.size());
    }
    std::ostringstream o;
    o << "unit";
    for (std::size_t s = 0; s < width; ++s)
      o << ',' << s;
    o << '\n';
    for (auto &[label, g] : rows) {
      g.resize(width, -1);
      o << csv_field(label);
      for (int v : g)
        o << ',' << v;
      o << '\n';
    }
    c.figures.push_back({"fleet_groups_" + L,
                         "Fleet: " + L + " sharing groups, SM id -> group",
                         "groupmap",
                         "SM id",
                         "unit",
                         false,
                         false,
                         {},
                         {},
                         o.str()});
  }
}

} // namespace

void fleet_part(const inputs &in, report_content &c) {
  if (!in.fleet)
    return; // a unit's folder: no fleet part (not "missing")
  provenance_table(in, c);
  model_tables(in, c);
  spread_figures(in, c);
  group_map_figures(in, c);
}

} // namespace gpuprobe::report::detail
