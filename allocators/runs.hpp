#pragma once
// Free runs in a bitmap region (RW_malloc, RW paper Alg. 4): 64-bit words, bit set = unit used.
// Host and device code (the host tests check it on patterns without a GPU).
#include <cstdint>

#if defined(__CUDACC__)
#define GPUPROBE_HD __host__ __device__
#else
#define GPUPROBE_HD
#endif

namespace gpuprobe::alloc {

GPUPROBE_HD inline unsigned ctz64(std::uint64_t x) { // x != 0
#if defined(__CUDA_ARCH__)
  return unsigned(__ffsll((long long)x) - 1);
#else
  return unsigned(__builtin_ctzll(x));
#endif
}

// Number of consecutive set bits of x from bit 0 (64 when all are set).
GPUPROBE_HD inline unsigned trailing_ones(std::uint64_t x) { return ~x ? ctz64(~x) : 64u; }

struct free_run {
  std::uint32_t start;  // first unit, relative to the region's first word
  std::uint32_t length; // 0: no further run
};

// The first run of free units at or after unit `from` in words[0, n): runs that cross a word
// boundary are joined; a run is cut at the end of the region. Walk a region with
//   for (auto r = next_free_run(get, n, 0); r.length; r = next_free_run(get, n, r.start +
//   r.length))
// `word(j)` returns word j (an array read on the host, a shuffle or load on the device).
template <class Word>
GPUPROBE_HD inline free_run next_free_run(Word &&word, unsigned n, std::uint32_t from) {
  unsigned j = from / 64, b = from % 64;
  while (j < n) {
    const std::uint64_t f = ~word(j) & (~0ull << b); // free bits of word j at or after b
    if (!f) {
      ++j, b = 0;
      continue;
    }
    const unsigned s = ctz64(f);
    free_run r{j * 64 + s, 0};
    for (unsigned jj = j, bb = s; jj < n;) {
      const unsigned len =
          trailing_ones(~word(jj) >> bb); // the shift fills with used bits: <= 64 - bb
      r.length += len;
      if (bb + len < 64)
        break;
      ++jj, bb = 0;
    }
    return r;
  }
  return {n * 64, 0};
}

} // namespace gpuprobe::alloc
