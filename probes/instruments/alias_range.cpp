#include "probes/instruments/alias_range.hpp"

#include "common/units.hpp"

#include <chrono>
#include <cstdio>

namespace gpuprobe::probes {

std::unique_ptr<device_pool> map_alias_range(const char *probe, std::uint64_t bytes,
                                             std::vector<alias_walk> walks, int device,
                                             std::uint64_t seed) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto pool = std::make_unique<device_pool>(alloc_kind::alias, bytes, device, seed, 2ull << 20,
                                            std::move(walks));
  std::fprintf(stderr, "[%s] %s alias range %s in %.1f s\n", probe,
               format_bytes(double(bytes)).c_str(),
               pool->reused() ? "kept from an earlier stage" : "mapped",
               std::chrono::duration<double>(clock::now() - t0).count());
  return pool;
}

} // namespace gpuprobe::probes
