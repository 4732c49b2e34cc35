#pragma once
// tuning.json (gpuprobe.tuning/2, `gpuprobe tune`) as one typed value: the allocator block (the
// alloc::tuning that RW, CoRW and CRW are built with, allocators/load_tuning.hpp spells its keys),
// each decision with its reason and the measurements behind it, and the profile it came from.
// tune writes it, validate, the report, run's summary and the fleet read it: all through
// tuning_from_json / to_json. A file from before tlb_scope_midpoint_bytes (the committed fleet
// units) reads it as 0, the allocators' default, and is written with it. Host-only.
#include "allocators/load_tuning.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::model {

// One decision of tune: its reason in words and what it rests on (options, measurements,
// per-level ratios), as tune/decisions.hpp writes them.
struct tuning_decision {
  std::string reason;
  nlohmann::json detail = nlohmann::json::object();
};

// The profile a tuning was derived from.
struct tuning_source {
  std::string path, device_name, device_uuid;
  bool same_gpu = true; // the profile's GPU is the one tune measured on
};

struct tuning_file {
  std::string schema;
  nlohmann::json device = nlohmann::json::object(); // the GPU tune measured on
  nlohmann::json meta = nlohmann::json::object();
  tuning_source profile;
  alloc::tuning allocator;
  // The allocator block states no tlb_scope_bytes (absent or null): the allocators read 0 (one
  // pass), a reader says "not in tuning.json", never "one pass".
  bool tlb_scope_missing = false;
  // The decisions, each absent in a file that lacks it.
  std::optional<tuning_decision> word_size, regions, crw_placement, tlb_scope;
  std::optional<double> wall_seconds;
  nlohmann::json detail = nlohmann::json::object();
  std::string gpu_uuid() const { return device.value("uuid", ""); }
  // The decision named as in the file ("word_size", "regions", "crw_placement", "tlb_scope").
  const std::optional<tuning_decision> &decision(const std::string &name) const;
};

// A decision as tune/decisions.hpp writes it ({"reason": ..., what it rests on}).
tuning_decision tuning_decision_from_json(const nlohmann::json &j);

// Throws gpuprobe::error in one line naming `source`: another schema or a newer version, a
// malformed allocator block (alloc::tuning_from_json's reason), a key mistyped.
tuning_file tuning_from_json(const nlohmann::json &doc, const std::string &source);

// One get_page point of the word-size decision (tune/decisions.hpp's word_point as written):
// the allocator, the free fraction, and the median times with 32- and 64-bit words.
struct word_measurement {
  std::string allocator;
  double free_fraction = 0, ms32 = 0, ms64 = 0;
};
// The word-size decision's measurements, typed (none when the file has no such decision). Throws
// gpuprobe::error in one line naming the first malformed point (a field missing or mistyped, a
// fraction outside 0..1, a time that is negative or not finite).
std::vector<word_measurement> word_measurements(const tuning_file &t);
// One level's row of the regions decision (tune/decisions.hpp's per_level as written): the level,
// the time ratio of its SM -> region map against one region where it was measured, and the decision
// in a word ("gain", "no gain", "not applicable", ...).
struct region_level {
  std::string level = "?";
  std::optional<double> ratio;
  std::string decision;
};
// The regions decision's rows (none when the file has none). Throws gpuprobe::error in one line
// naming the first malformed row (not an object, a field of another kind).
std::vector<region_level> region_levels(const tuning_file &t);
tuning_file read_tuning(const std::string &path);
nlohmann::json to_json(const tuning_file &t);

} // namespace gpuprobe::model
