#pragma once
// Baselines the RW family is judged against.
//   queue<false>  a ring of free page ids; one atomic per thread on the head (inline PTX on a
//                 per-lane address, so no compiler merges a warp's atomics: see
//                 probes/atomics/kernel.cu)
//   queue<true>   "queue_warp": the same with atomicAdd as nvcc compiles it (one per warp)
// get_page and free_page must run in different kernels (tickets are taken in order).
#include "allocators/occupancy.hpp"
#include "allocators/page_pool.cuh"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace gpuprobe::alloc {

template <bool WarpAggregated> struct queue_handle : pages_view {
  static constexpr const char *name = WarpAggregated ? "queue_warp" : "queue";
  page_t *ids;
  unsigned long long *head; // next ticket to serve
  unsigned long long *tail; // one past the last id queued
  std::uint32_t capacity;
  unsigned zero; // always 0, unknown to the compiler: makes the address per-lane
  unsigned long long head_at_launch; // for step counting: a ticket's position in this launch

  __device__ unsigned long long ticket(unsigned long long *counter) const {
    if constexpr (WarpAggregated) {
      return atomicAdd(counter, 1ull);
    } else {
      unsigned long long old;
      const unsigned long long *p = counter + (threadIdx.x & zero);
      asm volatile("atom.global.add.u64 %0, [%1], 1;" : "=l"(old) : "l"(p) : "memory");
      return old;
    }
  }
  template <class Steps> __device__ page_t get_page(Steps &st) const {
    const unsigned long long t = ticket(head);
    st.add(unsigned(t - head_at_launch + 1)); // the paper's queue steps: position in the line
    if (t < *reinterpret_cast<volatile unsigned long long *>(tail))
      return ids[t % capacity];
    atomicAdd(head, ~0ull); // give the ticket back: the queue was empty
    return invalid_page;
  }
  __device__ page_t get_page() const {
    no_steps s;
    return get_page(s);
  }
  __device__ void free_page(page_t p) const { ids[atomicAdd(tail, 1ull) % capacity] = p; }
};

template <bool WarpAggregated> class queue_alloc {
public:
  using handle_type = queue_handle<WarpAggregated>;
  explicit queue_alloc(const pool_config &c = {}) : pool_(c), ids_(c.pages), counters_(2) {
    load(std::vector<std::uint8_t>(c.pages, 0)); // all free
  }
  void prefill(std::uint64_t free_pages, std::uint64_t seed) {
    load(random_occupancy(pool_.config().pages, free_pages, seed), seed);
  }
  void load(const std::vector<std::uint8_t> &used, std::uint64_t seed = 0) {
    load_packed(free_ids(used, seed));
  }
  // The same state packed once by the caller (pack(used): the free ids, shuffled as load's).
  using packed_state = std::vector<std::uint32_t>;
  static packed_state pack(const std::vector<std::uint8_t> &used) { return free_ids(used, 0); }
  void load_packed(const packed_state &ids) {
    if (ids.size() > ids_.size())
      throw std::invalid_argument("queue load_packed: more free ids than pages");
    if (!ids.empty())
      ids_.upload(ids.data(), ids.size());
    const unsigned long long c[2] = {0, ids.size()};
    counters_.upload(c, 2);
  }
  // Back to all pages free, in O(1): valid after gets only (no frees), when the ring still holds
  // every id (the hash join's output pages are never freed).
  void rewind_after_gets() {
    const unsigned long long c[2] = {0, pool_.config().pages};
    counters_.upload(c, 2);
  }
  unsigned long long queued() const {
    unsigned long long c[2];
    counters_.download(c, 2);
    return c[1] - c[0];
  }
  handle_type handle() const {
    const auto &c = pool_.config();
    unsigned long long h[2];
    counters_.download(h, 2);
    return {{pool_.data(), c.page_bytes},
            ids_.get(),
            counters_.get(),
            counters_.get() + 1,
            c.pages,
            0u,
            h[0]};
  }
  const pool_config &config() const { return pool_.config(); }

private:
  page_pool pool_;
  device_array<page_t> ids_;
  device_array<unsigned long long> counters_;
};

using queue = queue_alloc<false>;
using queue_warp = queue_alloc<true>;

// Direct output: one atomicAdd on a bump pointer, no free.
struct bump_handle : pages_view {
  static constexpr const char *name = "bump";
  unsigned long long *next;
  page_t pages;
  template <class Steps> __device__ page_t get_page(Steps &st) const {
    st.add();
    const unsigned long long i = atomicAdd(next, 1ull);
    return i < pages ? page_t(i) : invalid_page;
  }
  __device__ page_t get_page() const {
    no_steps s;
    return get_page(s);
  }
};

class bump {
public:
  using handle_type = bump_handle;
  explicit bump(const pool_config &c = {}) : pool_(c), next_(1) { prefill(c.pages, 0); }
  void prefill(std::uint64_t free_pages, std::uint64_t) {
    const unsigned long long n = pool_.config().pages - free_pages;
    next_.upload(&n, 1);
  }
  // A bump pointer has no pattern: only the number of free pages counts (its packed state).
  void load(const std::vector<std::uint8_t> &used) { load_packed(pack(used)); }
  using packed_state = std::uint64_t;
  static packed_state pack(const std::vector<std::uint8_t> &used) {
    return std::uint64_t(std::count(used.begin(), used.end(), std::uint8_t(0)));
  }
  void load_packed(packed_state free_pages) { prefill(free_pages, 0); }
  handle_type handle() const {
    return {{pool_.data(), pool_.config().page_bytes}, next_.get(), pool_.config().pages};
  }
  const pool_config &config() const { return pool_.config(); }

private:
  page_pool pool_;
  device_array<unsigned long long> next_;
};

} // namespace gpuprobe::alloc
