#pragma once
// The head every gpuprobe JSON file starts with: schema, device, and the run's metadata (tool
// version, git commit, this process's argv, seed, UTC time). One helper for every command.
#include "common/device_info.hpp"
#include "common/schema.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace gpuprobe {

// main() records argc/argv once; every file this process writes carries them.
void set_invocation(int argc, const char *const *argv);

// {"tool", "version", "git_commit", "argv", "seed", "created_utc"} of this process.
nlohmann::json run_metadata(std::uint64_t seed);

// {"schema": f.id(), "device": device, "meta": run_metadata(seed)}.
nlohmann::json document_head(const schema::family &f, const nlohmann::json &device,
                             std::uint64_t seed);
// A probe's result: the head of schema::result plus {"probe": probe}.
nlohmann::json result_head(const std::string &probe, const device_info &device, std::uint64_t seed);

} // namespace gpuprobe
