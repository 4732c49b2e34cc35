#pragma once
// One 64-bit mixer (MurmurHash3's finalizer) for host and device: request sizes, synthetic
// relations and data whose values the checks recompute.
#include "allocators/runs.hpp" // GPUPROBE_HD

#include <cstdint>

namespace gpuprobe::alloc {

GPUPROBE_HD inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

} // namespace gpuprobe::alloc
