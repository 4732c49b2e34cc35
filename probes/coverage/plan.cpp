// The tlb-coverage probe's stage in `gpuprobe characterize` (full runs only: it maps its own
// layouts, about 20 s on an H100): what one entry of each level covers.
#include "probes/coverage/probe.hpp"
#include "probes/kit.hpp"

namespace gpuprobe::probes::coverage {

void plan(const kit::plan_request &r, std::vector<kit::stage> &s) {
  if (!r.tlb && !r.quick) // it reads the profile's file, so it is planned with the stages before it
    s.push_back(kit::profile_stage(r, "tlb_coverage", "tlb-coverage", {}));
}

} // namespace gpuprobe::probes::coverage
