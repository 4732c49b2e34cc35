#include "model/fleet.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "model/fields.hpp"

namespace gpuprobe::model {

using nlohmann::json;

namespace {

// A parameter's name as this build writes it: fleet files of version 1 named a level's coverage
// "<level>.page_mib".
std::string current_name(std::string name) {
  const std::string old = ".page_mib";
  if (name.size() > old.size() && name.compare(name.size() - old.size(), old.size(), old) == 0)
    name.replace(name.size() - old.size(), old.size(), ".coverage_mib");
  return name;
}
template <class V> std::map<std::string, V> current_names(const std::map<std::string, V> &in) {
  std::map<std::string, V> out;
  for (const auto &[name, v] : in)
    out[current_name(name)] = v;
  return out;
}

} // namespace

// Each record's keys, once, for its reader and its writer (model/fields.hpp).
template <class F> void fields(fleet_unit &u, F &f) {
  f.required("folder", u.folder);
  f.required("model", u.model);
  f.required("uuid", u.uuid);
  f.required("status", u.status);
  f.required("numbers", u.numbers);
  f.required("text", u.text);
  f.required("groups", u.groups);
}
template <class F> void fields(fleet_outlier &o, F &f) {
  f.required("uuid", o.uuid);
  f.required("value", o.value);
  f.required("score", o.score);
  f.required("why", o.why);
}
template <class F> void fields(fleet_parameter &p, F &f) {
  f.required("median", p.median);
  f.required("mad", p.mad);
  f.required("n", p.n);
  f.required("min", p.min);
  f.required("max", p.max);
  f.required("values", p.values);
  f.required_list("outliers", p.outliers, read_record<fleet_outlier>);
}
template <class F> void fields(fleet_member &m, F &f) {
  f.required("uuid", m.uuid);
  f.required("folder", m.folder);
  f.required("status", m.status);
}
json to_json(const fleet_unit &u) { return write_record(u); }
json to_json(const fleet_outlier &o) { return write_record(o); }
json to_json(const fleet_parameter &p) { return write_record(p); }
json to_json(const fleet_member &m) { return write_record(m); }

namespace {

fleet_unit unit_from_json(const json &j) {
  auto u = read_record<fleet_unit>(j);
  u.numbers = current_names(u.numbers);
  for (const auto &[level, groups] : u.groups) // the group map is drawn per SM id
    check_group_sm_ids(groups, k_max_sm_count, "unit " + u.uuid + ": " + level + " group");
  return u;
}

json to_json(const fleet_model &m) {
  json params = json::object();
  for (const auto &[name, p] : m.parameters)
    params[name] = to_json(p);
  return {{"units", list_json(m.units)},
          {"complete", m.complete},
          {"parameters", params},
          {"differences", m.differences}};
}

fleet_model model_from_json(const json &j) {
  fleet_model m;
  for (const auto &u : j.at("units"))
    m.units.push_back(read_record<fleet_member>(u));
  m.complete = j.at("complete").get<std::size_t>();
  for (const auto &[name, p] : j.at("parameters").items())
    m.parameters[current_name(name)] = read_record<fleet_parameter>(p);
  m.differences = j.at("differences").get<std::vector<std::string>>();
  return m;
}

} // namespace

fleet fleet_from_json(const json &doc, const std::string &source) {
  return read_file_of(doc, schema::fleet, source, "fleet", [&] {
    fleet f;
    f.schema = doc.at("schema").get<std::string>();
    f.outlier_rule = doc.at("rule").at("outlier").get<std::string>();
    for (const auto &[name, m] : doc.at("models").items())
      f.models[name] = model_from_json(m);
    for (const auto &u : doc.at("units"))
      f.units.push_back(unit_from_json(u));
    if (doc.contains("not_units"))
      f.not_units = doc["not_units"].get<std::vector<std::string>>();
    return f;
  });
}

fleet read_fleet(const std::string &path) { return fleet_from_json(read_json_file(path), path); }

json to_json(const fleet &f) {
  json models = json::object(), units = json::array();
  for (const auto &[name, m] : f.models)
    models[name] = to_json(m);
  for (const auto &u : f.units)
    units.push_back(to_json(u));
  json j = {{"schema", f.schema},
            {"rule", {{"outlier", f.outlier_rule}}},
            {"models", models},
            {"units", units}};
  if (f.not_units)
    j["not_units"] = *f.not_units;
  return j;
}

} // namespace gpuprobe::model
