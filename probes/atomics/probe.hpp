#pragma once
// The atomics probe's line in the catalog (probes/catalog.hpp): what it is and the functions of
// this folder that the CLI registry, the report and characterize's plan call.
#include "probes/catalog.hpp"

namespace gpuprobe::probes::atomics {

kit::command cli();                                                  // cli.cpp: `gpuprobe atomics`
void draw(const kit::report_inputs &in, kit::report_content &c);     // draw.cpp
void plan(const kit::plan_request &r, std::vector<kit::stage> &out); // plan.cpp

void contribute(const results_folder &folder, model::profile &p); // profile.cpp

inline constexpr probes::probe_descriptor entry = {
    "atomics", "atomics", cli, draw, plan, contribute, nullptr, "Atomic contention"};

} // namespace gpuprobe::probes::atomics
