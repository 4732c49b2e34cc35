// The tlb-conflict probe's part of profile.json: each level's conflict sets (a second measure of
// its ways), and the level marked where the two measures disagree (confidence halved).
#include "common/results_folder.hpp"
#include "probes/conflict/analysis.hpp"
#include "probes/conflict/probe.hpp"
#include "probes/level_target.hpp"
#include "probes/tlb/levels.hpp"

namespace gpuprobe::probes::conflict {

void contribute(const results_folder &folder, model::profile &p) {
  probes::for_each_matched_level(folder, results_folder::raw_file::tlb_conflict, "tlb_conflict",
                                 p.tlb, [](model::tlb_level &L, const nlohmann::json &rl) {
                                   if (!L.structure)
                                     return;
                                   L.structure->conflict = probes::conflict_summary(
                                       L, probes::conflict_level_from_json(rl));
                                   probes::mark_disagreement(L);
                                 });
}

} // namespace gpuprobe::probes::conflict
