#pragma once
// validation.json (gpuprobe.validation/1, `gpuprobe validate`) as one typed value: per workload
// and pool the default and tuned times, the ratio with its 95 % CI, the Holm-corrected p and the
// verdict; the trade-offs charged to tune's decisions. analysis/validation.cpp makes the rows,
// tune/validate_driver.cpp writes the file, the report and the fleet read it: all through
// validation_from_json / to_json. Host-only.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::model {

// A decision of tune that a workload's two configurations differ in, with its value on each side
// as the tuning states it ("32-bit" -> "64-bit", "one" -> "24" regions, "thread" -> "warp", "one
// pass" -> "2 passes of 64 GiB"). Made where the workload is built from the typed tuning.
enum class decision { word_size, regions, crw_placement, tlb_scope };
std::string to_string(decision d);
decision decision_from_string(const std::string &s); // throws gpuprobe::error on another word
struct decision_change {
  decision what = decision::word_size;
  std::string from, to;
};

// Which workload on which pool, under which two configurations, and whether they differ: what a
// validation row says first and what validate measures it from.
struct compared_workload {
  std::string workload, pool, config_default, config_tuned;
  bool measured = true; // false: the tuning runs the default's configuration here (no samples)
};

struct validation_row : compared_workload {
  std::string verdict;               // faster, no significant difference, slower, not tuned
  std::optional<std::string> reason; // not measured: why
  // Measured rows only:
  std::optional<std::size_t> reps;
  std::optional<double> median_default_ms, median_tuned_ms;
  std::optional<double> ratio, ci_low, ci_high; // median tuned / median default, 95 % CI
  std::optional<double> p, p_holm;
  std::optional<std::vector<double>> default_ms, tuned_ms; // every sample
  // The decisions the two configurations differ in (absent in files before them).
  std::optional<std::vector<decision_change>> changes;
  nlohmann::json detail = nlohmann::json::object();
};

// A workload validate finds slower, charged to a decision its configurations differ in.
struct tradeoff {
  std::string decision; // to_string(model::decision): word_size, regions, crw_placement, tlb_scope
  std::string workload, pool;
  double ratio = 1, ci_low = 0, ci_high = 0;
  std::string line; // in words, as validate and the report print it
};

struct validation {
  std::string schema;
  nlohmann::json device = nlohmann::json::object();
  nlohmann::json meta = nlohmann::json::object();
  nlohmann::json tuning = nlohmann::json::object(); // the tuning.json validated: path, GPU, block
  nlohmann::json method = nlohmann::json::object(); // reps, order, statistics, in words
  std::vector<validation_row> workloads;
  std::string summary;                            // "18 faster, 0 no significant ..., 4 not tuned"
  std::optional<std::vector<tradeoff>> tradeoffs; // absent in files before the trade-offs
  std::optional<double> wall_seconds;
  nlohmann::json detail = nlohmann::json::object();
  std::string gpu_uuid() const { return device.value("uuid", ""); }
};

decision_change decision_change_from_json(const nlohmann::json &j);
nlohmann::json to_json(const decision_change &c);
validation_row validation_row_from_json(const nlohmann::json &j);
nlohmann::json to_json(const validation_row &r);
tradeoff tradeoff_from_json(const nlohmann::json &j);
nlohmann::json to_json(const tradeoff &t);
// Throws gpuprobe::error in one line naming `source` (schema refused, a key missing or mistyped).
validation validation_from_json(const nlohmann::json &doc, const std::string &source);
validation read_validation(const std::string &path);
nlohmann::json to_json(const validation &v);

} // namespace gpuprobe::model
