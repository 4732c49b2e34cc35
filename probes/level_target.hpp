#pragma once
// What the per-level probes (tlb-sampling, tlb-conflict, tlb-coverage, tlb-per-sm) share: one
// target per level of a profile's TLB hierarchy, labelled as everywhere (model::level_label),
// with the profile's level it tests and why it was not measured. Host-only.
#include "common/device_info.hpp"
#include "common/envelope.hpp"
#include "common/results_folder.hpp"
#include "model/profile.hpp"

#include <nlohmann/json.hpp>

#include <functional>

#include <string>
#include <utility>
#include <vector>

namespace gpuprobe::probes {

struct level_target {
  std::string level;       // "L1"
  model::tlb_level tested; // the profile's level: its page, entries, structure and penalty
  std::string skipped;     // "" when measured, else why not
};

// A level probe's result before it measures: its envelope (this device, `seed`) and the profile
// it tests.
template <class R>
R level_result(const device_info &dev, std::uint64_t seed, const std::string &profile) {
  R r;
  static_cast<result_envelope &>(r) = make_envelope(dev, seed);
  r.profile = profile;
  return r;
}

// One T (a level_target) per level of `tlb`, innermost first: its label and level set, then
// plan(t, k) adds the probe's own plan for level k, or says in t.skipped why it is not tested.
template <class T, class F> std::vector<T> plan_levels(const model::tlb_hierarchy &tlb, F &&plan) {
  std::vector<T> out;
  for (std::size_t k = 0; k < tlb.levels.size(); ++k) {
    T t;
    t.level = model::level_label(false, k);
    t.tested = tlb.levels[k];
    plan(t, k);
    out.push_back(std::move(t));
  }
  return out;
}

// Each level of a per-level probe's stage's result (raw/<file>, its block `key`) with the profile's
// level of the same label and geometry (label, page, entries): f(level, result level). Nothing
// where the file is missing.
void for_each_matched_level(
    const results_folder &folder, const char *file, const char *key, model::tlb_hierarchy &tlb,
    const std::function<void(model::tlb_level &, const nlohmann::json &)> &f);

} // namespace gpuprobe::probes
