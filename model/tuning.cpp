#include "model/tuning.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "model/fields.hpp"

#include <cmath>

namespace gpuprobe::model {

namespace {

// Each decision: its key under "decisions" and its member, in the file's order.
using decision_member = std::optional<tuning_decision> tuning_file::*;
constexpr std::pair<const char *, decision_member> k_decisions[] = {
    {"word_size", &tuning_file::word_size},
    {"regions", &tuning_file::regions},
    {"crw_placement", &tuning_file::crw_placement},
    {"tlb_scope", &tuning_file::tlb_scope}};

} // namespace

// The profile a tuning was made from: its keys, once (model/fields.hpp).
template <class F> void fields(tuning_source &s, F &f) {
  f.required("path", s.path);
  f.required("device_name", s.device_name);
  f.required("device_uuid", s.device_uuid);
  f.required("same_gpu", s.same_gpu);
}

tuning_decision tuning_decision_from_json(const json &in) {
  json d = in;
  tuning_decision td;
  take(d, "reason", td.reason);
  td.detail = std::move(d);
  return td;
}

const std::optional<tuning_decision> &tuning_file::decision(const std::string &name) const {
  static const std::optional<tuning_decision> none;
  for (const auto &[key, member] : k_decisions)
    if (name == key)
      return this->*member;
  return none;
}

tuning_file tuning_from_json(const json &doc, const std::string &source) {
  return read_file_of(doc, schema::tuning, source, "tuning", [&] {
    tuning_file t;
    try {
      t.allocator = alloc::tuning_from_json(doc, source);
      const json *a = doc.contains("allocator") ? &doc["allocator"] : nullptr;
      t.tlb_scope_missing =
          !a || !a->is_object() || !a->contains("tlb_scope_bytes") || (*a)["tlb_scope_bytes"].is_null();
    } catch (const std::runtime_error &e) { // its own one-line reason, as the allocators say it
      throw error(e.what());
    }
    json j = doc;
    j.erase("allocator");
    take_required(j, "schema", t.schema);
    take_device(j, t.device);
    take(j, "meta", t.meta);
    take_with(j, "profile", t.profile, read_record<tuning_source>);
    if (const auto it = j.find("decisions"); it != j.end()) {
      for (const auto &[key, member] : k_decisions)
        if (it->contains(key))
          t.*member = tuning_decision_from_json((*it)[key]);
      if (t.regions) // the regions' unit: "page_bytes" in version 1
        take_old_name(t.regions->detail, "coverage_bytes", "page_bytes");
      j.erase(it);
    }
    take(j, "wall_seconds", t.wall_seconds);
    t.detail = std::move(j);
    return t;
  });
}

namespace {

// Each row of the list `key` of a decision, read by `row` (its index, the row, and how to say a row
// is malformed); none when the file has no such decision or list. A list that is no list, or a row
// `row` refuses, is one line naming `what` and the row.
template <class T, class F>
std::vector<T> decision_rows(const std::optional<tuning_decision> &d, const char *key,
                             const std::string &what, F &&row) {
  std::vector<T> out;
  if (!d)
    return out;
  const auto it = d->detail.find(key);
  if (it == d->detail.end())
    return out;
  const auto bad = [&](std::size_t i, const std::string &why) {
    return error("tuning.json: " + what + " " + std::to_string(i) + ": " + why);
  };
  if (!it->is_array())
    throw bad(0, std::string("\"") + key + "\" is not a list");
  for (std::size_t i = 0; i < it->size(); ++i) {
    try {
      out.push_back(row(i, (*it)[i], bad));
    } catch (const json::exception &e) {
      throw bad(i, e.what());
    }
  }
  return out;
}

} // namespace

std::vector<word_measurement> word_measurements(const tuning_file &t) {
  return decision_rows<word_measurement>(t.word_size, "measurements", "word_size measurement",
                                         [](std::size_t i, const json &p, const auto &bad) {
                                           word_measurement m;
                                           m.allocator = p.at("allocator").get<std::string>();
                                           m.free_fraction = p.at("free_fraction").get<double>();
                                           m.ms32 = p.at("ms32").get<double>();
                                           m.ms64 = p.at("ms64").get<double>();
                                           if (!(m.free_fraction >= 0 && m.free_fraction <= 1))
                                             throw bad(i, "free_fraction outside 0..1");
                                           for (const double ms : {m.ms32, m.ms64})
                                             if (!std::isfinite(ms) || ms < 0)
                                               throw bad(i,
                                                         "a time that is negative or not finite");
                                           return m;
                                         });
}

std::vector<region_level> region_levels(const tuning_file &t) {
  return decision_rows<region_level>(t.regions, "per_level", "regions per_level row",
                                     [](std::size_t i, const json &r, const auto &bad) {
                                       if (!r.is_object())
                                         throw bad(i, std::string("a ") + r.type_name() +
                                                          ", not an object");
                                       region_level l;
                                       if (r.contains("level"))
                                         l.level = r["level"].get<std::string>();
                                       if (r.contains("ratio"))
                                         l.ratio = r["ratio"].get<double>();
                                       if (r.contains("decision"))
                                         l.decision = r["decision"].get<std::string>();
                                       return l;
                                     });
}

tuning_file read_tuning(const std::string &path) {
  return tuning_from_json(read_json_file(path), path);
}

json to_json(const tuning_file &t) {
  json j = t.detail;
  j["schema"] = t.schema;
  j["device"] = t.device;
  j["meta"] = t.meta;
  j["profile"] = write_record(t.profile);
  j["allocator"] = alloc::allocator_block_json(t.allocator);
  j["decisions"] = json::object();
  for (const auto &[key, member] : k_decisions)
    if (const auto &d = t.*member) {
      json dj = d->detail;
      dj["reason"] = d->reason;
      j["decisions"][key] = std::move(dj);
    }
  put(j, "wall_seconds", t.wall_seconds);
  return j;
}

} // namespace gpuprobe::model
