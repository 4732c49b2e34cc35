#pragma once
// CoRW (RW paper, Alg. 3): the active lanes of a warp find pages together. Each round every
// lane reads one random bitmap word (one step for every lane); an exclusive prefix sum of the
// free bits tells each lane how many of its bits the warp still needs; only those lanes lock
// their word (LockMap) and claim that many bits; the pages found are handed to the lanes that
// still need one with shuffles. All lanes leave together, so TAS = WAS = rounds.
// Call from every lane that needs a page at the same point (converged lanes; others may be
// inactive).
#include "allocators/bitmap.cuh"

namespace gpuprobe::alloc {

namespace detail {
// Loops of n steps, not runs.hpp's selects (a binary search, the same steps whatever n): with few
// free pages a word gives one or two and the loop is shorter. Measured on an H200 with runs.hpp's:
// 0.97-1.17x CoRW's time at 0.5 % free, 0.57-1.04x at 50 % (two runs each, BM_getpage).
template <class Word>
__device__ inline Word lowest_n(Word x, unsigned n) { // the n lowest set bits of x
  Word out = 0;
  for (unsigned i = 0; i < n && x; ++i) {
    const Word low = x & (~x + 1);
    out |= low;
    x ^= low;
  }
  return out;
}
template <class Word>
__device__ inline int nth_set(Word x, unsigned n) { // index of the n-th (0-based) set bit
  for (unsigned i = 0; i < n; ++i)
    x &= x - 1;
  return bitmap_view<Word>::lowest(x);
}
} // namespace detail

template <class Word> struct corw_handle : bitmap_handle<Word> { // max_steps: its rounds
  static constexpr const char *name = sizeof(Word) == 4 ? "corw32" : "corw64";
  using bitmap_handle<Word>::bm, bitmap_handle<Word>::seed, bitmap_handle<Word>::scope;

  template <class Steps> __device__ page_t get_page(Steps &st) const {
    const unsigned active = __activemask();
    const unsigned lane = detail::lane_id();
    const unsigned lt = (1u << lane) - 1u;
    rng64 r(thread_seed(seed));
    std::uint32_t lo, n;
    scope.range(bm.word_count, lo, n);
    page_t mine = invalid_page;
    for (unsigned round = 0; round < this->max_steps; ++round) {
      const unsigned needy = __ballot_sync(active, mine == invalid_page);
      if (!needy)
        return mine;
      st.add();
      const std::uint32_t w = lo + r.below(n);
      Word seen = bm.read(w);
      const unsigned want = __popc(needy);
      const unsigned f = bitmap_view<Word>::popcount(~seen);
      const unsigned s = detail::ballot_scan(active, f, lt);
      unsigned take = s >= want ? 0u : min(f, want - s);
      Word got = 0;
      if (take) {
        if (bm.lock(w)) { // a word found locked gives nothing this round
          seen = bm.read(w);
          got = bm.claim(w, detail::lowest_n<Word>(~seen, take));
          bm.unlock(w);
        }
      }
      // Hand out what was really claimed: prefix over the claimed counts, then each needy
      // lane (rank k among needy lanes) takes bit k - s2 of the contributor covering k.
      const unsigned g = bitmap_view<Word>::popcount(got);
      const unsigned s2 = detail::ballot_scan(active, g, lt);
      const unsigned k = __popc(needy & lt);
      for (unsigned givers = __ballot_sync(active, g != 0); givers; givers &= givers - 1) {
        const int c = __ffs(givers) - 1;
        const unsigned cs = __shfl_sync(active, s2, c), cg = __shfl_sync(active, g, c);
        const Word cw = __shfl_sync(active, got, c);
        const std::uint32_t cword = __shfl_sync(active, w, c);
        if (mine == invalid_page && ((needy >> lane) & 1u) && k >= cs && k < cs + cg)
          mine =
              page_t(cword) * bitmap_view<Word>::bits + page_t(detail::nth_set<Word>(cw, k - cs));
      }
    }
    if (mine == invalid_page)
      mine = bm.scan(lo + r.below(n), st); // out of rounds: exhaustive
    return mine;
  }
  __device__ page_t get_page() const {
    no_steps s;
    return get_page(s);
  }
};

template <class Word> using corw = bitmap_allocator<corw_handle<Word>, Word>;

} // namespace gpuprobe::alloc
