// The tlb-coverage probe's stage in `gpuprobe characterize` (full runs only: it maps its own
// layouts, about 20 s on an H100): what one entry of each level covers.
#include "pipeline/stage_plan.hpp"
#include "probes/coverage/probe.hpp"

namespace gpuprobe::probes::coverage {

void plan(const pipeline::plan_request &r, std::vector<pipeline::stage> &s) {
  if (!r.tlb && !r.quick) // it reads the profile's file, so it is planned with the stages before it
    s.push_back(pipeline::profile_stage(r, "tlb_coverage", "tlb-coverage", {}));
}

} // namespace gpuprobe::probes::coverage
