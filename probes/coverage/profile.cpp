// The tlb-coverage probe's part of profile.json: what one entry of each level covers.
#include "common/results_folder.hpp"
#include "probes/coverage/probe.hpp"
#include "probes/level_target.hpp"

namespace gpuprobe::probes::coverage {

void contribute(const results_folder &folder, model::profile &p) {
  using F = results_folder::raw_file;
  probes::for_each_matched_level(folder, F::tlb_coverage, "tlb_coverage", p.tlb,
                                 [](model::tlb_level &L, const nlohmann::json &rl) {
                                   if (!rl.contains("verdict") || !rl["verdict"].is_object())
                                     return;
                                   L.coverage = model::level_coverage_from_json(rl["verdict"]);
                                   L.coverage->source = results_folder::raw_rel(F::tlb_coverage);
                                 });
}

} // namespace gpuprobe::probes::coverage
