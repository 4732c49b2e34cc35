#pragma once
// The parts of `gpuprobe report` (one file each: report/<part>.cpp, and each probe's
// probes/<name>/draw.cpp) and what they share: the inputs a results folder holds, the CSV row and
// number helpers. Host-only; internal to report.
#include "model/bench_file.hpp"
#include "model/fleet.hpp"
#include "model/profile.hpp"
#include "model/tuning.hpp"
#include "model/validation.hpp"
#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace gpuprobe::report::detail {

using nlohmann::json;
// The page's types, named here so that a probe's draw.cpp (namespace probes::<name>) takes all it
// needs with `using namespace report::detail`.
using report::report_content;
using report::report_figure;
using report::report_table;

std::string num(double x, int digits = 4);
void row(std::ostringstream &o, const std::string &series, const std::string &style, double x,
         double y);
// "NVIDIA H100 80GB HBM3, 132 SMs, UUID GPU-..., driver 580.159.04 (CUDA 13.0), SM clock seen 1980
// MHz".
std::string device_line(const json &device);

// One raw result scan() routed to a probe's part: its path and document (null for the 2017
// tool's CSV and text files, which the tlb and tlb-sharing parts read by path).
struct raw_input {
  std::string path;
  json doc;
};

struct inputs {                                                 // what scan() found in the folder
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

// The SM clock the run saw (MHz), from the profile, where recorded: penalties get their ns.
std::optional<double> clock_mhz(const inputs &in);
// "95.3 (48.1 ns)": `cycles` with `digits` significant digits, and its time at `mhz` where known.
std::string cycles_ns(double cycles, std::optional<double> mhz, int digits = 3);

// One part of the page: draws what `in` holds into `c`, or says in c.missing what it lacks. The
// probes' parts are their catalog entries' draw (probes/<name>/draw.cpp); these are the rest.
using part_fn = void (*)(const inputs &in, report_content &c);
void theory_part(const inputs &in, report_content &c);
void peers_part(const inputs &in, report_content &c);
void tuning_part(const inputs &in, report_content &c);
void validation_part(const inputs &in, report_content &c);
void fleet_part(const inputs &in, report_content &c);
void summary_part(const inputs &in, report_content &c);

} // namespace gpuprobe::report::detail
