#pragma once
// The tlb-sharing probe's line in the catalog (probes/catalog.hpp): what it is and the functions of
// this folder that the CLI registry, the report and characterize's plan call.
#include "probes/catalog.hpp"

namespace gpuprobe::probes::sharing {

void setup_cli(CLI::App &parent); // cli.cpp: `gpuprobe tlb-sharing`
void draw(const report::detail::inputs &in, report::report_content &c);        // draw.cpp
void plan(const pipeline::plan_request &r, std::vector<pipeline::stage> &out); // plan.cpp

void contribute(const results_folder &folder, model::profile &p); // profile.cpp
void setup_analyze(CLI::App &analyze); // cli.cpp: `gpuprobe analyze sharing`

inline constexpr probes::probe_descriptor entry = {
    "tlb-sharing", "tlb-sharing", setup_cli,     draw,
    plan,          contribute,    setup_analyze, "TLB sharing among SMs"};

} // namespace gpuprobe::probes::sharing
