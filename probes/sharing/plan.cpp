// The tlb-sharing probe's stages in `gpuprobe characterize`, which the TLB profile decides: one
// per level, and one for its largest candidate when that reaches beyond every level (so a
// structure below the confidence bar, like the H100's 64 GiB one, still gets a sharing answer,
// labelled as a candidate's).
#include "common/results_folder.hpp"
#include "probes/kit.hpp"
#include "probes/sharing/probe.hpp"

#include <algorithm>

namespace gpuprobe::probes::sharing {

void plan(const kit::plan_request &r, std::vector<kit::stage> &s) {
  if (!r.tlb)
    return;
  const auto &levels = r.tlb->levels, &candidates = r.tlb->candidates;
  using F = results_folder::raw_file;
  const std::string profile = results_folder::raw_rel(F::tlb_profile);
  const auto out = [](const std::string &stage) {
    return results_folder::raw_rel(F::of_stage(stage));
  };
  auto add = [&](const std::string &name, const std::string &flag, int k) {
    std::vector<std::string> a = {
        "tlb-sharing",     "--device", std::to_string(r.device), "--profile", profile,  flag,
        std::to_string(k), "--seed",   std::to_string(r.seed),   "--out",     out(name)};
    // Quick: the first 16 SMs. Full: 16 SMs spread over the GPU first, every SM only where
    // they are not all sharing (a global level is global after a few GPCs' pairs).
    a.insert(a.end(), {r.quick ? "--max-sms" : "--sample-sms", "16"});
    s.push_back({name, out(name), a, {"tlb_profile"}});
  };
  double top_level = 0;
  for (std::size_t k = 1; k <= levels.size(); ++k) {
    add(F::sharing_prefix + model::level_label(false, k - 1), "--level", int(k));
    top_level = std::max(top_level, levels[k - 1].reach_bytes);
  }
  if (!candidates.empty()) {
    std::size_t best = 0; // the candidate with the largest reach (the one the scoped workloads use)
    for (std::size_t k = 0; k < candidates.size(); ++k)
      if (candidates[k].reach_bytes > candidates[best].reach_bytes)
        best = k;
    if (candidates[best].reach_bytes > top_level)
      add(F::sharing_prefix + model::level_label(true, best), "--candidate", int(best + 1));
  }
}

} // namespace gpuprobe::probes::sharing
