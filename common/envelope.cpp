#include "common/envelope.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"

namespace gpuprobe {

namespace {
int g_argc = 0;
const char *const *g_argv = nullptr;
} // namespace

void set_invocation(int argc, const char *const *argv) { g_argc = argc, g_argv = argv; }

invocation_scope::invocation_scope(int argc, const char *const *argv)
    : argc_(g_argc), argv_(g_argv) {
  set_invocation(argc, argv);
}
invocation_scope::~invocation_scope() { set_invocation(argc_, argv_); }

nlohmann::json run_metadata(std::uint64_t seed) { return run_metadata(g_argc, g_argv, seed); }

nlohmann::json document_head(const schema::family &f, const nlohmann::json &device,
                             std::uint64_t seed) {
  return {{"schema", f.id()}, {"device", device}, {"meta", run_metadata(seed)}};
}

result_envelope make_envelope(const device_info &device, std::uint64_t seed) {
  return {to_json(device), run_metadata(seed)};
}

nlohmann::json result_document(const std::string &probe, const result_envelope &env,
                               const std::string &key, nlohmann::json body) {
  return {{"schema", schema::result.id()},
          {"probe", probe},
          {"device", env.device},
          {"meta", env.meta},
          {key, std::move(body)}};
}

const nlohmann::json &result_body(const nlohmann::json &doc, const std::string &probe,
                                  const std::string &key, result_envelope &env) {
  const auto named = doc.is_object() ? doc.find("probe") : doc.end();
  if (!doc.is_object() || named == doc.end() || !named->is_string() || *named != probe)
    throw error("not a " + probe + " result (probe " +
                (doc.is_object() && named != doc.end() ? named->dump().substr(0, 40)
                                                       : std::string("not named")) +
                ")");
  if (!doc.contains("device") || !doc.contains("meta") || !doc.contains(key))
    throw error(probe + " result: no device, meta or " + key + " block");
  env.device = doc["device"];
  env.meta = doc["meta"];
  return doc[key];
}

} // namespace gpuprobe
