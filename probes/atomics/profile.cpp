// The atomics probe's part of profile.json: the fits its stage made (each variant's `analysis`),
// under detail.atomics (with an empty list where the stage did not run); the device block of its
// result becomes the profile's.
#include "model/profile.hpp"
#include "common/json_io.hpp"
#include "common/results_folder.hpp"
#include "probes/atomics/driver.hpp"
#include "probes/atomics/probe.hpp"

#include <filesystem>

namespace gpuprobe::probes::atomics {

void contribute(const results_folder &folder, model::profile &p) {
  using F = results_folder::raw_file;
  nlohmann::json variants = nlohmann::json::array();
  const auto af = folder.raw(F::atomics);
  if (std::filesystem::exists(af)) {
    const auto a = probes::atomics_result_from_json(read_json_file(af.string()));
    for (const auto &v : a.variants)
      variants.push_back({{"variant", probes::to_string(v.variant)},
                          {"fit", v.fit()},
                          {"queue_model", v.queue_model()}});
    if (!a.device.is_null())
      p.device = a.device;
  }
  p.detail["atomics"] = {{"source", results_folder::raw_rel(F::atomics)}, {"variants", variants}};
}

} // namespace gpuprobe::probes::atomics
