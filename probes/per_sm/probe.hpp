#pragma once
// The tlb-per-sm probe's line in the catalog (probes/catalog.hpp): a level probe
// (probes/level_probe.hpp), whose command and stage its level_probe in cli.cpp makes; its part of
// the report and what it adds to the profile are its own.
#include "probes/catalog.hpp"

namespace gpuprobe::probes::per_sm {

probe_descriptor entry();                                        // cli.cpp (level_entry)
void draw(const kit::report_inputs &in, kit::report_content &c); // draw.cpp

void contribute(const results_folder &folder, model::profile &p); // profile.cpp

} // namespace gpuprobe::probes::per_sm
