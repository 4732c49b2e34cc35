#pragma once
// The clock probe's line in the catalog (probes/catalog.hpp): what it is and the functions of this
// folder that the CLI registry and the report call (characterize does not run it: no plan).
#include "probes/catalog.hpp"

namespace gpuprobe::probes::clock {

kit::command cli();                                              // cli.cpp
void draw(const kit::report_inputs &in, kit::report_content &c); // draw.cpp

inline constexpr probes::probe_descriptor entry = {"clock", "clock", cli,     draw,
                                                   nullptr, nullptr, nullptr, "Clock"};

} // namespace gpuprobe::probes::clock
