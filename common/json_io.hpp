#pragma once
// Reading and writing gpuprobe's schema-versioned JSON files.
#include "common/schema.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace gpuprobe {

using json = nlohmann::json;

// Writes `doc` to `path` atomically: a temporary file beside it, then rename().
// A crash or Ctrl-C never leaves a half-written file under `path`.
void write_json_atomic(const std::string &path, const json &doc);
// The same for any text (pages, CSV files).
void write_text_atomic(const std::string &path, const std::string &text);

// Reads a text file; throws gpuprobe::error with a one-line message that names the problem: no
// such file, a directory, unreadable, empty (nothing but white space).
std::string read_text_file(const std::string &path);
// Reads a JSON file (read_text_file's errors, and "is not JSON").
json read_json_file(const std::string &path);

// Checks doc["schema"] == "<family>/<version>" for a version this build understands
// (1..max_version); throws gpuprobe::error otherwise.
void require_schema(const json &doc, const std::string &family, int max_version,
                    const std::string &path);
inline void require_schema(const json &doc, const schema::family &f, const std::string &path) {
  require_schema(doc, f.name, f.version, path);
}

// Metadata every result carries: tool version, git commit, argv, seed, creation time (UTC).
json run_metadata(int argc, const char *const *argv, unsigned long long seed);

} // namespace gpuprobe
