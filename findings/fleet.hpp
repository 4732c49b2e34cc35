#pragma once
// `gpuprobe fleet`: many unit folders (one GPU each: profile.json, tuning.json, validation.json,
// raw/) merged into one table. Per unit: its TLB levels (entries, coverage, penalty), sharing
// groups (count, sizes, structure), atomics slopes, tuning and validation figures. Per model:
// the median and spread of every figure, units off the median flagged with a robust rule and the
// reason. Units of different models are kept apart. Host-only.
#include "model/fleet.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace gpuprobe::findings {

using model::fleet_unit; // status "complete" | "incomplete: <why>" | "failed: <why>"

// Unit folders under `inputs` (at any depth): a folder with profile.json, or with raw/ holding
// gpuprobe results but no profile.json (an unfinished characterize: "incomplete", with the stages
// it has). A folder that is not a unit (no UUID: gpuprobe-bench results only; a broken file; an
// empty raw/) goes to `not_units` as "FOLDER: reason" when it is given, else is an error.
// Throws gpuprobe::error (one line): an input that is not a folder, nothing under an input, no
// unit at all, one GPU (UUID) in two folders (which to keep cannot be known).
std::vector<fleet_unit> find_units(const std::vector<std::string> &inputs,
                                   std::vector<std::string> *not_units = nullptr);

// The figures of one unit folder (status, numbers, text).
fleet_unit read_unit(const std::string &folder);

struct fleet_rule {
  double limit = 3.5;           // |x - median| / MAD above this is an outlier
  double floor_fraction = 0.01; // the MAD is at least this share of |median| (units that agree
                                // to 1 % are not outliers because the others agree exactly)
};

// The outlier rule's measure of a figure over units: their median, MAD, and the scale a value's
// distance from the median is divided by (the MAD, at least floor_fraction of |median|).
struct robust_spread {
  double median = 0, mad = 0, scale = 0;
  double score(double x) const; // |x - median| / scale
};
robust_spread spread_of(const std::vector<double> &xs, const fleet_rule &rule);

// gpuprobe.fleet/2 (model/fleet.hpp): per model the units, each figure's median, spread and
// outliers, and what differs; every unit's figures.
model::fleet merge_fleet(const std::vector<fleet_unit> &units, const fleet_rule &rule = {});

// The table as Markdown: one row per unit, models apart, then each model's findings.
// `plain`: for a terminal: the same lines with data made safe for a terminal (control characters
// escaped) instead of Markdown-escaped (no \_ or &amp;).
std::string fleet_markdown(const model::fleet &fleet, bool plain = false);

} // namespace gpuprobe::findings
