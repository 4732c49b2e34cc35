// The tlb-per-sm probe's part of the report: per level, each SM's hit (bars, coloured by the
// level's sharing group, in group order) and miss penalty (dots), from profile.json's per_sm
// blocks, and a table of each spread's ends and the SMs apart from the others.
#include "probes/per_sm/probe.hpp"
#include "report/parts.hpp"

#include "probes/per_sm/driver.hpp"
#include "probes/tlb/levels.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace gpuprobe::probes::per_sm {

using namespace report::detail; // the report's inputs, types and helpers (report/parts.hpp)

namespace {

// The level's SMs in sharing-group order (groups by their smallest SM; SMs of no group last),
// each with its group's index (-1: none), and the groups' [first, last] positions.
report_figure per_sm_figure(const std::string &label, const model::tlb_level &L) {
  const auto &s = *L.per_sm;
  report_figure f{"per_sm_tlb_" + label,
                  "Per SM, " + label +
                      ": cycles per hop where the level holds every page (bars) "
                      "and its miss penalty (dots)",
                  "per_sm_penalty",
                  "SM, in sharing-group order",
                  "hit, cycles per hop",
                  false,
                  false,
                  {},
                  {},
                  ""};
  auto groups =
      L.sharing && L.sharing->groups ? *L.sharing->groups : std::vector<std::vector<int>>{};
  for (auto &g : groups)
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

void draw(const inputs &in, report_content &c) {
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
  if (in.profile)
    for_each_level(in.profile->tlb, [&](const model::tlb_level &L, bool, const std::string &label) {
      if (!L.per_sm || L.per_sm->sms.empty())
        return;
      any = true;
      c.figures.push_back(per_sm_figure(label, L));
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
  else if (!in.of(entry.id).empty() || in.profile)
    c.missing.push_back("per-SM TLB penalties (profile.json holds no tlb-per-sm measurement: "
                        "characterize on the GPU runs it)");
}

} // namespace gpuprobe::probes::per_sm
