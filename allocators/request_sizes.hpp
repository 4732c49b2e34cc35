#pragma once
// Request sizes of the malloc benchmarks and tests, host and device: a fixed size, or "mixed":
// multiples of 4 B uniform in [4, 8192], a hash of (thread, round) so runs repeat.
#include "allocators/hash.hpp"

#include <cstdint>

namespace gpuprobe::alloc {

struct request_sizes {
  std::uint32_t fixed = 0; // 0: mixed 4..8192
  std::uint32_t round = 0;

  GPUPROBE_HD std::uint32_t operator()(std::uint64_t thread) const {
    if (fixed)
      return fixed;
    return 4u + 4u * std::uint32_t(mix64(thread * 0x9e3779b97f4a7c15ull + round) % 2048u);
  }
  GPUPROBE_HD double mean_bytes() const { return fixed ? double(fixed) : 4.0 + 4.0 * 2047.0 / 2.0; }
};

} // namespace gpuprobe::alloc
