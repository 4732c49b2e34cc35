#pragma once
// `gpuprobe characterize`'s analysis: DIR/profile.json assembled from what its stages wrote (the
// stages themselves: pipeline/stage_plan.hpp), with each level's cross-check. Host-only.
#include "common/results_folder.hpp"
#include "model/profile.hpp"
#include "probes/sampling/driver.hpp"
#include "probes/tlb/driver.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::analysis {

// The memory access as the real-memory chase's L2 control measured it: an L2 hit (footprints up to
// a quarter of the L2), a memory access (twice the L2 and more) and the extra between them; none
// without a control.
std::optional<model::memory_access_check> memory_access(const probes::tlb_result &real_result);
// What serves a level's miss, from its penalty in units of that extra: "memory: a page walk ..."
// at 0.75 of a memory access or more, else "on chip (...)"; "" without a reference.
std::string miss_served_by(double penalty_cycles,
                           const std::optional<model::memory_access_check> &memory);

// The aliased levels (`tlb`: a profile's tlb block) checked against the real-memory analysis
// (`real_tlb`), the real-memory result's L2 near/far split and memory access, and the random
// sampling below/above each level (`sampling`: a tlb-sampling result, or none): the profile's
// tlb.cross_check.
// Levels are matched to tlb-sampling's by label; to the real-memory analysis's (which numbers
// its levels apart: its sweep ends at the device memory) by page and reach within 15 %.
model::tlb_cross_check cross_check(const model::tlb_hierarchy &tlb,
                                   const model::tlb_hierarchy &real_tlb,
                                   const probes::tlb_result &real_result,
                                   const probes::sampling_result *sampling);

// tlb-sampling's verdict on each row of `check` with its level's label (candidates are not
// sampled).
void attach_sampling(model::tlb_cross_check &check, const probes::sampling_result &sampling);

// Each level of a stage's result (raw/<file>, its block `key`) with the profile's level of the
// same label and geometry (label, page, entries): f(level, result level). Nothing where the file
// is missing.
void for_each_matched_level(
    const results_folder &folder, const char *file, const char *key, model::tlb_hierarchy &tlb,
    const std::function<void(model::tlb_level &, const nlohmann::json &)> &f);

// DIR/profile.json (gpuprobe.profile/1): raw/tlb_profile.json's hierarchy, the conditions seen and
// the stages, with each probe's part in catalog order (its catalog entry's `contribute`: sharing
// per level, conflict sets, coverage, atomics fits and the device, the cross-check, sampling).
model::profile assemble_profile(const std::string &dir, const nlohmann::json &stages_run,
                                const nlohmann::json &conditions);

} // namespace gpuprobe::analysis
