#pragma once
// The tlb-sharing probe's line in the catalog (probes/catalog.hpp): what it is and the functions of
// this folder that the CLI registry, the report and characterize's plan call.
#include "probes/catalog.hpp"

namespace gpuprobe::probes::sharing {

kit::command cli();                                              // cli.cpp: `gpuprobe tlb-sharing`
void draw(const kit::report_inputs &in, kit::report_content &c); // draw.cpp
void plan(const kit::plan_request &r, std::vector<kit::stage> &out); // plan.cpp

void contribute(const results_folder &folder, model::profile &p); // profile.cpp
kit::command analyze_cli(); // cli.cpp: `gpuprobe analyze sharing`

inline constexpr probes::probe_descriptor entry = {
    "tlb-sharing", "tlb-sharing", cli,         draw,
    plan,          contribute,    analyze_cli, "TLB sharing among SMs"};

} // namespace gpuprobe::probes::sharing
