#include "probes/instruments/alias_range.hpp"

#include "common/stopwatch.hpp"
#include "common/units.hpp"

#include <cstdio>

namespace gpuprobe::probes {

std::unique_ptr<device_pool> map_alias_range(const char *probe, std::uint64_t bytes,
                                             std::vector<alias_walk> walks, int device,
                                             std::uint64_t seed) {
  const stopwatch t0;
  auto pool = std::make_unique<device_pool>(alloc_kind::alias, bytes, device, seed, 2ull << 20,
                                            std::move(walks));
  std::fprintf(stderr, "[%s] %s alias range %s in %.1f s\n", probe,
               format_bytes(double(bytes)).c_str(),
               pool->reused() ? "kept from an earlier stage" : "mapped", t0.seconds());
  return pool;
}

} // namespace gpuprobe::probes
