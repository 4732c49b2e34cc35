#pragma once
// One word of a fragmented RW_malloc region (bit set = used), for the tests that check a warp's
// passes over a region against a host model (the GPU tests' one-region warp, the host's lockstep
// sweeps): drawn free, used, sparse, dense, random or as a run to the top (sometimes with one more
// bit).
#include <cstdint>
#include <random>

namespace gpuprobe::test {

inline std::uint64_t fragmented_word(std::mt19937_64 &rng) {
  const int kind = int(rng() % 6);
  return kind == 0   ? 0ull
         : kind == 1 ? ~0ull
         : kind == 2 ? rng() & rng() & rng()
         : kind == 3 ? rng() | rng()
         : kind == 4 ? rng()
                     : (~0ull << (rng() % 64)) ^ (rng() % 3 ? 0ull : (1ull << (rng() % 64)));
}

} // namespace gpuprobe::test
