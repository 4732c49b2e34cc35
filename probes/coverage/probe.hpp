#pragma once
// The tlb-coverage probe's line in the catalog (probes/catalog.hpp): a level probe
// (probes/level_probe.hpp), whose command and stage its level_probe in cli.cpp makes; what it adds
// to the profile is its own.
#include "probes/catalog.hpp"

namespace gpuprobe::probes::coverage {

probe_descriptor entry(); // cli.cpp (level_entry)

void contribute(const results_folder &folder, model::profile &p); // profile.cpp

} // namespace gpuprobe::probes::coverage
