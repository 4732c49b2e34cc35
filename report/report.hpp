#pragma once
// `gpuprobe report`: what a results folder holds, turned into figures (a CSV each, drawn by
// reports/plot.py) and the tables of one page. Host-only.
//
// Folder layout (what `gpuprobe characterize`, `tune` and `validate` write; any part may be
// missing):
//   raw/*.json|*.csv|*.txt   gpuprobe.result/1 files (one per probe), the 2017 tool's TLB CSVs
//                            and sharing matrices, gpuprobe-bench JSON
//   profile.json             gpuprobe.profile/1 (else the TLB inputs are analyzed here)
//   tuning.json              gpuprobe.tuning/1 (the decisions, when present)
//   validation.json          gpuprobe.validation/1 (a table, when present)
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gpuprobe::report {

struct report_figure {
  std::string id; // file stem: <id>.csv, <id>.png, <id>.svg
  std::string title;
  std::string kind; // "lines" (csv: series,style,x,y) | "heatmap" (csv: matrix, first row = labels)
                    // | "forest" (csv: label,ratio,low,high,verdict)
                    // | "per_sm" (csv: sm,group,baseline,penalty; boxes: the groups)
  std::string xlabel, ylabel;
  bool logx = false, logy = false;
  std::vector<std::pair<double, std::string>> vlines; // x, label (lines)
  std::vector<std::pair<int, int>> boxes; // heatmap: [first, last] index ranges outlined
  std::string csv;
  nlohmann::json manifest() const;
};

struct report_table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string note;
};

// The page's opening (summary.cpp): read in ten seconds.
struct report_summary {
  std::vector<std::vector<std::string>> hierarchy; // level, entries x coverage = reach, penalty,
                                                   // a miss is served by, shared by
  std::string diagram_svg;                         // the levels as boxes (inline SVG)
  std::vector<std::string> lines;                  // TLB, atomics, validation: one line each
  std::vector<std::string> decisions;              // tune's decisions with their reasons
  bool empty() const { return hierarchy.empty() && lines.empty() && decisions.empty(); }
};

// A part of the page under its heading: its tables, then its figures (the figures that draw a
// table's values follow it).
struct report_part {
  std::string id; // the part's name: an anchor on the page
  std::string heading;
  std::size_t figures_begin = 0, figures_end = 0; // its figures: [begin, end) of figures
  std::size_t tables_begin = 0, tables_end = 0;   // its tables: [begin, end) of tables
};

struct report_content {
  std::string device;             // one line
  std::string provenance;         // when, by which gpuprobe, quick or full, seed, driver: one line
  std::vector<report_part> parts; // those that drew something, in page order
  report_summary summary;
  std::vector<report_figure> figures;
  std::vector<report_table> tables;
  std::vector<std::string> missing;   // what the folder lacks, said on the page
  std::vector<std::string> not_drawn; // results of probes no part draws (listed, never an error)
  // Inputs refused, each "FILE: reason" (broken, of another GPU than the folder's, of a newer
  // version): the page is drawn from the rest, they are listed, and report exits 3.
  std::vector<std::string> skipped;
  std::vector<std::string> sources; // files read, relative to the results folder
  // Leaves out the figures `keep` refuses, each part keeping the rest of its own.
  void keep_figures_if(const std::function<bool(const report_figure &)> &keep);
};

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
