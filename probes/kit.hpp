#pragma once
// The probe kit: what a probe declares, as plain data, for the framework to interpret. A probe's
// cli.cpp fills a `command` (its flags and what runs), its plan.cpp appends `stage`s, its draw.cpp
// fills a `report_content` from `report_inputs`; cli/ turns a command into a CLI11 subcommand,
// pipeline/ runs the stages, report/ renders the page. So no file under probes/ includes cli/,
// pipeline/ or report/ (tests/host/layout_test.cpp: every include goes down). Host-only;
// the few definitions are in kit.cpp.
#include "common/defaults.hpp"
#include "common/schema.hpp"
#include "model/bench_file.hpp"
#include "model/fleet.hpp"
#include "model/profile.hpp"
#include "model/tuning.hpp"
#include "model/validation.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace gpuprobe::probes::kit {

// ---- A subcommand: its flags and what it runs (cli/probe_command.cpp adds it to CLI11) ----

// The options every subcommand shares (cli/common.hpp adds them to the framework's own commands).
struct common_options {
  int device = 0;
  std::string out;
  std::vector<std::string> inputs;
  unsigned long long seed = defaults::seed;
  std::string devices; // --devices all|0,2,...: one process per GPU ("" = just --device)
};

// Where a flag's value goes: an option's variable, a flag's bool (names "--a,!--b": --b clears
// it), or a flag that runs a function when given.
using flag_target =
    std::variant<int *, unsigned *, std::uint64_t *, double *, std::string *,
                 std::vector<std::string> *, std::optional<int> *, bool *, std::function<void()>>;

// The closed range an option's value must lie in, typed as written: the help names the type
// (INT, UINT, FLOAT), as CLI::Range does.
using value_range =
    std::variant<std::pair<int, int>, std::pair<unsigned, unsigned>, std::pair<double, double>>;

struct flag {
  std::string names; // "--below", "--infer-halves,!--test-halves"
  std::string help;
  flag_target target;
  bool show_default = false; // the help shows the value it holds when declared
  bool required = false;
  bool existing_file = false;
  std::optional<value_range> range;
  std::vector<std::string> one_of; // the values it takes ("": any)

  flag &shown() { return show_default = true, *this; }
  flag &needed() { return required = true, *this; }
  flag &a_file() { return existing_file = true, *this; }
  flag &in(int lo, int hi) { return range = std::pair{lo, hi}, *this; }
  flag &in(unsigned lo, unsigned hi) { return range = std::pair{lo, hi}, *this; }
  flag &in(double lo, double hi) { return range = std::pair{lo, hi}, *this; }
  flag &of(std::vector<std::string> values) { return one_of = std::move(values), *this; }
};

struct command {
  command(std::string name_, std::string description_, std::string footer_)
      : name(std::move(name_)), description(std::move(description_)), footer(std::move(footer_)) {}
  std::string name, description, footer;
  // The shared options, in this order where asked for: --input (its help; "": none), --device,
  // --out (its help; "": none; the output's folder is checked before `run`), --seed.
  common_options *common = nullptr;
  std::string input;
  bool device = false;
  std::string out;
  bool seed = false;
  std::vector<flag> flags; // after the shared ones, in this order
  std::function<void()> run;
  // A command that measures: --device, --out (`out_help`) and --seed, over `o`.
  void measures(common_options &o, std::string out_help) {
    common = &o;
    device = seed = true;
    out = std::move(out_help);
  }
  // A probe that measures into a result file: measures(), the out help naming the result's schema
  // and this command as its probe.
  void measures_result(common_options &o) {
    measures(o, "result JSON file (" + schema::result.id() + ", probe " + name + ")");
  }
  // A command that reads results: --input (`input_help`) and --out (`out_help`), over `o`.
  void reads(common_options &o, std::string input_help, std::string out_help) {
    common = &o;
    input = std::move(input_help);
    out = std::move(out_help);
  }
  // Declares a flag of its own; chain shown(), in(...) etc. on what it returns.
  flag &option(std::string names, flag_target target, std::string help);
};

// ---- Its stages in `gpuprobe characterize` (pipeline/stage_plan.hpp runs them) ----

struct stage {
  std::string name;   // tlb, tlb_real, tlb_profile, tlb_real_profile, sharing_L1 ..., atomics
  std::string output; // path relative to DIR
  std::vector<std::string> args;  // gpuprobe arguments (without the binary)
  std::vector<std::string> reads; // stages whose output it reads: when one runs, this one reruns
  bool runs_last = false;         // runs after every stage the TLB profile decides (atomics)
  bool clock_witness = false;     // its result's device.sm_clock_mhz_seen counts for throttling
  // It maps no alias range and reads only stages that map none (tlb_real, its analysis,
  // atomics): under characterize --map-late it may run before every stage that maps one.
  bool alias_free = false;
  // Its answer depends on what was allocated before it (tlb_real: where its chase lies in physical
  // memory decides which lines sit in the far half of the L2): --map-late leaves it, and
  // every stage that reads it, in plan order.
  bool keeps_place = false;
};

// What a probe's plan (its catalog entry's `plan`, probes/<name>/plan.cpp) is asked for.
struct plan_request {
  bool quick = false;
  int device = 0;
  unsigned long long seed = 1;
  // The TLB profile's levels: null when the stages before it are planned (plan_stages), set
  // when those it decides are (sharing_stages).
  const model::tlb_hierarchy *tlb = nullptr;
};

// A stage that tests the TLB profile's levels: `command` over raw/tlb_profile.json into
// raw/<name>.json, with `quick_args` under --quick.
stage profile_stage(const plan_request &r, const std::string &name, const std::string &command,
                    const std::vector<std::string> &quick_args);

// ---- Its part of the report (report/ scans the folder and renders the page) ----

struct report_figure {
  std::string id; // file stem: <id>.csv, <id>.png, <id>.svg
  std::string title;
  std::string kind; // "lines" (csv: series,style,x,y) | "heatmap" (csv: matrix, first row = labels)
                    // | "forest" (csv: label,ratio,low,high,verdict)
                    // | "per_sm" (csv: sm,group,baseline,penalty; boxes: the groups)
  std::string xlabel, ylabel;
  bool logx = false, logy = false;
  std::vector<std::pair<double, std::string>> vlines = {}; // x, label (lines)
  std::vector<std::pair<int, int>> boxes = {}; // heatmap: [first, last] index ranges outlined
  std::string csv = {};
  nlohmann::json manifest() const;
};

struct report_table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string note;
};

// The page's opening (report/summary.cpp): read in ten seconds.
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

// One raw result the report's scan routed to a probe's part: its path and document (null for the
// 2017 tool's CSV and text files, which the tlb and tlb-sharing parts read by path).
struct raw_input {
  std::string path;
  nlohmann::json doc;
};

struct report_inputs {                                          // what the scan found in the folder
  std::map<std::string, std::vector<raw_input>> raw;            // by probe id (probes/catalog.hpp)
  std::vector<std::pair<std::string, model::bench_file>> bench; // gpuprobe-bench's files
  std::optional<model::profile> profile;
  std::optional<model::tuning_file> tuning;
  std::optional<model::validation> validation;
  std::optional<model::fleet> fleet;
  std::string device;
  // The results of probe `id` (empty when none), and their paths.
  const std::vector<raw_input> &of(const std::string &id) const;
  std::vector<std::string> paths_of(const std::string &id) const;
};

// The number helpers every part shares.
std::string num(double x, int digits = 4);
// One "series,style,x,y" row of a lines figure's CSV (none where x or y is not finite).
void row(std::ostringstream &o, const std::string &series, const std::string &style, double x,
         double y);
// "NVIDIA H100 80GB HBM3, 132 SMs, UUID GPU-..., driver 580.159.04 (CUDA 13.0), SM clock seen 1980
// MHz".
std::string device_line(const nlohmann::json &device);
// The SM clock the run saw (MHz), from the profile, where recorded: penalties get their ns.
std::optional<double> clock_mhz(const report_inputs &in);
// "95.3 (48.1 ns)": `cycles` with `digits` significant digits, and its time at `mhz` where known.
std::string cycles_ns(double cycles, std::optional<double> mhz, int digits = 3);

} // namespace gpuprobe::probes::kit
