// The tlb-conflict probe's stage in `gpuprobe characterize`: each level's ways a second way,
// minimal conflict sets on the alias range.
#include "probes/conflict/probe.hpp"
#include "probes/kit.hpp"

namespace gpuprobe::probes::conflict {

void plan(const kit::plan_request &r, std::vector<kit::stage> &s) {
  if (!r.tlb) // it reads the profile's file, so it is planned with the stages before it
    s.push_back(kit::profile_stage(r, "tlb_conflict", "tlb-conflict", {"--windows", "2"}));
}

} // namespace gpuprobe::probes::conflict
