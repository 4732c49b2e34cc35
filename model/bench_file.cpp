#include "model/bench_file.hpp"

#include "common/error.hpp"
#include "model/fields.hpp"

namespace gpuprobe::model {

namespace {

using nlohmann::json;

bench_case case_from_json(const json &b, const std::string &where) {
  if (!b.is_object())
    throw error(where + ": a case that is " + std::string(b.type_name()) + ", not an object");
  bench_case c;
  for (const auto &[key, v] : b.items()) {
    if (key == "name" || key == "time_unit" || key == "error_message") {
      if (!v.is_string())
        throw kind_error(where, key, v, "a string");
      (key == "name"        ? c.name
       : key == "time_unit" ? c.time_unit
                            : c.error_message) = v.get<std::string>();
    } else if (key == "error_occurred") {
      if (!v.is_boolean())
        throw kind_error(where, key, v, "a boolean");
      c.error_occurred = v.get<bool>();
    } else if (key == "real_time") {
      if (!v.is_number())
        throw kind_error(where, key, v, "a number");
      c.real_time = v.get<double>();
    } else if (v.is_number()) {
      c.numbers[key] = v.get<double>();
    }
  }
  return c;
}

} // namespace

double bench_case::real_time_ms() const {
  if (time_unit == "ns")
    return real_time * 1e-6;
  if (time_unit == "us")
    return real_time * 1e-3;
  if (time_unit == "s")
    return real_time * 1e3;
  return real_time; // ms
}

std::optional<double> bench_case::number(const std::string &key) const {
  const auto it = numbers.find(key);
  return it == numbers.end() ? std::nullopt : std::optional<double>(it->second);
}

double bench_case::number_or(const std::string &key, double fallback) const {
  return number(key).value_or(fallback);
}

std::string bench_file::context_or(const std::string &key, const std::string &fallback) const {
  const auto it = context.find(key);
  return it == context.end() ? fallback : it->second;
}

bench_file bench_file_from_json(const json &doc, const std::string &where) {
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw error(where + ": not gpuprobe-bench output (no \"benchmarks\" list)");
  bench_file f;
  if (const auto ctx = doc.find("context"); ctx != doc.end() && ctx->is_object())
    for (const auto &[key, v] : ctx->items()) {
      if (v.is_string())
        f.context[key] = v.get<std::string>();
      else if (v.is_number())
        f.context[key] = v.dump();
    }
  const json &list = doc["benchmarks"];
  for (std::size_t i = 0; i < list.size(); ++i)
    f.cases.push_back(case_from_json(list[i], where + " case " + std::to_string(i)));
  return f;
}

} // namespace gpuprobe::model
