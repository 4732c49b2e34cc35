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
// The page's types and the helpers every part shares: the probe kit's (probes/kit.hpp), whose
// parts the probes' draw.cpp fill.
using report::report_content;
using report::report_figure;
using report::report_table;

using probes::kit::clock_mhz;
using probes::kit::cycles_ns;
using probes::kit::device_line;
using probes::kit::num;
using probes::kit::raw_input;
using probes::kit::row;
using inputs = probes::kit::report_inputs; // what scan() found in the folder

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
