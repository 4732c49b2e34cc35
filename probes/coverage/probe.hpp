#pragma once
// The tlb-coverage probe's line in the catalog (probes/catalog.hpp): what it is and the functions
// of this folder that the CLI registry and characterize's plan call.
#include "probes/catalog.hpp"

namespace gpuprobe::probes::coverage {

void setup_cli(CLI::App &parent); // cli.cpp: `gpuprobe tlb-coverage`

void plan(const pipeline::plan_request &r, std::vector<pipeline::stage> &out); // plan.cpp

void contribute(const results_folder &folder, model::profile &p); // profile.cpp

inline constexpr probes::probe_descriptor entry = {"tlb-coverage", "tlb-coverage", setup_cli,
                                                   nullptr,        plan,           contribute};

} // namespace gpuprobe::probes::coverage
