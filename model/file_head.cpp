#include "model/file_head.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"

namespace gpuprobe::model {

namespace {

using nlohmann::json;

// doc[key] when it is there and not null, else nullptr; of the wrong kind: an error.
const json *part(const json &doc, const char *key, json::value_t kind, const std::string &where) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null())
    return nullptr;
  const bool ok = kind == json::value_t::number_float ? it->is_number() : it->type() == kind;
  if (!ok)
    throw error(where + ": \"" + key + "\" is " + it->type_name() + ", not " +
                json(kind).type_name());
  return &*it;
}

std::string text(const json &doc, const char *key, const std::string &where) {
  const json *p = part(doc, key, json::value_t::string, where);
  return p ? p->get<std::string>() : std::string();
}

} // namespace

file_head file_head_from_json(const json &doc, const std::string &where) {
  if (!doc.is_object())
    throw error(where + ": a " + std::string(doc.type_name()) + ", not a gpuprobe JSON object");
  file_head h;
  h.schema = text(doc, "schema", where);
  h.probe = text(doc, "probe", where);
  if (const json *d = part(doc, "device", json::value_t::object, where)) {
    h.device = *d;
    h.uuid = text(*d, "uuid", where + " device");
    if (const json *c = part(*d, "sm_clock_mhz_seen", json::value_t::number_float, where))
      h.sm_clock_mhz_seen = c->get<double>();
  }
  if (const json *m = part(doc, "meta", json::value_t::object, where)) {
    if (const json *a = part(*m, "argv", json::value_t::array, where + " meta"))
      for (const auto &e : *a)
        h.argv.push_back(e.is_string() ? e.get<std::string>() : e.dump());
    h.version = text(*m, "version", where + " meta");
    h.git_commit = text(*m, "git_commit", where + " meta");
  }
  if (const json *d = part(doc, "disturbed", json::value_t::array, where))
    for (const auto &e : *d)
      if (e.is_string())
        h.disturbed.push_back(e.get<std::string>());
  return h;
}

file_head read_file_head(const std::string &path) {
  return file_head_from_json(read_json_file(path), path);
}

} // namespace gpuprobe::model
