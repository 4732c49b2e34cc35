#pragma once
// fleet.json (gpuprobe.fleet/2, `gpuprobe fleet`) as one typed value: every unit's figures, and
// per GPU model the median, spread and outliers of each figure and what differs between its
// units. findings/fleet.cpp makes it, `gpuprobe fleet` writes it with its Markdown table, the
// report draws it: all through fleet_from_json / to_json. Host-only.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::model {

// One GPU's folder, as the fleet reads it (findings::read_unit).
struct fleet_unit {
  std::string folder, model, uuid;
  std::string status;                    // "complete" | "incomplete: <why>" | "failed: <why>"
  std::map<std::string, double> numbers; // "L2.entries", "L2.penalty_cycles", "atomics.same_u32..."
  std::map<std::string, std::string> text; // "L2.sharing", "L2.group_sizes", "L2.group_map"
  std::map<std::string, std::vector<std::vector<int>>> groups; // "L2": its canonical SM groups
  // The figure `key`, or none where this unit lacks it.
  std::optional<double> number(const std::string &key) const {
    const auto it = numbers.find(key);
    return it == numbers.end() ? std::nullopt : std::optional<double>(it->second);
  }
  // The text `key`, or none where this unit lacks it or records it empty or as "-".
  std::optional<std::string> word(const std::string &key) const {
    const auto it = text.find(key);
    return it == text.end() || it->second.empty() || it->second == "-"
               ? std::nullopt
               : std::optional<std::string>(it->second);
  }
};

struct fleet_outlier {
  std::string uuid;
  double value = 0, score = 0; // score: |value - median| / the spread
  std::string why;
};

// One figure over the complete units of a model.
struct fleet_parameter {
  double median = 0, mad = 0, min = 0, max = 0;
  std::size_t n = 0;
  std::map<std::string, double> values; // per unit (UUID)
  std::vector<fleet_outlier> outliers;
};

struct fleet_member {
  std::string uuid, folder, status;
};

struct fleet_model {
  std::vector<fleet_member> units;
  std::size_t complete = 0;
  std::map<std::string, fleet_parameter> parameters;
  std::vector<std::string> differences; // in words, one per figure that differs
};

struct fleet {
  std::string schema;
  std::string outlier_rule; // in words
  std::map<std::string, fleet_model> models;
  std::vector<fleet_unit> units;
  std::optional<std::vector<std::string>> not_units; // folders given that are no unit, and why
};

// Throws gpuprobe::error in one line naming `source` (schema refused, a key missing or mistyped).
fleet fleet_from_json(const nlohmann::json &doc, const std::string &source);
fleet read_fleet(const std::string &path);
nlohmann::json to_json(const fleet &f);

} // namespace gpuprobe::model
