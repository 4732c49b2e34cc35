#pragma once
// RW (RW paper, Alg. 1): a thread draws random page ids until it finds one whose used flag it
// can flip 0 -> 1. One 32-bit flag per page; free_page clears the flag (no contention).
#include "allocators/occupancy.hpp"
#include "allocators/page_pool.cuh"

#include <stdexcept>
#include <string>
#include <vector>

namespace gpuprobe::alloc {

struct rw_handle : pages_view {
  static constexpr const char *name = "rw";
  std::uint32_t *used;
  page_t pages;
  unsigned long long seed;
  unsigned max_random_steps;

  __device__ bool try_take(page_t p) const {
    return __ldcg(&used[p]) == 0u && atomicExch(&used[p], 1u) == 0u;
  }

  template <class Steps> __device__ page_t get_page(Steps &st) const {
    rng64 r(thread_seed(seed));
    for (unsigned k = 0; k < max_random_steps; ++k) {
      const page_t p = r.below(pages);
      st.add();
      if (try_take(p))
        return p;
    }
    const page_t start = r.below(pages); // exhaustive scan: "out of pages" only when none is free
    for (page_t i = 0; i < pages; ++i) {
      const page_t p = start + i < pages ? start + i : start + i - pages;
      st.add();
      if (try_take(p))
        return p;
    }
    return invalid_page;
  }
  __device__ page_t get_page() const {
    no_steps s;
    return get_page(s);
  }
  // The caller must own p (a page from get_page, not yet freed).
  __device__ void free_page(page_t p) const { atomicExch(&used[p], 0u); }
};

class rw {
public:
  using handle_type = rw_handle;
  explicit rw(const pool_config &c = {}) : pool_(c), used_(c.pages) { used_.zero(); }
  // Marks pages - free_pages random pages used (the rest free).
  void prefill(std::uint64_t free_pages, std::uint64_t seed) {
    load(random_occupancy(pool_.config().pages, free_pages, seed));
  }
  // Sets the state to `used` (one entry per page, 1 = used).
  void load(const std::vector<std::uint8_t> &used) { load_packed(pack(used)); }
  // The state as the device holds it (a flag per page): a caller that loads the same state many
  // times packs it once (a 2^28-page pool's flags are 1 GiB).
  using packed_state = std::vector<std::uint32_t>;
  static packed_state pack(const std::vector<std::uint8_t> &used) {
    return {used.begin(), used.end()};
  }
  void load_packed(const packed_state &flags) {
    if (flags.size() != used_.size())
      throw std::invalid_argument("rw load_packed: " + std::to_string(flags.size()) +
                                  " flags for a pool of " + std::to_string(used_.size()) +
                                  " pages");
    used_.upload(flags.data(), flags.size());
  }
  void clear() { used_.zero(); } // every page free
  std::vector<std::uint8_t> used_pattern() const {
    std::vector<std::uint32_t> flags(used_.size());
    used_.download(flags.data(), flags.size());
    return {flags.begin(), flags.end()};
  }
  handle_type handle() const {
    const auto &c = pool_.config();
    return {{pool_.data(), c.page_bytes}, used_.get(), c.pages, c.seed, c.max_random_steps};
  }
  const pool_config &config() const { return pool_.config(); }

private:
  page_pool pool_;
  device_array<std::uint32_t> used_;
};

} // namespace gpuprobe::alloc
