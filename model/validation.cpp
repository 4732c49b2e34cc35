#include "model/validation.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "model/fields.hpp"

namespace gpuprobe::model {

std::string to_string(decision d) {
  switch (d) {
  case decision::word_size:
    return "word_size";
  case decision::regions:
    return "regions";
  case decision::crw_placement:
    return "crw_placement";
  case decision::tlb_scope:
    return "tlb_scope";
  }
  return "?";
}

decision decision_from_string(const std::string &s) {
  for (decision d :
       {decision::word_size, decision::regions, decision::crw_placement, decision::tlb_scope})
    if (to_string(d) == s)
      return d;
  throw error("unknown decision '" + s + "' (word_size, regions, crw_placement, tlb_scope)");
}

decision_change decision_change_from_json(const json &j) {
  try {
    return {decision_from_string(j.at("decision").get<std::string>()),
            j.at("from").get<std::string>(), j.at("to").get<std::string>()};
  } catch (const error &e) {
    throw impossible_value(e.what()); // named with the file by read_file_of
  }
}

json to_json(const decision_change &c) {
  return {{"decision", to_string(c.what)}, {"from", c.from}, {"to", c.to}};
}

validation_row validation_row_from_json(const json &in) {
  json j = in;
  validation_row r;
  take_required(j, "workload", r.workload);
  take(j, "pool", r.pool);
  take(j, "config_default", r.config_default);
  take(j, "config_tuned", r.config_tuned);
  take(j, "measured", r.measured);
  take(j, "verdict", r.verdict);
  take(j, "reason", r.reason);
  take(j, "reps", r.reps);
  take(j, "median_default_ms", r.median_default_ms);
  take(j, "median_tuned_ms", r.median_tuned_ms);
  take(j, "ratio", r.ratio);
  take(j, "ci_low", r.ci_low);
  take(j, "ci_high", r.ci_high);
  take(j, "p", r.p);
  take(j, "p_holm", r.p_holm);
  take(j, "default_ms", r.default_ms);
  take(j, "tuned_ms", r.tuned_ms);
  take_list(j, "changes", r.changes, decision_change_from_json);
  r.detail = std::move(j);
  return r;
}

json to_json(const validation_row &r) {
  json j = r.detail;
  put(j, "workload", r.workload);
  put(j, "pool", r.pool);
  put(j, "config_default", r.config_default);
  put(j, "config_tuned", r.config_tuned);
  put(j, "measured", r.measured);
  put(j, "verdict", r.verdict);
  put(j, "reason", r.reason);
  put(j, "reps", r.reps);
  put(j, "median_default_ms", r.median_default_ms);
  put(j, "median_tuned_ms", r.median_tuned_ms);
  put(j, "ratio", r.ratio);
  put(j, "ci_low", r.ci_low);
  put(j, "ci_high", r.ci_high);
  put(j, "p", r.p);
  put(j, "p_holm", r.p_holm);
  put(j, "default_ms", r.default_ms);
  put(j, "tuned_ms", r.tuned_ms);
  if (r.changes)
    j["changes"] = list_json(*r.changes);
  return j;
}

tradeoff tradeoff_from_json(const json &j) {
  return {j.at("decision").get<std::string>(), j.at("workload").get<std::string>(),
          j.at("pool").get<std::string>(),     j.at("ratio").get<double>(),
          j.at("ci_low").get<double>(),        j.at("ci_high").get<double>(),
          j.at("line").get<std::string>()};
}

json to_json(const tradeoff &t) {
  return {{"decision", t.decision}, {"workload", t.workload}, {"pool", t.pool}, {"ratio", t.ratio},
          {"ci_low", t.ci_low},     {"ci_high", t.ci_high},   {"line", t.line}};
}

validation validation_from_json(const json &doc, const std::string &source) {
  return read_file_of(doc, schema::validation, source, "validation", [&] {
    json j = doc;
    validation v;
    take_required(j, "schema", v.schema);
    take_device(j, v.device);
    take(j, "meta", v.meta);
    take(j, "tuning", v.tuning);
    take(j, "method", v.method);
    // validate writes 16 rows or so: 4096 is far past any run, and keeps a report of a hostile
    // file within seconds (300,000 rows took over 60 s).
    take_list(j, "workloads", v.workloads, validation_row_from_json, 4096);
    take(j, "summary", v.summary);
    take_list(j, "tradeoffs", v.tradeoffs, tradeoff_from_json);
    take(j, "wall_seconds", v.wall_seconds);
    v.detail = std::move(j);
    return v;
  });
}

validation read_validation(const std::string &path) {
  return validation_from_json(read_json_file(path), path);
}

json to_json(const validation &v) {
  json j = v.detail;
  j["schema"] = v.schema;
  j["device"] = v.device;
  j["meta"] = v.meta;
  j["tuning"] = v.tuning;
  j["method"] = v.method;
  j["workloads"] = list_json(v.workloads);
  j["summary"] = v.summary;
  if (v.tradeoffs)
    j["tradeoffs"] = list_json(*v.tradeoffs);
  put(j, "wall_seconds", v.wall_seconds);
  return j;
}

} // namespace gpuprobe::model
