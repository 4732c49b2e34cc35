#pragma once
// The rules of gpuprobe report's folder: which plot script draws, which older report folder may
// be replaced, where --out may sit inside its input, and the figures plot.py could not draw.
#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace gpuprobe::cli {

// The plot script when --plot-script is not given: the one beside this binary (a copied
// gpuprobe: <bin>/plot.py; an installed one: <bin>/../share/gpuprobe/plot.py), else the source
// tree's it was built from; one line naming where it looked when none is there.
std::string default_plot_script();
// A report folder written before the marker named sizes and hashes (common/outputs.hpp):
// accepted only when plot.py's own manifest is there (figures/manifest.json with its "drawn_by"
// stamp) and every path in it is a page, figures/, that manifest or a figure it lists
// (<id>.csv/png/svg, not_drawn.json). A user's own file is never deleted, nor a lone index.md or
// index.html that no report drew.
bool legacy_report_folder(const std::string &dir, const std::vector<std::string> &paths);
// report --out inside its input folder: its own layout's DIR/report (or another new name), never
// a folder or file the results folder's stages write.
bool report_inside_ok(const std::string &out, const std::string &input);
// The figures plot.py could not draw (figures/not_drawn.json; a figure with no PNG or SVG too):
// off the page, each listed under "not drawn" with the reason (report exits 3).
void take_not_drawn(const std::filesystem::path &figs, report::report_content &content);

// plot.py (run as `python script figs`, no shell) draws what figs/manifest.json lists, written
// from `to_draw`; its output is held back (on Ctrl-C gpuprobe's one line is all a person reads;
// on a failure its last line is said in gpuprobe's).
void draw_figures(const std::string &python, const std::string &script,
                  const std::filesystem::path &figs, const nlohmann::json &to_draw);
// Each figure's PNG, by id, to embed (index.html stands alone).
std::map<std::string, std::string> figure_pngs(const std::filesystem::path &figs,
                                               const report::report_content &content);

} // namespace gpuprobe::cli
