// The tlb-sampling probe's part of profile.json: its verdict below and above each level's reach,
// on the level's row of the cross-check (the tlb probe's part, before it in the catalog).
#include "common/json_io.hpp"
#include "common/results_folder.hpp"
#include "probes/sampling/probe.hpp"
#include "probes/tlb/cross_check.hpp"

#include <filesystem>

namespace gpuprobe::probes::sampling {

void contribute(const results_folder &folder, model::profile &p) {
  const auto sp = folder.raw(results_folder::raw_file::tlb_sampling);
  if (!p.tlb.cross_check || !std::filesystem::exists(sp))
    return;
  probes::attach_sampling(*p.tlb.cross_check,
                          probes::sampling_result_from_json(read_json_file(sp.string())));
}

} // namespace gpuprobe::probes::sampling
