#include "model/tuning.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "model/fields.hpp"

namespace gpuprobe::model {

namespace {

constexpr const char *k_decisions[] = {"word_size", "regions", "crw_placement", "tlb_scope"};

std::optional<tuning_decision> &slot(tuning_file &t, const std::string &name) {
  return name == "word_size"   ? t.word_size
         : name == "regions"   ? t.regions
         : name == "tlb_scope" ? t.tlb_scope
                               : t.crw_placement;
}

} // namespace

tuning_decision tuning_decision_from_json(const json &in) {
  json d = in;
  tuning_decision td;
  take(d, "reason", td.reason);
  td.detail = std::move(d);
  return td;
}

const std::optional<tuning_decision> &tuning_file::decision(const std::string &name) const {
  return slot(const_cast<tuning_file &>(*this), name);
}

tuning_file tuning_from_json(const json &doc, const std::string &source) {
  require_schema(doc, schema::tuning, source);
  tuning_file t;
  try {
    t.allocator = alloc::tuning_from_json(doc, source);
  } catch (const std::runtime_error &e) {
    throw error(e.what());
  }
  try {
    json j = doc;
    j.erase("allocator");
    take_required(j, "schema", t.schema);
    take(j, "device", t.device);
    take(j, "meta", t.meta);
    if (const auto it = j.find("profile"); it != j.end()) {
      const json &p = *it;
      t.profile = {p.at("path").get<std::string>(), p.at("device_name").get<std::string>(),
                   p.at("device_uuid").get<std::string>(), p.at("same_gpu").get<bool>()};
      j.erase(it);
    }
    if (const auto it = j.find("decisions"); it != j.end()) {
      for (const char *name : k_decisions)
        if (it->contains(name))
          slot(t, name) = tuning_decision_from_json((*it)[name]);
      j.erase(it);
    }
    take(j, "wall_seconds", t.wall_seconds);
    t.detail = std::move(j);
  } catch (const json::exception &e) {
    throw error("'" + source + "': malformed tuning (" + std::string(e.what()) + ")");
  }
  return t;
}

tuning_file read_tuning(const std::string &path) {
  return tuning_from_json(read_json_file(path), path);
}

json to_json(const tuning_file &t) {
  json j = t.detail;
  j["schema"] = t.schema;
  j["device"] = t.device;
  j["meta"] = t.meta;
  j["profile"] = {{"path", t.profile.path},
                  {"device_name", t.profile.device_name},
                  {"device_uuid", t.profile.device_uuid},
                  {"same_gpu", t.profile.same_gpu}};
  j["allocator"] = alloc::allocator_block_json(t.allocator);
  j["decisions"] = json::object();
  for (const char *name : k_decisions)
    if (const auto &d = t.decision(name)) {
      json dj = d->detail;
      dj["reason"] = d->reason;
      j["decisions"][name] = std::move(dj);
    }
  put(j, "wall_seconds", t.wall_seconds);
  return j;
}

} // namespace gpuprobe::model
