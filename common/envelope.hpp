#pragma once
// The head every gpuprobe JSON file starts with: schema, device, and the run's metadata (tool
// version, git commit, this process's argv, seed, UTC time). One helper for every command.
#include "common/device_info.hpp"
#include "common/non_copyable.hpp"
#include "common/schema.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace gpuprobe {

// main() records argc/argv once; every file this process writes carries them.
void set_invocation(int argc, const char *const *argv);
// A command run inside this process (a characterize stage): its files carry its own argv while
// the scope lives, as they would if it ran as a child; the outer argv again after.
class invocation_scope : private non_copyable {
public:
  invocation_scope(int argc, const char *const *argv);
  ~invocation_scope();

private:
  int argc_;
  const char *const *argv_;
};

// {"tool", "version", "git_commit", "argv", "seed", "created_utc"} of this process.
nlohmann::json run_metadata(std::uint64_t seed);

// {"schema": f.id(), "device": device, "meta": run_metadata(seed)}.
nlohmann::json document_head(const schema::family &f, const nlohmann::json &device,
                             std::uint64_t seed);

// What every probe's result carries besides its own block; the result structs derive from it.
struct result_envelope {
  nlohmann::json device, meta;
};
// The envelope of a result measured now on `device` (meta: this process, `seed`).
result_envelope make_envelope(const device_info &device, std::uint64_t seed);
// {"schema", "probe", "device", "meta", <key>: body}: a probe's result document.
nlohmann::json result_document(const std::string &probe, const result_envelope &env,
                               const std::string &key, nlohmann::json body);
// The inverse: checks the probe, fills `env`, returns doc[key] (throws gpuprobe::error).
const nlohmann::json &result_body(const nlohmann::json &doc, const std::string &probe,
                                  const std::string &key, result_envelope &env);

} // namespace gpuprobe
