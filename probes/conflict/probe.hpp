#pragma once
// The tlb-conflict probe's line in the catalog (probes/catalog.hpp): what it is and the functions
// of this folder that the CLI registry, the report and characterize's plan call.
#include "probes/catalog.hpp"

namespace gpuprobe::probes::conflict {

kit::command cli(); // cli.cpp (level_command): `gpuprobe tlb-conflict`

void plan(const kit::plan_request &r, std::vector<kit::stage> &out); // cli.cpp (level_plan)

void contribute(const results_folder &folder, model::profile &p); // profile.cpp

inline constexpr probes::probe_descriptor entry = {"tlb-conflict", "tlb-conflict", cli,
                                                   nullptr,        plan,           contribute};

} // namespace gpuprobe::probes::conflict
