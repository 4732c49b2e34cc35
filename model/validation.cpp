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

template <class F> void fields(validation_row &r, F &f) {
  f.required("workload", r.workload);
  f.field("pool", r.pool);
  f.field("config_default", r.config_default);
  f.field("config_tuned", r.config_tuned);
  f.field("measured", r.measured);
  f.field("verdict", r.verdict);
  f.field("reason", r.reason);
  f.field("reps", r.reps);
  f.field("median_default_ms", r.median_default_ms);
  f.field("median_tuned_ms", r.median_tuned_ms);
  f.field("ratio", r.ratio);
  f.field("ci_low", r.ci_low);
  f.field("ci_high", r.ci_high);
  f.field("p", r.p);
  f.field("p_holm", r.p_holm);
  f.field("default_ms", r.default_ms);
  f.field("tuned_ms", r.tuned_ms);
  f.list("changes", r.changes, decision_change_from_json);
}

validation_row validation_row_from_json(const json &in) { return read_block<validation_row>(in); }
json to_json(const validation_row &r) { return write_block(r); }

template <class F> void fields(tradeoff &t, F &f) {
  f.required("decision", t.decision);
  f.required("workload", t.workload);
  f.required("pool", t.pool);
  f.required("ratio", t.ratio);
  f.required("ci_low", t.ci_low);
  f.required("ci_high", t.ci_high);
  f.required("line", t.line);
}

tradeoff tradeoff_from_json(const json &j) { return read_record<tradeoff>(j); }
json to_json(const tradeoff &t) { return write_record(t); }

template <class F> void fields(validation &v, F &f) {
  f.required("schema", v.schema);
  f.device(v.device);
  f.field("meta", v.meta);
  f.field("tuning", v.tuning);
  f.field("method", v.method);
  // validate writes 16 rows or so: 4096 is far past any run, and keeps a report of a hostile
  // file within seconds (300,000 rows took over 60 s).
  f.list("workloads", v.workloads, validation_row_from_json, 4096);
  f.field("summary", v.summary);
  f.list("tradeoffs", v.tradeoffs, tradeoff_from_json);
  f.field("wall_seconds", v.wall_seconds);
}

validation validation_from_json(const json &doc, const std::string &source) {
  return read_file_of(doc, schema::validation, source, "validation",
                      [&] { return read_block<validation>(doc); });
}

validation read_validation(const std::string &path) {
  return validation_from_json(read_json_file(path), path);
}

json to_json(const validation &v) { return write_block(v); }

} // namespace gpuprobe::model
