// tune: TLB-scoped sampling with each possible scope (and one pass), interleaved, on a
// cudaMalloc and a scattered-VMM array of the same footprint; each scope's result is checked. The
// cudaMalloc array is the regions decision's pool when one was kept (keepable_pool).
#include "allocators/workloads/tlb_scoped.cuh"
#include "common/device_memory.hpp"
#include "common/stopwatch.hpp"
#include "tune/kernels.cuh"
#include "tune/measure.hpp"

#include <algorithm>
#include <cstdio>

namespace gpuprobe::tune {

std::vector<scope_sample> measure_tlb_scopes(const std::vector<std::uint64_t> &scopes,
                                             std::uint64_t footprint, int reps, int device,
                                             std::uint64_t seed) {
  std::vector<scope_sample> out;
  for (const char *pool : {"cudamalloc", "vmm"}) {
    // Kept at the end while a pool_keeper lives: validate's first rows take the last one.
    bool taken = false;
    const stopwatch m0;
    const auto mem = keepable_pool(parse_alloc_kind(pool), footprint, device, seed, &taken);
    // Where the scope's time goes: the pool (made, or the regions' taken) before the launches.
    std::printf("[scope]   %-10s pool of %.0f GiB %s in %.1f s\n", pool, double(footprint >> 30),
                taken ? "taken from the decision before" : "made", m0.seconds());
    std::fflush(stdout);
    workloads::sampling_run run(mem->data(), footprint);
    event_timer timer;
    const std::size_t first = out.size();
    for (auto s : scopes)
      out.push_back({s, pool, {}});
    auto once = [&](std::uint64_t s) {
      run.reset();
      return timer.ms([&] { run.launch(s); });
    };
    // The warm-up doubles as a screen: a scope taking over twice the fastest one's time cannot
    // be chosen (tune takes the largest within 3 % of the fastest), so its warm-up stands as its
    // one sample and the repetitions go to the others (a small level's scope, hundreds of passes,
    // took 10-26x one pass: most of the scope search's time). One pass, the default, is always
    // repeated.
    std::vector<double> warm;
    for (auto s : scopes)
      warm.push_back(once(s));
    const double fastest = *std::min_element(warm.begin(), warm.end());
    std::vector<bool> screened(scopes.size());
    for (std::size_t k = 0; k < scopes.size(); ++k) {
      screened[k] = scopes[k] != 0 && warm[k] > 2 * fastest;
      if (screened[k])
        out[first + k].ms.push_back(warm[k]);
    }
    for (int r = 0; r < reps; ++r)
      for (std::size_t k = 0; k < scopes.size(); ++k) {
        const std::size_t i = (k + std::size_t(r)) % scopes.size(); // rotate the order
        if (!screened[i])
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
