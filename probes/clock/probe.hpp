#pragma once
// The clock probe's line in the catalog (probes/catalog.hpp): what it is and the functions of this
// folder that the CLI registry and the report call (characterize does not run it: no plan).
#include "probes/catalog.hpp"

namespace gpuprobe::probes::clock {

void setup_cli(CLI::App &parent);                                       // cli.cpp
void draw(const report::detail::inputs &in, report::report_content &c); // draw.cpp

inline constexpr probes::probe_descriptor entry = {"clock", "clock", setup_cli, draw,
                                                   nullptr, nullptr, nullptr,   "Clock"};

} // namespace gpuprobe::probes::clock
