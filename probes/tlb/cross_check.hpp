#pragma once
// The profile's tlb.cross_check (characterize's assembly: the tlb and tlb-sampling probes' parts,
// profile.cpp): what the real-memory chase and the random sampling say of each aliased level.
// Host-only.
#include "model/profile.hpp"
#include "probes/sampling/driver.hpp"
#include "probes/tlb/driver.hpp"

#include <optional>
#include <string>

namespace gpuprobe::probes {

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

} // namespace gpuprobe::probes
