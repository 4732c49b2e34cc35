#pragma once
// The tlb-per-sm probe's line in the catalog (probes/catalog.hpp): what it is and the functions
// of this folder that the CLI registry, the report and characterize's plan call.
#include "probes/catalog.hpp"

namespace gpuprobe::probes::per_sm {

kit::command cli(); // cli.cpp (level_command): `gpuprobe tlb-per-sm`
void draw(const kit::report_inputs &in, kit::report_content &c);     // draw.cpp
void plan(const kit::plan_request &r, std::vector<kit::stage> &out); // cli.cpp (level_plan)

void contribute(const results_folder &folder, model::profile &p); // profile.cpp

inline constexpr probes::probe_descriptor entry = {
    "tlb-per-sm", "tlb-per-sm", cli, draw, plan, contribute, nullptr, "Per-SM TLB latency"};

} // namespace gpuprobe::probes::per_sm
