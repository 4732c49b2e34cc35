#pragma once
// What characterize prints when its profile is made: the hierarchy at a glance and the stage times.
#include "model/profile.hpp"

namespace gpuprobe::pipeline {

// The hierarchy at a glance: each level and candidate, its sharing and the cross-check.
void print_hierarchy(const model::tlb_hierarchy &tlb);
// Each stage's time, as the profile records it ("stage times: tlb 12 s, ...").
void print_stage_times(const model::profile &profile);

} // namespace gpuprobe::pipeline
