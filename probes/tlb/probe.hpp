#pragma once
// The tlb probe's line in the catalog (probes/catalog.hpp): what it is and the functions of this
// folder that the CLI registry, the report and characterize's plan call.
#include "probes/catalog.hpp"

namespace gpuprobe::probes::tlb {

kit::command cli();                                                  // cli.cpp: `gpuprobe tlb`
void draw(const kit::report_inputs &in, kit::report_content &c);     // draw.cpp
void plan(const kit::plan_request &r, std::vector<kit::stage> &out); // plan.cpp

void contribute(const results_folder &folder, model::profile &p); // profile.cpp
kit::command analyze_cli();                                       // cli.cpp: `gpuprobe analyze tlb`

inline constexpr probes::probe_descriptor entry = {"tlb", "tlb",      cli,         draw,
                                                   plan,  contribute, analyze_cli, "TLB levels"};

} // namespace gpuprobe::probes::tlb
