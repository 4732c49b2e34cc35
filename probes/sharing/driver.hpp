#pragma once
// `gpuprobe tlb-sharing`: the driver of the victim/disruptor probe (probes/sharing/kernel.hpp), its
// pool policy and round order, the result and its JSON (gpuprobe.result/2, probe
// "tlb-sharing"). Host code in result.cpp; run_sharing needs a GPU (driver.cpp).
#include "common/defaults.hpp"
#include "common/device_info.hpp"
#include "common/envelope.hpp"
#include "model/profile.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace gpuprobe::probes {

// The level under test: from a profile's level or candidate, or a hypothesis.
struct level_spec {
  model::tlb_level tested;        // the profile's level, or a hypothesis (its page and entries)
  std::string origin;             // "profile.json level 1", "--coverage-bytes/--entries"
  nlohmann::json level = nullptr; // the profile's level number (null for a candidate or hypothesis)
  std::uint64_t coverage_bytes() const { return std::uint64_t(tested.coverage_bytes); }
  std::uint64_t entries() const { return std::uint64_t(std::llround(tested.entries.value_or(0))); }
};
// A level no profile names: `entries` x `coverage_bytes`, from `origin`.
level_spec hypothesis(std::uint64_t coverage_bytes, double entries, const std::string &origin);
// "2048 x 32 MiB (reach 64 GiB)".
std::string describe(const level_spec &L);
// Level `index` (1 = innermost) of the profile's levels, or of its candidates (read from `path`
// with model::read_profile).
level_spec level_from_profile(const model::tlb_hierarchy &tlb, const std::string &path,
                              bool candidate, int index);

struct sharing_result;

struct sharing_options {
  level_spec level;
  std::string alloc = "auto"; // auto | cudamalloc | vmm-sparse
  double overfill = 1.2;
  int max_sms = 0;
  double timeout_s = 0;
  double free_fraction = defaults::free_fraction;
  double min_overfill = 1.05;
  bool random_order = true; // --order random | sequential
  bool spread_lines = true; // --lines spread | zero
  std::uint64_t seed = defaults::seed;
  // First measure this many SMs spread over the GPU (spread_sm_indices); when `sample_verdict`
  // says their matrix answers for every SM ("": every pair shares, the level is global), stop
  // there; else (it says why not) measure every SM. 0: every SM at once.
  int sample_sms = 0;
  std::function<std::string(const sharing_result &)> sample_verdict;
};

// `n` of `count` SM indices spread evenly over them (0, count/n, 2 count/n, ...): SMs of every
// GPC, where the first `n` would be one or two GPCs.
std::vector<std::size_t> spread_sm_indices(std::size_t count, std::size_t n);

// auto: a dense cudaMalloc pool, with the overfill lowered (not below min_overfill) to fit
// `budget` bytes; else one chunk per page (vmm-sparse) when pages are a multiple of the VMM
// granularity `gran`. Throws gpuprobe::error, naming the sizes, when the level cannot be tested.
struct pool_choice {
  std::string alloc;
  double overfill = 0;
};
pool_choice choose_sharing_pool(const sharing_options &o, double budget, std::uint64_t gran);

// One victim's launch: a discarded warm-up round, the baseline, the control (the victim itself),
// every other SM in a random order, the baseline again (-1: no disruptor). `order` receives the
// SM indices of the measured rounds 2..n+1 (victim first).
std::vector<int> victim_rounds(std::size_t victim, const std::vector<int> &sms,
                               std::mt19937_64 &rng, std::vector<std::size_t> &order);

struct sharing_result : result_envelope { // device, meta
  nlohmann::json params;                  // the layout, pool and order actually used
  std::vector<int> sm_ids;
  std::vector<std::vector<double>> mean_cycles, median_cycles; // [victim][disruptor]
  std::vector<double> baseline_mean_cycles, baseline_median_cycles, baseline_drift_cycles;
  double wall_seconds = 0;
};

sharing_result run_sharing(const sharing_options &o, const device_info &dev);

nlohmann::json to_json(const sharing_result &r);
sharing_result sharing_result_from_json(const nlohmann::json &doc); // throws gpuprobe::error

// What the analysis, the profile and the terminal read of a result's params, typed; the rest of
// params stays as it was written. A part of another kind is one gpuprobe::error naming it.
struct sharing_params {
  std::optional<double> entries, coverage_bytes; // the level measured
  std::optional<std::string> alloc;          // the pool
  struct sample_read {                       // --sample-sms: `sms` of `of` SMs spread over the GPU
    std::optional<long long> sms, of;
    std::string finding;
  };
  std::optional<sample_read> sample;
};
// From a result's params (null, as a 2017 file has: nothing known).
sharing_params sharing_params_from_json(const nlohmann::json &params);
// From a whole tlb-sharing result document: its "sharing" block's params (absent: nothing known).
sharing_params sharing_params_of_document(const nlohmann::json &doc);

} // namespace gpuprobe::probes
