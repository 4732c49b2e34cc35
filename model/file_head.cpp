#include "model/file_head.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "model/fields.hpp"

namespace gpuprobe::model {

namespace {

std::string text(const json &doc, const char *key, const std::string &where) {
  const json *p = part_of_kind(doc, key, &json::is_string, "a string", where);
  return p ? p->get<std::string>() : std::string();
}

} // namespace

file_head file_head_from_json(const json &doc, const std::string &where) {
  if (!doc.is_object())
    throw error(where + ": a " + std::string(doc.type_name()) + ", not a gpuprobe JSON object");
  file_head h;
  h.schema = text(doc, "schema", where);
  h.probe = text(doc, "probe", where);
  if (const json *d = part_of_kind(doc, "device", &json::is_object, "an object", where)) {
    h.device = *d;
    h.uuid = text(*d, "uuid", where + " device");
    if (const json *c = part_of_kind(*d, "sm_clock_mhz_seen", &json::is_number, "a number", where))
      h.sm_clock_mhz_seen = c->get<double>();
  }
  if (const json *m = part_of_kind(doc, "meta", &json::is_object, "an object", where)) {
    if (const json *a = part_of_kind(*m, "argv", &json::is_array, "a list", where + " meta"))
      for (const auto &e : *a)
        h.argv.push_back(e.is_string() ? e.get<std::string>() : e.dump());
    h.version = text(*m, "version", where + " meta");
    h.git_commit = text(*m, "git_commit", where + " meta");
  }
  if (const json *d = part_of_kind(doc, "disturbed", &json::is_array, "a list", where))
    for (const auto &e : *d)
      if (e.is_string())
        h.disturbed.push_back(e.get<std::string>());
  return h;
}

file_head read_file_head(const std::string &path) {
  return file_head_from_json(read_json_file(path), path);
}

} // namespace gpuprobe::model
