#pragma once
// Figures drawn earlier from the same data (`gpuprobe report --figures-from`): a report takes each
// figure whose spec, CSV and plotter are the ones it would draw it with from an earlier report's
// figures/, instead of drawing it again. `gpuprobe run` passes its folder's report/figures, so a
// rerun draws only what changed. Host-only.
#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace gpuprobe::report {

// FNV-1a, 64 bits, of `text` as 16 hex digits: tells one text from another (not a secret).
std::string fnv1a64_hex(const std::string &text);

// What draws a report's figures: the Python and the plot script, and a hash of the script's
// text (a script edited since draws anew). Recorded in figures/manifest.json as "drawn_by".
nlohmann::json plotter_stamp(const std::string &python, const std::string &script);

// The figures of `figures` that `earlier` (another report's figures/ folder) holds drawn by the
// same plotter (`stamp`) from the same manifest entry and the same CSV, with a PNG and an SVG
// that are not empty and not listed in its not_drawn.json: their PNG and SVG are copied into
// `figs`, and their ids returned. Anything else (no such folder, another plotter, a figure whose
// data changed) is left to be drawn.
std::set<std::string> take_figures_drawn(const std::vector<report_figure> &figures,
                                         const std::filesystem::path &earlier,
                                         const std::filesystem::path &figs,
                                         const nlohmann::json &stamp);

} // namespace gpuprobe::report
