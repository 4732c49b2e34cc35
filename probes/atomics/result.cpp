// The host half of the atomics probe: variant names, thread counts, the result's JSON.
#include "common/enum_names.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/schema.hpp"
#include "model/fields.hpp"
#include "probes/atomics/driver.hpp"

namespace gpuprobe::probes {

using nlohmann::json;

namespace {
constexpr enum_table<atomic_variant, 8> k_variants = {
    {atomic_variant::same_u32, "same_u32"},
    {atomic_variant::same_u64, "same_u64"},
    {atomic_variant::distinct_u32, "distinct_u32"},
    {atomic_variant::distinct_u64, "distinct_u64"},
    {atomic_variant::cas_u32, "cas_u32"},
    {atomic_variant::cas_u64, "cas_u64"},
    {atomic_variant::aggregated_u32, "aggregated_u32"},
    {atomic_variant::aggregated_u64, "aggregated_u64"}};
} // namespace

const std::vector<atomic_variant> &all_atomic_variants() {
  static const std::vector<atomic_variant> v = [] {
    std::vector<atomic_variant> all;
    for (const auto &[e, name] : k_variants)
      all.push_back(e);
    return all;
  }();
  return v;
}

std::string to_string(atomic_variant v) { return enum_name(k_variants, v); }
atomic_variant parse_atomic_variant(const std::string &s) {
  return enum_value(k_variants, s, "unknown atomics variant");
}

int bits_of(atomic_variant v) {
  switch (v) {
  case atomic_variant::same_u32:
  case atomic_variant::distinct_u32:
  case atomic_variant::cas_u32:
  case atomic_variant::aggregated_u32:
    return 32;
  default:
    return 64;
  }
}

std::vector<std::uint64_t> thread_counts(std::uint64_t full) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t n = 1; n < full; n *= 2)
    v.push_back(n);
  v.push_back(full);
  return v;
}

std::uint64_t atomics_top(const atomics_options &o, const device_info &dev) {
  const std::uint64_t full = std::uint64_t(dev.sm_count) * std::uint64_t(dev.max_threads_per_sm);
  const std::uint64_t top = o.max_threads ? o.max_threads : full;
  if (top > full)
    throw error("--max-threads " + std::to_string(top) + " is beyond full occupancy (" +
                std::to_string(full) + " = " + std::to_string(dev.sm_count) + " SMs x " +
                std::to_string(dev.max_threads_per_sm) + ")");
  return top;
}

// Each record's keys, once, for its reader and its writer (model/fields.hpp).
template <class F> void fields(atomic_point &p, F &f) {
  f.required("threads", p.threads);
  f.required("samples", p.samples);
  f.required("launches", p.launches);
  f.required("mean_cycles", p.mean_cycles);
  f.required("median_cycles", p.median_cycles);
  f.required("p99_cycles", p.p99_cycles);
  f.required("warp_max_mean_cycles", p.warp_max_mean_cycles);
  f.required("ops_per_s", p.ops_per_s);
  f.required("counter_checked", p.counter_delta);
}
json to_json(const atomic_point &p) { return model::write_record(p); }

// A variant's keys; the rest of its block is its analysis (the fit and model).
template <class F> void fields(atomics_variant_result &v, F &f) {
  f.named("variant", v.variant, parse_atomic_variant);
  f.derived("bits", bits_of(v.variant));
  f.required("max_threads", v.max_threads);
  f.required("capped", v.capped);
  f.required_list("points", v.points, model::read_record<atomic_point>);
}
json to_json(const atomics_variant_result &v) {
  return model::write_with_rest(v, &atomics_variant_result::analysis);
}
atomics_variant_result variant_from_json(const json &j) {
  return model::read_with_rest(j, &atomics_variant_result::analysis);
}

constexpr const char *k_method = "one atomic per thread per launch (single shot), clock64 around "
                                 "it; launches repeated to >= samples";

template <class F> void fields(atomics_result &r, F &f) {
  f.derived("method", k_method);
  f.required("full_occupancy_threads", r.full_occupancy_threads);
  f.required("cas_max_threads", r.cas_max_threads);
  f.required("sm_clock_mhz_before", r.sm_clock_mhz_before);
  f.required("sm_clock_mhz_after", r.sm_clock_mhz_after);
  f.required_list("variants", r.variants, variant_from_json);
  f.required("wall_seconds", r.wall_seconds);
}

json to_json(const atomics_result &r) { return model::write_result(r, "atomics", "atomics"); }

atomics_result atomics_result_from_json(const json &doc) {
  return model::read_result<atomics_result>(doc, "atomics", "atomics");
}

nlohmann::json atomics_variant_result::fit() const {
  return model::part_or(analysis, "fit", nlohmann::json::object());
}
nlohmann::json atomics_variant_result::queue_model() const {
  return model::part_or(analysis, "queue_model", nlohmann::json::object());
}

} // namespace gpuprobe::probes
