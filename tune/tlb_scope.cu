// tune: TLB-scoped sampling with each possible scope (and one pass), interleaved, on a
// cudaMalloc and a scattered-VMM array of the same footprint; each scope's result is checked.
#include "allocators/workloads/tlb_scoped.cuh"
#include "common/device_memory.hpp"
#include "tune/kernels.cuh"
#include "tune/measure.hpp"

namespace gpuprobe::tune {

std::vector<scope_sample> measure_tlb_scopes(const std::vector<std::uint64_t> &scopes,
                                             std::uint64_t footprint, int reps, int device,
                                             std::uint64_t seed) {
  std::vector<scope_sample> out;
  for (const char *pool : {"cudamalloc", "vmm"}) {
    device_pool mem(parse_alloc_kind(pool), footprint, device, seed);
    workloads::sampling_run run(mem.data(), footprint);
    event_timer timer;
    const std::size_t first = out.size();
    for (auto s : scopes)
      out.push_back({s, pool, {}});
    auto once = [&](std::uint64_t s) {
      run.reset();
      return timer.ms([&] { run.launch(s); });
    };
    for (auto s : scopes)
      once(s); // warm-up
    for (int r = 0; r < reps; ++r)
      for (std::size_t k = 0; k < scopes.size(); ++k) {
        const std::size_t i = (k + std::size_t(r)) % scopes.size(); // rotate the order
        out[first + i].ms.push_back(once(scopes[i]));
      }
    for (auto s : scopes) {
      once(s);
      const std::string why = run.verify();
      if (!why.empty())
        throw error("tune: TLB-scoped sampling with scope " + std::to_string(s) +
                    " failed its check: " + why);
    }
  }
  return out;
}

} // namespace gpuprobe::tune
