#include "model/profile.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "model/fields.hpp"

namespace gpuprobe::model {

template <class F> void fields(level_sharing &s, F &f) {
  f.field("scope", s.scope);
  f.field("groups", s.groups);
  f.field("reason", s.reason);
  f.field("source", s.source);
}

void check_sm_ids(const level_sharing &s) {
  if (s.groups)
    check_group_sm_ids(*s.groups, k_max_sm_count, "sharing group");
}

level_sharing level_sharing_from_json(const json &in) {
  return read_block<level_sharing>(in, [](const level_sharing &s) { check_sm_ids(s); });
}

json to_json(const level_sharing &s) { return write_block(s); }

template <class F> void fields(level_per_sm &s, F &f) {
  f.required("sms", s.sms);
  f.required("hit_cycles", s.hit_cycles);
  f.required("penalty_cycles", s.penalty_cycles);
  f.field("noise_cycles", s.noise_cycles);
  f.field("apart_sms", s.apart_sms);
}

static void check_per_sm(const level_per_sm &s) {
  if (s.hit_cycles.size() != s.sms.size() || s.penalty_cycles.size() != s.sms.size())
    throw impossible_value("per_sm: " + std::to_string(s.sms.size()) + " SMs but " +
                           std::to_string(s.hit_cycles.size()) + " hits and " +
                           std::to_string(s.penalty_cycles.size()) + " penalties");
  check_group_sm_ids({s.sms}, k_max_sm_count, "per_sm");
  if (s.apart_sms)
    check_group_sm_ids({*s.apart_sms}, k_max_sm_count, "per_sm apart");
  for (const auto *v : {&s.hit_cycles, &s.penalty_cycles})
    for (double x : *v)
      if (!std::isfinite(x))
        throw impossible_value("per_sm: a value is not a finite number");
  check_positive("per_sm noise_cycles", s.noise_cycles, true);
}

level_per_sm level_per_sm_from_json(const json &in) {
  return read_block<level_per_sm>(in, check_per_sm);
}

json to_json(const level_per_sm &s) { return write_block(s); }

template <class F> void fields(level_coverage &c, F &f) {
  f.field("finding", c.finding);
  f.field("coverage_bytes", c.coverage_bytes);
  f.field("fill", c.fill);
  f.field("source", c.source);
}

level_coverage level_coverage_from_json(const json &in) {
  if (!in.is_object())
    throw impossible_value("coverage is not an object");
  return read_block<level_coverage>(in);
}

json to_json(const level_coverage &c) { return write_block(c); }

template <class F> void fields(level_structure &s, F &f) {
  f.field("resolved", s.resolved);
  f.text("shape", s.shape);
  f.field("entries", s.entries);
  f.field("full_miss_entries", s.full_miss_entries);
  f.field("ways", s.ways);
  f.field("sets", s.sets);
  f.field("midpoint_reach_bytes", s.midpoint_reach_bytes);
  f.field("before_cycles", s.before_cycles);
  f.field("after_cycles", s.after_cycles);
  f.field("residual_cycles", s.residual_cycles);
  f.field("ramp_points", s.ramp_points);
  f.field("why", s.why);
  f.field("conflict", s.conflict);
}

json to_json(const level_structure &s) { return write_block(s); }

namespace {

void check_conflict_block(const json &c) {
  const auto typed = [&](const char *key, bool ok) {
    if (c.contains(key) && !ok)
      throw impossible_value(std::string("structure.conflict.") + key + " is " +
                             c[key].dump().substr(0, 40) + ", of the wrong type");
  };
  if (!c.is_object())
    throw impossible_value("structure.conflict is not an object");
  typed("ways", c.contains("ways") && c["ways"].is_number());
  typed("agrees", c.contains("agrees") && c["agrees"].is_boolean());
  typed("why", c.contains("why") && c["why"].is_string());
  bool sizes = c.contains("set_sizes") && c["set_sizes"].is_array();
  if (sizes)
    for (const auto &n : c["set_sizes"])
      sizes = sizes && n.is_number_integer();
  typed("set_sizes", sizes);
}

level_structure structure_from_json(const json &in) {
  return read_block<level_structure>(in, [](const level_structure &s) {
    if (s.conflict) // the conflict walk's verdict, drawn as is: each key of the type it is drawn as
      check_conflict_block(*s.conflict);
  });
}

} // namespace

stage_record stage_record_from_json(const json &in) {
  json j = in;
  stage_record s;
  take(j, "name", s.name);
  take(j, "file", s.file);
  take(j, "status", s.status);
  take(j, "seconds", s.seconds);
  take(j, "rerun_because", s.rerun_because);
  return s;
}

run_record run_record_from_json(const json &doc, const std::string &where) {
  run_record r;
  if (!doc.is_object())
    return r;
  const auto part = [&](const json &in, const char *key, bool (json::*is)() const noexcept,
                        const char *want) { return part_of_kind(in, key, is, want, where); };
  if (const json *c = part(doc, "conditions", &json::is_object, "an object"))
    r.conditions = *c;
  if (const json *q = part(doc, "quick", &json::is_boolean, "a boolean"))
    r.quick = q->get<bool>();
  if (const json *w = part(doc, "wall_seconds", &json::is_number, "a number"))
    r.wall_seconds = w->get<double>();
  if (const json *s = part(doc, "stages", &json::is_array, "a list"))
    for (const auto &e : *s)
      r.stages.push_back(stage_record_from_json(e));
  if (const json *m = part(doc, "meta", &json::is_object, "an object"))
    r.measured_by = *m;
  if (const json *again = part(doc, "reanalyzed", &json::is_object, "an object")) {
    if (const json *m = part(*again, "measured_by", &json::is_object, "an object"))
      r.measured_by = *m;
    if (const json *t = part(*again, "times", &json::is_number_integer, "an integer"))
      r.reanalyzed_times = t->get<int>();
  }
  return r;
}

json to_json(const stage_record &s) {
  json j = {{"name", s.name}, {"file", s.file}, {"status", s.status}};
  put(j, "seconds", s.seconds);
  put(j, "rerun_because", s.rerun_because);
  return j;
}

void check_tlb_level(const tlb_level &L) {
  check_positive("coverage_bytes", L.coverage_bytes);
  if (std::exp2(std::round(std::log2(L.coverage_bytes))) != L.coverage_bytes)
    throw impossible_value("coverage_bytes " + json(L.coverage_bytes).dump() +
                           " is no power of two");
  check_positive("reach_bytes", L.reach_bytes);
  check_positive("entries", L.entries);
  check_positive("miss_penalty_cycles", L.miss_penalty_cycles, true);
  check_positive("ways", L.ways);
  check_positive("sets", L.sets);
  check_positive("full_miss_bytes", L.full_miss_bytes);
  if (L.confidence && !(*L.confidence >= 0 && *L.confidence <= 1))
    throw impossible_value("confidence " + json(*L.confidence).dump() + " is not in 0..1");
  if (L.entries && std::fabs(*L.entries * L.coverage_bytes - L.reach_bytes) > 0.01 * L.reach_bytes)
    throw impossible_value("reach_bytes " + json(L.reach_bytes).dump() + " is not entries (" +
                           json(*L.entries).dump() + ") x coverage_bytes");
  if (L.entries && L.ways && L.sets && std::fabs(*L.ways * *L.sets - *L.entries) > 0.5)
    throw impossible_value("entries " + json(*L.entries).dump() + " is not ways x sets (" +
                           json(*L.ways).dump() + " x " + json(*L.sets).dump() + ")");
}

template <class F> void fields(tlb_level &L, F &f) {
  f.required("reach_bytes", L.reach_bytes);
  f.required("coverage_bytes", L.coverage_bytes);
  f.field("entries", L.entries);
  f.field("miss_penalty_cycles", L.miss_penalty_cycles);
  f.field("ways", L.ways);
  f.field("sets", L.sets);
  f.field("full_miss_bytes", L.full_miss_bytes);
  f.field("coverage_bound", L.coverage_bound);
  f.field("confidence", L.confidence);
  f.block("structure", L.structure, structure_from_json);
  f.block("sharing", L.sharing, level_sharing_from_json);
  f.block("coverage", L.coverage, level_coverage_from_json);
  f.block("per_sm", L.per_sm, level_per_sm_from_json);
}

namespace {
// A level's keys (a level's, a candidate's, a cache effect's) under their names of version 1,
// renamed to this version's: what one entry covers was "page_bytes", and its bound, note, evidence
// lists and the per-SM block's copy were named after the page too (common/schema.hpp).
void rename_version_1_level_keys(json &L) {
  take_old_name(L, "coverage_bytes", "page_bytes");
  take_old_name(L, "coverage_bound", "page_bound");
  take_old_name(L, "coverage_note", "page_note");
  if (L.is_object() && L.contains("evidence")) {
    take_old_name(L["evidence"], "strides_at_or_above_coverage", "strides_at_or_above_page");
    take_old_name(L["evidence"], "strides_below_coverage", "strides_below_page");
  }
  if (L.is_object() && L.contains("per_sm"))
    take_old_name(L["per_sm"], "coverage_bytes", "page_bytes");
}
} // namespace

tlb_level tlb_level_from_json(const json &in) {
  json L = in;
  rename_version_1_level_keys(L);
  return read_block<tlb_level>(std::move(L), check_tlb_level);
}

json to_json(const tlb_level &L) { return write_block(L); }

template <class F> void fields(sampling_check &s, F &f) {
  f.field("verdict", s.verdict);
  f.field("ratio", s.ratio);
}
template <class F> void fields(level_check &c, F &f) {
  f.field("level", c.level);
  f.field("real_memory", c.real_memory);
  f.field("miss_served_by", c.miss_served_by);
  f.block("sampling", c.sampling, sampling_check_from_json);
}
template <class F> void fields(memory_access_check &m, F &f) {
  f.field("l2_hit_cycles", m.l2_hit_cycles);
  f.field("memory_cycles", m.memory_cycles);
  f.field("source", m.source);
}
template <class F> void fields(l2_split_check &s, F &f) {
  f.field("split_cycles", s.split_cycles);
  f.field("p10_cycles", s.p10_cycles);
  f.field("p90_cycles", s.p90_cycles);
}

sampling_check sampling_check_from_json(const json &in) { return read_block<sampling_check>(in); }
json to_json(const sampling_check &s) { return write_block(s); }
json to_json(const memory_access_check &m) { return write_block(m); }
json to_json(const l2_split_check &s) { return write_block(s); }
json to_json(const level_check &c) { return write_block(c); }

const level_check *tlb_cross_check::find(const std::string &label) const {
  for (const auto &c : levels)
    if (c.level == label)
      return &c;
  return nullptr;
}

template <class F> void fields(tlb_cross_check &c, F &f) {
  f.field("method", c.method);
  f.list("levels", c.levels, read_block<level_check>);
  f.block("memory_access", c.memory_access, read_block<memory_access_check>);
  f.block("l2_split", c.l2_split, read_block<l2_split_check>);
}

tlb_cross_check tlb_cross_check_from_json(const json &in) {
  return read_block<tlb_cross_check>(in);
}
json to_json(const tlb_cross_check &c) { return write_block(c); }

void check_level_count(const char *list, std::size_t n) {
  if (n > k_max_tlb_levels)
    throw impossible_value(std::string("tlb.") + list + " has " + std::to_string(n) +
                           " entries, more than a GPU has (" + std::to_string(k_max_tlb_levels) +
                           ")");
}

namespace {
// Before any copy: a hostile list of 10^5 levels is refused at once (copied, it took 20 s).
void check_level_counts(const json &tlb) {
  if (!tlb.is_object())
    return;
  for (const char *list : {"levels", "candidates"})
    if (const auto it = tlb.find(list); it != tlb.end() && it->is_array())
      check_level_count(list, it->size());
}
} // namespace

template <class F> void fields(tlb_hierarchy &h, F &f) {
  f.list("levels", h.levels, tlb_level_from_json);
  f.list("candidates", h.candidates, tlb_level_from_json);
  f.field("searched_up_to_bytes", h.searched_up_to_bytes);
  f.block("cross_check", h.cross_check, tlb_cross_check_from_json);
}

tlb_hierarchy tlb_hierarchy_from_json(const json &in) {
  check_level_counts(in);
  json h = in;
  // The cache effects (kept in detail) are written as levels are: their keys of version 1 renamed.
  if (h.is_object() && h.contains("cache_effects") && h["cache_effects"].is_array())
    for (auto &c : h["cache_effects"])
      rename_version_1_level_keys(c);
  return read_block<tlb_hierarchy>(std::move(h));
}
json to_json(const tlb_hierarchy &h) { return write_block(h); }

namespace {
// A sharing group's SM ids against the device's SM count, where the profile records it.
void check_sm_ids(const profile &p) {
  const json &sms = p.device.is_object() ? p.device.value("sm_count", json()) : json();
  if (!sms.is_number())
    return;
  const double n = sms.get<double>();
  if (!(n >= 1 && n <= k_max_sm_count))
    throw impossible_value("device.sm_count " + sms.dump() + " is not in 1.." +
                           std::to_string(k_max_sm_count));
  for (const auto &L : p.tlb.levels)
    if (L.sharing && L.sharing->groups)
      check_group_sm_ids(*L.sharing->groups, n,
                         "sharing group (the device has " + sms.dump() + " SMs):");
}
} // namespace

template <class F> void fields(profile &p, F &f) {
  f.required("schema", p.schema);
  f.device(p.device);
  f.field("meta", p.meta);
  // Every profile has its TLB block: {"schema": "gpuprobe.profile/2"} alone is refused.
  f.whole("tlb", p.tlb, tlb_hierarchy_from_json);
  f.list("stages", p.stages, stage_record_from_json);
}

profile profile_from_json(const json &doc, const std::string &source) {
  return read_file_of(doc, schema::profile, source, "profile", [&] {
    if (doc.contains("tlb"))
      check_level_counts(doc["tlb"]);
    return read_block<profile>(doc, [](const profile &p) { check_sm_ids(p); });
  });
}

profile read_profile(const std::string &path) {
  return profile_from_json(read_json_file(path), path);
}

json to_json(const profile &p) { return write_block(p); }

std::string profile::device_text(const char *key) const {
  const auto it = device.find(key);
  return it != device.end() && it->is_string() ? it->get<std::string>() : "-";
}
std::string profile::commit() const { return meta_text("git_commit"); }
std::string profile::meta_text(const char *key) const {
  const auto it = meta.find(key);
  return it != meta.end() && it->is_string() ? it->get<std::string>() : "-";
}
level_conflict level_conflict_from_json(const nlohmann::json &j) {
  const std::string where = "a level's conflict sets";
  if (!j.is_object())
    throw error(where + " are " + std::string(j.type_name()) + ", not an object");
  level_conflict c;
  if (const auto *s = part_of_kind(j, "set_sizes", &nlohmann::json::is_array, "a list", where))
    for (const auto &n : *s) {
      if (!n.is_number_integer())
        throw kind_error(where, "set_sizes[]", n, "a whole number");
      c.set_sizes.push_back(n.get<int>());
    }
  if (const auto *w = part_of_kind(j, "ways", &nlohmann::json::is_number, "a number", where))
    c.ways = w->get<double>();
  if (const auto *a = part_of_kind(j, "agrees", &nlohmann::json::is_boolean, "a boolean", where))
    c.agrees = a->get<bool>();
  if (const auto *r = part_of_kind(j, "ramp_ways", &nlohmann::json::is_number, "a number", where))
    c.ramp_ways = r->get<double>();
  if (const auto *r = part_of_kind(j, "resolved", &nlohmann::json::is_boolean, "a boolean", where))
    c.resolved = r->get<bool>();
  if (const auto *y = part_of_kind(j, "why", &nlohmann::json::is_string, "a string", where))
    c.why = y->get<std::string>();
  if (const auto *si = part_of_kind(j, "set_index", &nlohmann::json::is_object, "an object", where))
    if (const auto *f = part_of_kind(*si, "finding", &nlohmann::json::is_string, "a string",
                                     where + " set_index"))
      c.set_index = f->get<std::string>();
  return c;
}

std::optional<double> profile::sm_clock_mhz_seen() const {
  const auto it = device.find("sm_clock_mhz_seen");
  return it != device.end() && it->is_number() && it->get<double>() > 0
             ? std::optional(it->get<double>())
             : std::nullopt;
}
std::optional<long long> profile::seed() const {
  const auto it = meta.find("seed");
  return it != meta.end() && it->is_number_integer() ? std::optional(it->get<long long>())
                                                     : std::nullopt;
}
bool profile::quick() const {
  const auto it = detail.find("quick");
  return it != detail.end() && it->is_boolean() && it->get<bool>();
}
bool profile::throttled() const {
  const auto it = detail.find("conditions");
  return it != detail.end() && it->is_object() && it->value("throttled", false);
}
bool profile::busy() const {
  const auto it = detail.find("conditions");
  return it != detail.end() && it->is_object() && it->contains("busy");
}

run_conditions run_conditions_from_json(const nlohmann::json &c) {
  const std::string where = "the run's conditions";
  run_conditions r;
  if (!object_or_null(c, where))
    return r;
  if (const auto *m = part_of_kind(c, "sm_clock_mhz_max", &json::is_number, "a number", where))
    r.sm_clock_mhz_max = m->get<double>();
  if (const auto *t = part_of_kind(c, "throttled", &json::is_boolean, "a boolean", where))
    r.throttled = t->get<bool>();
  if (const auto *b = part_of_kind(c, "busy", &json::is_array, "a list", where))
    for (const auto &x : *b) {
      if (!x.is_string())
        throw kind_error(where, "busy[]", x, "a string");
      r.busy.push_back(x.get<std::string>());
    }
  return r;
}

std::string level_label(bool candidate, std::size_t index) {
  return (candidate ? "C" : "L") + std::to_string(index + 1);
}

} // namespace gpuprobe::model
