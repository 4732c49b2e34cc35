// The tlb-per-sm probe's part of profile.json: each level's per-SM hits and penalties, and the SMs
// whose penalty lies apart from the others'.
#include "analysis/significance.hpp"
#include "common/results_folder.hpp"
#include "common/stats.hpp"
#include "probes/level_target.hpp"
#include "probes/per_sm/driver.hpp"
#include "probes/per_sm/probe.hpp"

#include <algorithm>
#include <cmath>

namespace gpuprobe::probes::per_sm {

namespace {

// SMs whose penalty lies past the larger of compare's penalty bar, 4 x the rep-to-rep noise and
// 5 robust sigmas (1.4826 MAD) from the median of the SMs (3.5 would name one SM in about
// 2,000 by chance: a level of 132 SMs would often have one).
void mark_outliers(model::level_per_sm &s) {
  const auto &p = s.penalty_cycles;
  if (p.size() < 3)
    return;
  const double m = median(p);
  std::vector<double> dev;
  for (double x : p)
    dev.push_back(std::fabs(x - m));
  const double bar = std::max(
      {analysis::penalty_bar(m, m), 4 * s.noise_cycles.value_or(0), 5 * 1.4826 * median(dev)});
  auto &apart = s.apart_sms.emplace();
  for (std::size_t i = 0; i < p.size(); ++i)
    if (dev[i] > bar)
      apart.push_back(s.sms[i]);
  s.detail["apart_bar_cycles"] = bar;
}

} // namespace

void contribute(const results_folder &folder, model::profile &p) {
  using F = results_folder::raw_file;
  probes::for_each_matched_level(folder, F::tlb_per_sm, "tlb_per_sm", p.tlb,
                                 [](model::tlb_level &L, const nlohmann::json &rl) {
                                   if (rl.contains("skipped"))
                                     return;
                                   L.per_sm = probes::summarize_per_sm(
                                       probes::per_sm_level_from_json(rl),
                                       results_folder::raw_rel(F::tlb_per_sm));
                                   mark_outliers(*L.per_sm);
                                 });
}

} // namespace gpuprobe::probes::per_sm
