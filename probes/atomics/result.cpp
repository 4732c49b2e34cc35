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

json to_json(const atomics_result &r) {
  json out = json::array();
  for (const auto &v : r.variants) {
    json pts = json::array();
    for (const auto &p : v.points)
      pts.push_back({{"threads", p.threads},
                     {"samples", p.samples},
                     {"launches", p.launches},
                     {"mean_cycles", p.mean_cycles},
                     {"median_cycles", p.median_cycles},
                     {"p99_cycles", p.p99_cycles},
                     {"warp_max_mean_cycles", p.warp_max_mean_cycles},
                     {"ops_per_s", p.ops_per_s},
                     {"counter_checked", p.counter_delta}});
    json jv = {{"variant", to_string(v.variant)},
               {"bits", bits_of(v.variant)},
               {"max_threads", v.max_threads},
               {"capped", v.capped},
               {"points", pts}};
    jv.update(v.analysis);
    out.push_back(jv);
  }
  return result_document(
      "atomics", r, "atomics",
      json{{"method", "one atomic per thread per launch (single shot), clock64 around it; "
                      "launches repeated to >= samples"},
           {"full_occupancy_threads", r.full_occupancy_threads},
           {"cas_max_threads", r.cas_max_threads},
           {"sm_clock_mhz_before", r.sm_clock_mhz_before},
           {"sm_clock_mhz_after", r.sm_clock_mhz_after},
           {"variants", out},
           {"wall_seconds", r.wall_seconds}});
}

atomics_result atomics_result_from_json(const json &doc) {
  try {
    atomics_result r;
    const json &a = result_body(doc, "atomics", "atomics", r);
    r.full_occupancy_threads = a.at("full_occupancy_threads").get<std::uint64_t>();
    r.cas_max_threads = a.at("cas_max_threads").get<std::uint64_t>();
    r.sm_clock_mhz_before = a.at("sm_clock_mhz_before").get<double>();
    r.sm_clock_mhz_after = a.at("sm_clock_mhz_after").get<double>();
    r.wall_seconds = a.at("wall_seconds").get<double>();
    for (const auto &jv : a.at("variants")) {
      atomics_variant_result v;
      v.variant = parse_atomic_variant(jv.at("variant").get<std::string>());
      v.max_threads = jv.at("max_threads").get<std::uint64_t>();
      v.capped = jv.at("capped").get<bool>();
      for (const auto &p : jv.at("points")) {
        atomic_point q;
        q.threads = p.at("threads").get<std::uint64_t>();
        q.samples = p.at("samples").get<std::uint64_t>();
        q.launches = p.at("launches").get<int>();
        q.mean_cycles = p.at("mean_cycles").get<double>();
        q.median_cycles = p.at("median_cycles").get<double>();
        q.p99_cycles = p.at("p99_cycles").get<double>();
        q.warp_max_mean_cycles = p.at("warp_max_mean_cycles").get<double>();
        q.ops_per_s = p.at("ops_per_s").get<double>();
        q.counter_delta = p.at("counter_checked").get<std::uint64_t>();
        v.points.push_back(q);
      }
      for (const auto &[k, val] : jv.items())
        if (k != "variant" && k != "bits" && k != "max_threads" && k != "capped" && k != "points")
          v.analysis[k] = val;
      r.variants.push_back(std::move(v));
    }
    return r;
  } catch (const json::exception &e) {
    throw error(std::string("atomics result: ") + e.what());
  }
}

nlohmann::json atomics_variant_result::fit() const {
  return model::part_or(analysis, "fit", nlohmann::json::object());
}
nlohmann::json atomics_variant_result::queue_model() const {
  return model::part_or(analysis, "queue_model", nlohmann::json::object());
}

} // namespace gpuprobe::probes
