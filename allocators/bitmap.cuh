#pragma once
// A used-bit per page in words of 32 or 64 bits, plus a LockMap word per bitmap word (RW paper
// §IV-A). Bits are only ever set by atomicOr whose old value is checked, and cleared by
// atomicAnd, so a page is never handed out twice even where a lock is not taken.
#include "allocators/occupancy.hpp"
#include "allocators/page_pool.cuh"
#include "allocators/regions.cuh"

#include <type_traits>
#include <vector>

namespace gpuprobe::alloc {

template <class Word> struct bitmap_view {
  static_assert(std::is_same_v<Word, std::uint32_t> || std::is_same_v<Word, unsigned long long>,
                "32- or 64-bit words");
  static constexpr unsigned bits = sizeof(Word) * 8;
  Word *words;
  std::uint32_t *locks;
  std::uint32_t word_count;
  page_t pages;

  __device__ static int lowest(Word x) { // index of the lowest set bit, -1 if none
    if constexpr (bits == 32)
      return __ffs(x) - 1;
    else
      return __ffsll((long long)x) - 1;
  }
  __device__ static unsigned popcount(Word x) {
    if constexpr (bits == 32)
      return __popc(x);
    else
      return __popcll(x);
  }
  __device__ Word read(std::uint32_t w) const { return __ldcg(&words[w]); }
  // Sets the bits of `mask`; returns those that were clear before (now ours).
  __device__ Word claim(std::uint32_t w, Word mask) const {
    return mask & ~atomicOr(&words[w], mask);
  }
  // Takes one free bit of word w (lowest first), retrying on a race; invalid_page when full.
  __device__ page_t take_one(std::uint32_t w, Word seen) const {
    for (Word free = ~seen; free;) {
      const Word bit = Word(1) << lowest(free);
      const Word old = atomicOr(&words[w], bit);
      if (!(old & bit))
        return page_t(w) * bits + page_t(lowest(bit));
      free = ~(old | bit);
    }
    return invalid_page;
  }
  __device__ bool lock(std::uint32_t w) const { return atomicExch(&locks[w], 1u) == 0u; }
  __device__ void unlock(std::uint32_t w) const {
    __threadfence();
    atomicExch(&locks[w], 0u);
  }
  // Exhaustive scan from a random word: out of pages only when no word has a free bit.
  template <class Steps> __device__ page_t scan(std::uint32_t start, Steps &st) const {
    for (std::uint32_t i = 0; i < word_count; ++i) {
      const std::uint32_t w = start + i < word_count ? start + i : start + i - word_count;
      st.add();
      const page_t p = take_one(w, read(w));
      if (p != invalid_page)
        return p;
    }
    return invalid_page;
  }
  __device__ void free_page(page_t p) const {
    atomicAnd(&words[p / bits], ~(Word(1) << (p % bits)));
  }
};

// Host side: owns the words and locks.
template <class Word> class bitmap_storage {
public:
  explicit bitmap_storage(page_t pages)
      : pages_(pages), words_((std::size_t(pages) + sizeof(Word) * 8 - 1) / (sizeof(Word) * 8)),
        locks_(words_.size()) {
    load(std::vector<std::uint8_t>(pages, 0)); // all free
  }
  void prefill(std::uint64_t free_pages, std::uint64_t seed) {
    load(random_occupancy(pages_, free_pages, seed));
  }
  void load(const std::vector<std::uint8_t> &used) { load_words(pack_bitmap<Word>(used)); }
  // The state as packed words (pack_bitmap<Word> of a `used`): a caller that loads the same state
  // many times packs it once (packing 75 M pages takes ~0.27 s on the host).
  void load_words(const std::vector<Word> &w) {
    if (w.size() != words_.size())
      throw std::invalid_argument("bitmap load_words: " + std::to_string(w.size()) +
                                  " words for a bitmap of " + std::to_string(words_.size()));
    words_.upload(w.data(), w.size());
    locks_.zero();
  }
  // Every page free, on the device (pages a multiple of the word size: no tail bits to keep set).
  void clear() {
    if (pages_ % (sizeof(Word) * 8))
      throw std::invalid_argument("bitmap clear: pages must be a multiple of the word size");
    words_.zero();
    locks_.zero();
  }
  std::vector<std::uint8_t> used_pattern() const {
    std::vector<Word> w(words_.size());
    words_.download(w.data(), w.size());
    std::vector<std::uint8_t> used(pages_);
    for (std::size_t i = 0; i < pages_; ++i)
      used[i] = (w[i / (sizeof(Word) * 8)] >> (i % (sizeof(Word) * 8))) & 1;
    return used;
  }
  bitmap_view<Word> view() const {
    return {words_.get(), locks_.get(), std::uint32_t(words_.size()), pages_};
  }

private:
  page_t pages_;
  device_array<Word> words_;
  device_array<std::uint32_t> locks_;
};

// What a bitmap allocator's handle holds (RW-BM and CoRW: they differ only in how get_page
// searches) and its free_page.
template <class Word> struct bitmap_handle : pages_view {
  bitmap_view<Word> bm;
  unsigned long long seed;
  unsigned max_steps; // random words a thread (RW-BM) or rounds a warp (CoRW) tries, then a scan
  unsigned long long epoch; // differs per handle() call: rotates RW-BM's first words per launch
  region_view scope;        // TLB-scoped regions (words): random words from the SM's region first
  __device__ void free_page(page_t p) const { bm.free_page(p); }
};

// The owner of a bitmap allocator whose handle derives from bitmap_handle. A tuning
// profile's regions apply when the pool has pages to scope (page_bytes > 0); its word size is
// the Word type (with_word).
template <class Handle, class Word> class bitmap_allocator {
public:
  using handle_type = Handle;
  explicit bitmap_allocator(const pool_config &c = {}, const tuning &t = {})
      : pool_(c), bm_(c.pages), regions_(t, std::uint64_t(c.pages) * c.page_bytes,
                                         std::uint64_t(c.page_bytes) * sizeof(Word) * 8) {}
  // Marks pages - free_pages random pages used (the rest free).
  void prefill(std::uint64_t free_pages, std::uint64_t seed) { bm_.prefill(free_pages, seed); }
  // Sets the state to `used` (one entry per page, 1 = used).
  void load(const std::vector<std::uint8_t> &used) { bm_.load(used); }
  // The same state packed once by the caller (pack(used)): loading it again costs an upload.
  using packed_state = std::vector<Word>;
  static packed_state pack(const std::vector<std::uint8_t> &used) {
    return pack_bitmap<Word>(used);
  }
  void load_packed(const packed_state &w) { bm_.load_words(w); }
  std::vector<std::uint8_t> used_pattern() const { return bm_.used_pattern(); }
  void clear() { bm_.clear(); }
  handle_type handle() const {
    const auto &c = pool_.config();
    return {{{pool_.data(), c.page_bytes},
             bm_.view(),
             c.seed,
             c.max_random_steps,
             ++handles_,
             regions_.view()}};
  }
  const pool_config &config() const { return pool_.config(); }
  const region_layout &regions() const { return regions_.layout(); }

private:
  page_pool pool_;
  bitmap_storage<Word> bm_;
  region_map regions_;                     // in bitmap words
  mutable unsigned long long handles_ = 0; // one epoch per handle (per launch, in practice)
};

} // namespace gpuprobe::alloc
