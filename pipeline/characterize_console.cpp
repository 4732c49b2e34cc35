#include "pipeline/characterize_console.hpp"

#include "probes/tlb/levels.hpp"

#include <cstdio>
#include <string>

namespace gpuprobe::pipeline {

void print_hierarchy(const model::tlb_hierarchy &tlb) {
  const auto &cross = tlb.cross_check;
  model::for_each_level(tlb, [&](const model::tlb_level &L, bool candidate,
                                 const std::string &label) {
    const model::level_check *check = cross ? cross->find(label) : nullptr;
    const bool disturbed = L.detail.contains("disturbed");
    std::printf("  %s%s%s\n",
                probes::level_line(label + (candidate ? " (candidate)" : "") +
                                       (disturbed ? " (DISTURBED)" : ""),
                                   L)
                    .c_str(),
                check ? "; real memory: " : "", check ? check->real_memory.c_str() : "");
    if (disturbed)
      std::printf("        disturbed: %s\n", L.detail["disturbed"].get<std::string>().c_str());
    if (const std::string iv = probes::interval_words(L); !iv.empty())
      std::printf("        intervals: %s\n", iv.c_str());
    if (const std::string sp = probes::penalty_spread_words(L); !sp.empty())
      std::printf("        penalty by SM: %s\n", sp.c_str());
    if (const std::string cov = L.coverage_finding(); !cov.empty())
      std::printf("        entry: %s\n", cov.c_str());
    if (candidate && L.detail.contains("existence"))
      std::printf("        candidate: %s\n", L.detail["existence"].get<std::string>().c_str());
    if (L.structure)
      std::printf("        structure: %s\n", probes::structure_detail(L).c_str());
    if (!check)
      return;
    if (check->miss_served_by)
      std::printf("        miss served by %s\n", check->miss_served_by->c_str());
    if (check->sampling)
      std::printf("        random sampling: %s\n", check->sampling->verdict.value_or("").c_str());
  });
  if (cross && cross->l2_split)
    std::printf("  real-memory chase: near/far L2 split %.0f cycles (p10 %.0f, p90 %.0f per hop)\n",
                cross->l2_split->split_cycles.value_or(0), cross->l2_split->p10_cycles.value_or(0),
                cross->l2_split->p90_cycles.value_or(0));
}

// Each stage's time, as the profile records it.
void print_stage_times(const model::profile &profile) {
  std::string times;
  for (const auto &st : profile.stages.value_or(std::vector<model::stage_record>{}))
    if (st.seconds) {
      char b[64];
      std::snprintf(b, sizeof b, "%s%s %.0f s", times.empty() ? "" : ", ", st.name.c_str(),
                    *st.seconds);
      times += b;
    }
  if (!times.empty())
    std::printf("  stage times: %s\n", times.c_str());
}

} // namespace gpuprobe::pipeline
