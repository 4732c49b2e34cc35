#pragma once
// `gpuprobe atomics`: the driver of the atomic-latency probe (probes/atomics/kernel.hpp) over
// thread counts 1, 2, 4, ... full occupancy, its result and the result's JSON (gpuprobe.result/2,
// probe "atomics"). Host code in result.cpp; run_atomics needs a GPU.
#include "common/device_info.hpp"
#include "common/envelope.hpp"
#include "probes/atomics/kernel.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <vector>

namespace gpuprobe::probes {

struct atomics_options {
  std::vector<atomic_variant> variants; // empty: all
  std::uint64_t max_threads = 0;        // 0: full occupancy
  std::uint64_t cas_max_threads = 1u << 14;
  std::uint64_t samples = 4096;
  std::uint64_t seed = 1;
};

// 1, 2, 4, ... below `full`, then `full` itself.
std::vector<std::uint64_t> thread_counts(std::uint64_t full);
// The largest thread count of `o` on `dev` (throws gpuprobe::error beyond full occupancy).
std::uint64_t atomics_top(const atomics_options &o, const device_info &dev);

struct atomics_variant_result {
  atomic_variant variant{};
  std::uint64_t max_threads = 0;
  bool capped = false;
  std::vector<atomic_point> points;
  nlohmann::json analysis = nlohmann::json::object(); // the fit and model (added by the caller)
  // The analysis's parts, as written ({} where the caller added none).
  nlohmann::json fit() const;
  nlohmann::json queue_model() const;
};

struct atomics_result : result_envelope { // device, meta
  std::uint64_t full_occupancy_threads = 0, cas_max_threads = 0;
  double sm_clock_mhz_before = 0, sm_clock_mhz_after = 0;
  std::vector<atomics_variant_result> variants;
  double wall_seconds = 0;
};

// `on_variant` sees each variant's points as soon as they are measured (the caller fits them).
atomics_result
run_atomics(const atomics_options &o, const device_info &dev,
            const std::function<void(atomics_variant_result &, double sm_clock_mhz)> &on_variant);

nlohmann::json to_json(const atomics_result &r);
atomics_result atomics_result_from_json(const nlohmann::json &doc); // throws gpuprobe::error

} // namespace gpuprobe::probes
