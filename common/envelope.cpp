#include "common/envelope.hpp"

#include "common/json_io.hpp"

namespace gpuprobe {

namespace {
int g_argc = 0;
const char *const *g_argv = nullptr;
} // namespace

void set_invocation(int argc, const char *const *argv) { g_argc = argc, g_argv = argv; }

nlohmann::json run_metadata(std::uint64_t seed) { return run_metadata(g_argc, g_argv, seed); }

nlohmann::json document_head(const schema::family &f, const nlohmann::json &device,
                             std::uint64_t seed) {
  return {{"schema", f.id()}, {"device", device}, {"meta", run_metadata(seed)}};
}

nlohmann::json result_head(const std::string &probe, const device_info &device,
                           std::uint64_t seed) {
  auto doc = document_head(schema::result, to_json(device), seed);
  doc["probe"] = probe;
  return doc;
}

} // namespace gpuprobe
