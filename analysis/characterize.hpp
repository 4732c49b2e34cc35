#pragma once
// `gpuprobe characterize`'s analysis: DIR/profile.json assembled from what its stages wrote (the
// stages themselves: pipeline/stage_plan.hpp), with each level's cross-check. Host-only.
#include "model/profile.hpp"
#include "probes/sampling/driver.hpp"
#include "probes/tlb/driver.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuprobe::analysis {

// The memory access as the real-memory chase's L2 control measured it: {l2_hit_cycles (footprints
// up to a quarter of the L2), memory_cycles (twice the L2 and more), extra_cycles}; null without
// a control.
nlohmann::json memory_access(const probes::tlb_result &real_result);
// What serves a level's miss, from its penalty in units of that extra: "memory: a page walk ..."
// at 0.75 of a memory access or more, else "on chip (...)"; "" without a reference.
std::string miss_served_by(double penalty_cycles, const nlohmann::json &memory);

// The aliased levels (`tlb`: a profile's tlb block) checked against the real-memory analysis
// (`real_tlb`), the real-memory result's L2 near/far split and memory access, and the random
// sampling below/above each level (`sampling`: a tlb-sampling result, or none): the profile's
// tlb.cross_check.
nlohmann::json cross_check(const model::tlb_hierarchy &tlb, const model::tlb_hierarchy &real_tlb,
                           const probes::tlb_result &real_result,
                           const probes::sampling_result *sampling);

// DIR/profile.json (gpuprobe.profile/1): device, tlb (levels and candidates, each with the
// sharing analysis of its stage when one ran), atomics fits, the conditions seen, the stages.
model::profile assemble_profile(const std::string &dir, const nlohmann::json &stages_run,
                                const nlohmann::json &conditions);

} // namespace gpuprobe::analysis
