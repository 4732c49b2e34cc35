#pragma once
// `gpuprobe report`: what a results folder holds, turned into figures (a CSV each, drawn by
// reports/plot.py) and the tables of one page. Host-only.
//
// Folder layout (what `gpuprobe characterize`, `tune` and `validate` write; any part may be
// missing):
//   raw/*.json|*.csv|*.txt   gpuprobe.result/2 files (one per probe), the 2017 tool's TLB CSVs
//                            and sharing matrices, gpuprobe-bench JSON
//   profile.json             gpuprobe.profile/2 (else the TLB inputs are analyzed here)
//   tuning.json              gpuprobe.tuning/2 (the decisions, when present)
//   validation.json          gpuprobe.validation/1 (a table, when present)
#include "probes/kit.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gpuprobe::report {

// The page's data: the probe kit's (probes/kit.hpp), which every part fills.
using probes::kit::report_content;
using probes::kit::report_figure;
using probes::kit::report_part;
using probes::kit::report_summary;
using probes::kit::report_table;

// Reads `dir` and draws what is valid; a file that is broken, foreign or newer goes to `skipped`
// (throws gpuprobe::error: a missing folder, or nothing valid in it).
report_content build_report(const std::string &dir);

// What `gpuprobe run` prints last, from a finished folder (summary.cpp): each level, the
// tuning, each level's region decision, validate's verdicts and trade-offs, the page's path.
std::vector<std::string> run_summary_lines(const std::string &dir);

// Figures as <img>: embedded (a data: URI of `png[id]`, so index.html stands alone) where given,
// else figures/<id>.png; the PNG, SVG and CSV files are linked either way.
std::string render_html(const report_content &c,
                        const std::map<std::string, std::string> &png = {});
std::string base64(const std::string &bytes);
std::string render_markdown(const report_content &c);

} // namespace gpuprobe::report
