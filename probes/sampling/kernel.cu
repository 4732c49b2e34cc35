// Random sampling over prefixes of one cudaMalloc array, timed per launch (see kernel.hpp).
#include "allocators/workloads/tlb_scoped.cuh"
#include "common/device_memory.hpp"
#include "common/error.hpp"
#include "common/timing.cuh"
#include "common/units.hpp"
#include "probes/sampling/kernel.hpp"

#include <algorithm>
#include <memory>

namespace gpuprobe::probes {

std::vector<sampling_times> measure_sampling(const std::vector<std::uint64_t> &footprints,
                                             int reps, int device, double &reads) {
  std::vector<sampling_times> out;
  if (footprints.empty())
    return out;
  const std::uint64_t top = *std::max_element(footprints.begin(), footprints.end());
  device_pool mem(alloc_kind::cudamalloc, top, device, 1);
  // data[i] = mix(i) whatever the footprint: each run fills its prefix with the same values.
  std::vector<std::unique_ptr<workloads::sampling_run>> runs;
  for (auto f : footprints) {
    runs.push_back(std::make_unique<workloads::sampling_run>(mem.data(), f));
    out.push_back({f, {}});
  }
  reads = runs.front()->reads();
  event_timer timer;
  auto once = [&](std::size_t i) {
    runs[i]->reset();
    return timer.ms([&] { runs[i]->launch(0); }); // scope 0: one pass over the whole footprint
  };
  for (std::size_t i = 0; i < runs.size(); ++i)
    once(i); // warm-up
  for (int r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const std::size_t i = (k + std::size_t(r)) % runs.size(); // rotate the order
      out[i].ms.push_back(once(i));
    }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    once(i);
    const std::string why = runs[i]->verify();
    if (!why.empty())
      throw error("tlb-sampling: the sampling over " + format_bytes(double(footprints[i])) +
                  " failed its check: " + why);
  }
  return out;
}

} // namespace gpuprobe::probes
