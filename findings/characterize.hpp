#pragma once
// `gpuprobe characterize`'s analysis: DIR/profile.json assembled from what its stages wrote (the
// stages themselves: pipeline/stage_plan.hpp), each probe adding its part. Host-only.
#include "model/profile.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace gpuprobe::findings {

// DIR/profile.json (gpuprobe.profile/2): raw/tlb_profile.json's hierarchy, the conditions seen and
// the stages, with each probe's part in catalog order (its catalog entry's `contribute`: sharing
// per level, conflict sets, coverage, atomics fits and the device, the cross-check, sampling).
model::profile assemble_profile(const std::string &dir, const nlohmann::json &stages_run,
                                const nlohmann::json &conditions);

} // namespace gpuprobe::findings
