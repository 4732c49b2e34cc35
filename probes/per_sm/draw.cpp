// The tlb-per-sm probe's part of the report: per level, each SM's miss penalty as a map by sharing
// group with its distribution, from profile.json's per_sm blocks, and a table of each spread's
// ends and the SMs apart from the others.
#include "probes/kit.hpp"
#include "probes/per_sm/probe.hpp"

#include "probes/per_sm/driver.hpp"
#include "probes/tlb/levels.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace gpuprobe::probes::per_sm {

using namespace kit; // the report's inputs, types and helpers (probes/kit.hpp)

namespace {

// The level's SMs as a map: rows are sharing groups (the level's own, or where it has none -- a
// private or global level -- the groups of the profile's level that has most), a cell per SM in id
// order coloured by its miss penalty, and the penalties' distribution beside (plot.py "sm_grid").
report_figure per_sm_figure(const std::string &label, const model::tlb_level &L,
                            const std::vector<std::vector<int>> &fallback_groups,
                            const std::string &groups_of) {
  const auto &s = *L.per_sm;
  const bool own = L.sharing && L.sharing->groups && !L.sharing->groups->empty();
  report_figure f{"per_sm_tlb_" + label,
                  "Per SM, " + label + ": miss penalty by " +
                      (own                       ? label + "'s sharing group"
                       : fallback_groups.empty() ? std::string("SM id")
                                                 : groups_of + "'s sharing group") +
                      " (a row each), and its distribution",
                  "sm_grid", "SM of the group", "miss penalty, cycles per hop"};
  auto groups = own ? *L.sharing->groups : fallback_groups;
  for (auto &g : groups) // rows in group order: each group's SMs by id, groups by their least
    std::sort(g.begin(), g.end());
  std::sort(groups.begin(), groups.end());
  std::vector<std::pair<int, std::size_t>> order; // group, index into s.sms
  std::vector<bool> used(s.sms.size(), false);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const int first = int(order.size());
    for (int sm : groups[gi])
      for (std::size_t i = 0; i < s.sms.size(); ++i)
        if (s.sms[i] == sm && !used[i]) {
          used[i] = true;
          order.emplace_back(int(gi), i);
        }
    if (int(order.size()) > first)
      f.boxes.emplace_back(first, int(order.size()) - 1);
  }
  for (std::size_t i = 0; i < s.sms.size(); ++i)
    if (!used[i])
      order.emplace_back(-1, i);
  std::ostringstream o;
  o << "sm,group,baseline,penalty\n";
  for (const auto &[g, i] : order)
    o << s.sms[i] << ',' << g << ',' << num(s.hit_cycles[i], 6) << ','
      << num(s.penalty_cycles[i], 6) << '\n';
  f.csv = o.str();
  return f;
}

} // namespace

void draw(const report_inputs &in, report_content &c) {
  bool any = false;
  report_table t{
      "Per SM, each TLB level (tlb-per-sm; cycles per hop): min (SM) - median - max (SM)",
      {"level", "SMs", "hit", "miss penalty", "rep to rep", "SMs apart"},
      {},
      "Each SM alone walks a footprint the level holds whole and one where every hop "
      "misses it, at its page stride, on the alias range (translation alone); the "
      "penalty is the difference, each the median of the rounds. An SM is apart where "
      "its penalty lies past the larger of compare's penalty bar, 4 x the rep-to-rep "
      "noise and 5 robust sigmas from the median."};
  // The rows of a private or global level's map: the groups of the level with most of them.
  std::vector<std::vector<int>> most;
  std::string most_of;
  if (in.profile)
    for_each_level(in.profile->tlb, [&](const model::tlb_level &L, bool, const std::string &label) {
      if (L.sharing && L.sharing->groups && L.sharing->groups->size() > most.size())
        most = *L.sharing->groups, most_of = label;
    });
  if (in.profile)
    for_each_level(in.profile->tlb, [&](const model::tlb_level &L, bool, const std::string &label) {
      if (!L.per_sm || L.per_sm->sms.empty())
        return;
      any = true;
      c.figures.push_back(per_sm_figure(label, L, most, most_of));
      const auto &s = *L.per_sm;
      std::string apart;
      for (const int sm : s.apart_sms.value_or(std::vector<int>{}))
        for (std::size_t i = 0; i < s.sms.size(); ++i)
          if (s.sms[i] == sm)
            apart += (apart.empty() ? "SM " : ", SM ") + std::to_string(sm) + " (" +
                     num(s.penalty_cycles[i], 4) + ")";
      t.rows.push_back({label, std::to_string(s.sms.size()),
                        probes::spread_text(s.sms, s.hit_cycles),
                        probes::spread_text(s.sms, s.penalty_cycles),
                        s.noise_cycles ? num(*s.noise_cycles, 3) : "—",
                        s.apart_sms ? (apart.empty() ? "none" : apart) : "—"});
    });
  if (const auto mhz = clock_mhz(in); any && mhz)
    t.note += " At the " + num(*mhz, 4) + " MHz SM clock the run saw, 100 cycles are " +
              num(100000.0 / *mhz, 3) + " ns.";
  if (any)
    c.tables.push_back(std::move(t));
  else if (!in.of(entry().id).empty() || in.profile)
    c.missing.push_back("per-SM TLB penalties (profile.json holds no tlb-per-sm measurement: "
                        "characterize on the GPU runs it)");
}

} // namespace gpuprobe::probes::per_sm
