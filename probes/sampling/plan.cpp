// The tlb-sampling probe's stage in `gpuprobe characterize`: the workload-level cross-check,
// random reads over real memory just below and above each level's reach (a level past the device
// memory is skipped, with the reason).
#include "probes/kit.hpp"
#include "probes/sampling/probe.hpp"

namespace gpuprobe::probes::sampling {

void plan(const kit::plan_request &r, std::vector<kit::stage> &s) {
  if (!r.tlb) // it reads the profile's file, so it is planned with the stages before it
    s.push_back(kit::profile_stage(r, "tlb_sampling", "tlb-sampling", {"--reps", "3"}));
}

} // namespace gpuprobe::probes::sampling
