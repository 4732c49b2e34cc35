#pragma once
// The head every gpuprobe JSON file starts with (common/envelope.hpp writes it: schema, device,
// meta) and the "disturbed" marks a stage's result may carry, read typed, once: what the stage
// runner, characterize and the fleet ask of a file without reading its body. Missing parts read as
// empty; a part of the wrong type (a number where the UUID goes, a meta that is a list) is a
// gpuprobe::error naming the part and the file. Host-only.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::model {

struct file_head {
  std::string schema;                               // "gpuprobe.result/2", ...; "" when none
  std::string probe;                                // a probe's result: its id ("tlb", ...)
  nlohmann::json device = nlohmann::json::object(); // the device block as written
  std::string uuid;                                 // device.uuid
  std::optional<double> sm_clock_mhz_seen;          // device.sm_clock_mhz_seen
  std::vector<std::string> argv;      // meta.argv; an element that is no string, as its JSON text
  std::string version, git_commit;    // meta.version, meta.git_commit
  std::vector<std::string> disturbed; // the marks of --allow-busy (strings only)
};

// `where` names the file in an error.
file_head file_head_from_json(const nlohmann::json &doc, const std::string &where);
file_head read_file_head(const std::string &path); // reads the file (read_json_file's checks)

} // namespace gpuprobe::model
