// The tlb-per-sm probe's stage in `gpuprobe characterize`: each level's hit and miss on every SM,
// on the alias range the tlb stage mapped (kept: no mapping of its own).
#include "probes/kit.hpp"
#include "probes/per_sm/probe.hpp"

namespace gpuprobe::probes::per_sm {

void plan(const kit::plan_request &r, std::vector<kit::stage> &s) {
  if (!r.tlb) // it reads the profile's file, so it is planned with the stages before it
    // Quick: the first 16 SMs, as the quick sharing stages test (2.5 s -> about 0.4 s on an H100).
    s.push_back(kit::profile_stage(r, "tlb_per_sm", "tlb-per-sm", {"--sms", "16"}));
}

} // namespace gpuprobe::probes::per_sm
