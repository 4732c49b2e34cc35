#pragma once
// Reading and writing gpuprobe's schema-versioned JSON files.
#include "common/non_copyable.hpp"
#include "common/schema.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace gpuprobe {

using json = nlohmann::json;

// Writes `doc` to `path` atomically: a temporary file beside it, then rename().
// A crash or Ctrl-C never leaves a half-written file under `path`.
void write_json_atomic(const std::string &path, const json &doc);
// The same for any text (pages, CSV files).
void write_text_atomic(const std::string &path, const std::string &text);

// What a reader accepts: a regular file (a link is followed, but not to a device such as
// /dev/zero, a FIFO or a loop of links) of at most k_max_input_bytes; JSON nested at most
// k_max_json_depth deep (nlohmann's DOM frees nesting recursively: 200,000 levels overflow the
// stack).
inline constexpr std::uintmax_t k_max_input_bytes = 1ull << 30;
inline constexpr int k_max_json_depth = 256;

// What a reader checks before it reads: throws gpuprobe::error with a one-line message that names
// the problem: no such file, a directory, not a regular file, a loop of links, over `max_bytes`.
void check_input_file(const std::string &path, std::uintmax_t max_bytes = k_max_input_bytes);
// Reads a text file: check_input_file's errors, and unreadable, empty (nothing but white space).
std::string read_text_file(const std::string &path);
// Parses JSON text (nesting checked first); throws gpuprobe::error naming `source`.
json parse_json_text(const std::string &text, const std::string &source);
// Reads a JSON file (read_text_file's errors, and "is not JSON", "nested deeper than ...").
json read_json_file(const std::string &path);

// A command reads each file once. While a read_once_scope lives (cli::run_command opens one for
// each command), read_text_file and read_json_file serve a file they read before from memory as
// long as it is the same file at the same path, unchanged (device, inode, size, modification
// time) and not rewritten by this process since (write_text_atomic forgets it: a rewritten file may
// reuse the freed inode within one tick of the clock). Scopes nest (a stage run inside characterize
// shares characterize's); outside any, every call reads the disk. reads_from_disk() counts the
// reads that went to the disk (tests).
class read_once_scope : private non_copyable {
public:
  read_once_scope();
  ~read_once_scope();
};
std::size_t reads_from_disk();

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
