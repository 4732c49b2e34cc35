#pragma once
// RW-BM (RW paper, Alg. 2): a thread draws random bitmap words; it locks the word in the LockMap
// (a word found locked costs a step and is skipped), takes its lowest free bit, unlocks.
#include "allocators/bitmap.cuh"

namespace gpuprobe::alloc {

template <class Word> struct rw_bm_handle : bitmap_handle<Word> {
  static constexpr const char *name = sizeof(Word) == 4 ? "rw_bm32" : "rw_bm64";
  using bitmap_handle<Word>::bm, bitmap_handle<Word>::seed, bitmap_handle<Word>::epoch,
      bitmap_handle<Word>::scope;

  template <class Steps> __device__ page_t get_page(Steps &st) const {
    rng64 r(thread_seed(seed));
    std::uint32_t lo, n;
    scope.range(bm.word_count, lo, n);
    // First word: a random rotation of the thread id, so threads of one launch start on distinct
    // words (Eq. 5 assumes no two threads probe one word at once; uniform draws collide in the
    // LockMap, which costs steps the model does not have). Later words are uniform draws.
    const unsigned long long gtid = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
    const std::uint32_t first =
        lo + std::uint32_t((rng64(seed ^ (epoch * 0x9e3779b97f4a7c15ull)).next() + gtid) % n);
    for (unsigned k = 0; k < this->max_steps; ++k) {
      const std::uint32_t w = k == 0 ? first : lo + r.below(n);
      st.add();
      if (!bm.lock(w))
        continue; // locked by another thread: that word is not a source now
      const page_t p = bm.take_one(w, bm.read(w));
      bm.unlock(w);
      if (p != invalid_page)
        return p;
    }
    return bm.scan(lo + r.below(n), st);
  }
  __device__ page_t get_page() const {
    no_steps s;
    return get_page(s);
  }
};

template <class Word> using rw_bm = bitmap_allocator<rw_bm_handle<Word>, Word>;

} // namespace gpuprobe::alloc
