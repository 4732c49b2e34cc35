#pragma once
// The atomics fits as profile.json keeps them (`atomics.variants`, made by probes::fit_variant)
// and as a raw atomics result carries them beside its points: one typed value per variant, read
// once here for the report, its summary and the fleet. Host-only.
#include "model/profile.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::model {

// A variant's fit: "line" (slope per thread), "power" (c * N^p) or "none"; absent keys stay empty
// (a result from before the power-law fits has no `model`).
struct atomics_fit {
  std::optional<std::string> model;
  std::optional<double> intercept_cycles, slope_cycles_per_thread, r2;
  std::optional<double> power_coefficient_cycles, power_exponent, power_r2_log;
  std::optional<double> from_threads, to_threads;
  std::optional<std::string> why;                   // "none": why no model fits
  nlohmann::json detail = nlohmann::json::object(); // the rest (points, contended): as read
};
// Its keys, once, for its reader and its writer (model/fields.hpp).
template <class F> void fields(atomics_fit &s, F &f) {
  f.field("model", s.model);
  f.field("intercept_cycles", s.intercept_cycles);
  f.field("slope_cycles_per_thread", s.slope_cycles_per_thread);
  f.field("r2", s.r2);
  f.field("power_coefficient_cycles", s.power_coefficient_cycles);
  f.field("power_exponent", s.power_exponent);
  f.field("power_r2_log", s.power_r2_log);
  f.field("from_threads", s.from_threads);
  f.field("to_threads", s.to_threads);
  f.field("why", s.why);
}

// The RW paper's queue model (Eqs. 1-2) where it applies (one contended address).
struct atomics_queue_model {
  bool applies = false;
  std::optional<std::vector<double>> mean_cycles; // per measured point
  std::optional<double> predicted_slope_cycles_per_thread;
};

struct atomics_point {
  double threads = 0, mean_cycles = 0;
};

struct atomics_variant {
  std::string variant;               // same_u32, distinct_u32, cas_u32, ...; "" when absent
  std::vector<atomics_point> points; // a raw result's points (none in profile.json)
  std::optional<atomics_fit> fit;
  atomics_queue_model queue_model;
};

atomics_fit atomics_fit_from_json(const nlohmann::json &j);
nlohmann::json to_json(const atomics_fit &f);
atomics_variant atomics_variant_from_json(const nlohmann::json &j);
// A list of variants (a raw result's `atomics.variants` or the profile's); not a list: none.
std::vector<atomics_variant> atomics_variants_from_json(const nlohmann::json &list);
// The fits profile.json keeps (none where it has no atomics block).
std::vector<atomics_variant> atomics_of(const profile &p);
// The variants of an atomics stage's raw result (its "atomics" block), none where it has none.
std::vector<atomics_variant> atomics_of_result(const nlohmann::json &doc);

} // namespace gpuprobe::model
