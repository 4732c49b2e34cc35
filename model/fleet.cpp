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

json to_json(const fleet_unit &u) {
  return {{"folder", u.folder},   {"model", u.model}, {"uuid", u.uuid},    {"status", u.status},
          {"numbers", u.numbers}, {"text", u.text},   {"groups", u.groups}};
}

fleet_unit unit_from_json(const json &j) {
  fleet_unit u{j.at("folder").get<std::string>(),
               j.at("model").get<std::string>(),
               j.at("uuid").get<std::string>(),
               j.at("status").get<std::string>(),
               current_names(j.at("numbers").get<std::map<std::string, double>>()),
               j.at("text").get<std::map<std::string, std::string>>(),
               j.at("groups").get<std::map<std::string, std::vector<std::vector<int>>>>()};
  for (const auto &[level, groups] : u.groups) // the group map is drawn per SM id
    check_group_sm_ids(groups, k_max_sm_count, "unit " + u.uuid + ": " + level + " group");
  return u;
}

json to_json(const fleet_parameter &p) {
  json outliers = json::array();
  for (const auto &x : p.outliers)
    outliers.push_back({{"uuid", x.uuid}, {"value", x.value}, {"score", x.score}, {"why", x.why}});
  return {{"median", p.median}, {"mad", p.mad},        {"n", p.n}, {"min", p.min}, {"max", p.max},
          {"values", p.values}, {"outliers", outliers}};
}

fleet_parameter parameter_from_json(const json &j) {
  fleet_parameter p;
  p.median = j.at("median").get<double>();
  p.mad = j.at("mad").get<double>();
  p.n = j.at("n").get<std::size_t>();
  p.min = j.at("min").get<double>();
  p.max = j.at("max").get<double>();
  p.values = j.at("values").get<std::map<std::string, double>>();
  for (const auto &x : j.at("outliers"))
    p.outliers.push_back({x.at("uuid").get<std::string>(), x.at("value").get<double>(),
                          x.at("score").get<double>(), x.at("why").get<std::string>()});
  return p;
}

json to_json(const fleet_model &m) {
  json units = json::array(), params = json::object();
  for (const auto &u : m.units)
    units.push_back({{"uuid", u.uuid}, {"folder", u.folder}, {"status", u.status}});
  for (const auto &[name, p] : m.parameters)
    params[name] = to_json(p);
  return {{"units", units},
          {"complete", m.complete},
          {"parameters", params},
          {"differences", m.differences}};
}

fleet_model model_from_json(const json &j) {
  fleet_model m;
  for (const auto &u : j.at("units"))
    m.units.push_back({u.at("uuid").get<std::string>(), u.at("folder").get<std::string>(),
                       u.at("status").get<std::string>()});
  m.complete = j.at("complete").get<std::size_t>();
  for (const auto &[name, p] : j.at("parameters").items())
    m.parameters[current_name(name)] = parameter_from_json(p);
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
