// The tlb probe's part of profile.json: the aliased levels against the real-memory chase (its
// sweep and analysis, raw/tlb_real.json and raw/tlb_real_profile.json), where both were measured.
#include "common/json_io.hpp"
#include "common/results_folder.hpp"
#include "probes/tlb/cross_check.hpp"
#include "probes/tlb/probe.hpp"

#include <filesystem>

namespace gpuprobe::probes::tlb {

void contribute(const results_folder &folder, model::profile &p) {
  using F = results_folder::raw_file;
  const auto rp = folder.raw(F::tlb_real_profile), rr = folder.raw(F::tlb_real);
  if (!std::filesystem::exists(rp) || !std::filesystem::exists(rr))
    return;
  const model::profile real_profile = model::read_profile(rp.string());
  const auto real = probes::tlb_result_from_json(read_json_file(rr.string()));
  p.tlb.cross_check = probes::cross_check(p.tlb, real_profile.tlb, real, nullptr);
}

} // namespace gpuprobe::probes::tlb
