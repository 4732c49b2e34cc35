#pragma once
// The peer harness' protocol, the same for every allocator (bench/peers/README.md). A handle H
// is passed by value to the kernels and has
//   __device__ void *malloc(std::size_t)   nullptr when it cannot serve
//   __device__ void  free(void *)
// A cell: a fresh heap (made by the caller), optionally churned to 50 % occupancy with mixed
// sizes (churn_to_half), then measure(): one untimed-in-the-mean first launch on that heap, then
// timed iterations of { one malloc per thread + a write into its block | check | free }, and
// after timing one more launch whose ranges are checked on the host against each other and the
// churn's live blocks.
#include "allocators/common.cuh"
#include "allocators/hash.hpp"
#include "allocators/range_check.hpp"
#include "allocators/request_sizes.hpp"
#include "bench/bench_common.hpp"
#include "bench/peers/peers.hpp"
#include "common/timing.cuh"
#include "common/units.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace gpuprobe::bench::peers {

// Tags written into the first and last 4-byte word of each block: thread + 1 for a timed
// launch, this bit | slot for a churn block (slots < 2^31).
constexpr std::uint32_t k_churn_tag = 0x80000000u;

__device__ inline void put_tags(char *p, std::uint32_t bytes, std::uint32_t tag) {
  reinterpret_cast<std::uint32_t *>(p)[0] = tag; // sizes are multiples of 4
  *reinterpret_cast<std::uint32_t *>(p + bytes - 4) = tag;
}
__device__ inline bool tags_intact(const char *p, std::uint32_t bytes, std::uint32_t tag) {
  return reinterpret_cast<const std::uint32_t *>(p)[0] == tag &&
         *reinterpret_cast<const std::uint32_t *>(p + bytes - 4) == tag;
}
// A refused request is asked again up to this many times, for every allocator: Gallatin bounds its
// internal retries and can refuse under contention with memory left, and its authors' churn test
// asks again 10 times. Where a refusal means out of memory it only costs time.
constexpr int k_retries = 10;
template <class H> __device__ char *malloc_retrying(const H &h, std::uint32_t bytes) {
  char *p = static_cast<char *>(h.malloc(bytes));
  for (int r = 0; !p && r < k_retries; ++r)
    p = static_cast<char *>(h.malloc(bytes));
  return p;
}

// One count per warp instead of one atomic per thread.
__device__ inline void warp_count(unsigned long long *to, bool x) {
  const unsigned m = __ballot_sync(__activemask(), x);
  if (m && (threadIdx.x % 32) == __ffs(m) - 1)
    atomicAdd(to, (unsigned long long)__popc(m));
}

template <class H>
__global__ void malloc_and_tag(H h, unsigned n, alloc::request_sizes sizes, char **out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  const std::uint32_t b = sizes(t);
  char *p = malloc_retrying(h, b);
  if (p)
    put_tags(p, b, t + 1); // the write into every block
  out[t] = p;
}
template <class H> __global__ void free_all(H h, unsigned n, char **out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n && out[t])
    h.free(out[t]);
}
// bad[0]: threads without memory, bad[1]: blocks whose tags another thread overwrote.
__global__ inline void check_launch(char *const *out, unsigned n, alloc::request_sizes sizes,
                                    unsigned long long *bad) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const char *p = t < n ? out[t] : nullptr;
  warp_count(&bad[0], t < n && !p);
  warp_count(&bad[1], p && !tags_intact(p, sizes(t), t + 1));
}

// ---- churn: mixed sizes, allocated and freed over rounds, to 50 % of the heap ----

__device__ inline bool coin(std::uint64_t slot, unsigned round, unsigned salt, unsigned permille) {
  return alloc::mix64(slot * 0x9e3779b97f4a7c15ull ^ (std::uint64_t(round) << 40) ^ salt) % 1000 <
         permille;
}
template <class H>
__global__ void churn_malloc(H h, std::uint64_t first, std::uint64_t end, unsigned round,
                             unsigned permille, char **ptr, std::uint32_t *bytes,
                             unsigned long long *refused) {
  const std::uint64_t s = first + blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  if (s >= end || ptr[s] || !coin(s, round, 1, permille))
    return;
  const std::uint32_t b = alloc::request_sizes{0, round}(s);
  // Asked once: with 10 retries Gallatin's churn refusals were the same (5.74M, H100), and each
  // refusal then cost ten times as long.
  char *p = static_cast<char *>(h.malloc(b));
  if (!p) {
    atomicAdd(refused, 1ull);
    return;
  }
  put_tags(p, b, k_churn_tag | std::uint32_t(s));
  ptr[s] = p;
  bytes[s] = b;
}
template <class H>
__global__ void churn_free(H h, std::uint64_t first, std::uint64_t end, unsigned round,
                           unsigned permille, char **ptr) {
  const std::uint64_t s = first + blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  if (s >= end || !ptr[s] || !coin(s, round, 2, permille))
    return;
  h.free(ptr[s]);
  ptr[s] = nullptr;
}
// out[0]: live blocks, out[1]: their bytes, out[2]: live blocks whose tags were overwritten.
__global__ inline void churn_census(std::uint64_t slots, char *const *ptr,
                                    const std::uint32_t *bytes, unsigned long long *out) {
  const std::uint64_t s = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  const char *p = s < slots ? ptr[s] : nullptr;
  warp_count(&out[0], p != nullptr);
  if (p) {
    atomicAdd(&out[1], (unsigned long long)bytes[s]);
    if (!tags_intact(p, bytes[s], k_churn_tag | std::uint32_t(s)))
      atomicAdd(&out[2], 1ull);
  }
}

struct churn_state {
  std::uint64_t slots = 0;
  alloc::device_array<char *> ptr;
  alloc::device_array<std::uint32_t> bytes;
  alloc::device_array<unsigned long long> counts{3};
  unsigned long long refused = 0;
  double ms = 0; // time of the churn's kernels

  // Runs launch(first, end, blocks) over the slots in batches of at most 2^20 (the largest timed
  // launch: a peer that bounds its retries, as Gallatin does, fails spuriously under millions of
  // concurrent requests, which no cell asks of it).
  template <class F> void batches(F launch) {
    constexpr std::uint64_t batch = 1ull << 20;
    event_timer timer;
    for (std::uint64_t first = 0; first < slots; first += batch) {
      const std::uint64_t end = std::min(slots, first + batch);
      ms += timer.ms([&] { launch(first, end, alloc::blocks_for(end - first)); });
    }
  }

  // live blocks, their bytes, overwritten ones
  std::array<unsigned long long, 3> census() {
    counts.zero();
    churn_census<<<alloc::blocks_for(slots), alloc::k_block>>>(slots, ptr.get(), bytes.get(),
                                                               counts.get());
    check(cudaDeviceSynchronize(), "churn census");
    std::array<unsigned long long, 3> c{};
    counts.download(c.data(), 3);
    return c;
  }
};

// Slots: the heap over the mean mixed request (4098 B), so half the slots live is half the heap.
// Round 0 fills 60 % of them; each of 3 rounds then frees half the live blocks and allocates into
// empty slots until half the slots are live again (new sizes each round).
template <class H> void churn_to_half(H h, std::uint64_t heap_bytes, churn_state &c) {
  c.slots = std::uint64_t(double(heap_bytes) / alloc::request_sizes{0, 0}.mean_bytes());
  if (c.slots >= (1ull << 31))
    throw std::invalid_argument("peer harness: heap too large for 2^31 churn slots");
  c.ptr = alloc::device_array<char *>(c.slots);
  c.bytes = alloc::device_array<std::uint32_t>(c.slots);
  c.ptr.zero();
  alloc::device_array<unsigned long long> refused(1);
  refused.zero();
  auto mallocs = [&](unsigned round, unsigned permille) {
    c.batches([&](std::uint64_t first, std::uint64_t end, unsigned blocks) {
      churn_malloc<<<blocks, alloc::k_block>>>(h, first, end, round, permille, c.ptr.get(),
                                               c.bytes.get(), refused.get());
    });
  };
  mallocs(0, 600);
  for (unsigned round = 1; round <= 3; ++round) {
    c.batches([&](std::uint64_t first, std::uint64_t end, unsigned blocks) {
      churn_free<<<blocks, alloc::k_block>>>(h, first, end, round, 500, c.ptr.get());
    });
    const double live = double(c.census()[0]) / double(c.slots);
    mallocs(round, unsigned(std::lround(std::max(0.0, 1000.0 * (0.5 - live) / (1.0 - live)))));
  }
  refused.download(&c.refused, 1);
}

// What the caller's heap is: where its blocks lie is not known for the peers, so only alignment
// and overlap are checked (count_bad_ranges with no bounds).
// `rewind` (untimed) runs after each free: a bump pointer's free is a rewind to the cell's state.
template <class H>
void measure(
    benchmark::State &st, const peer_cell &c, H h, churn_state *churn,
    const std::function<void()> &rewind = [] {}) {
  const unsigned n = unsigned(c.threads), blocks = alloc::blocks_for(n);
  const alloc::request_sizes sizes{c.size, 0};
  alloc::device_array<char *> out(n);
  out.zero();
  alloc::device_array<unsigned long long> bad(2);
  event_timer timer;
  auto malloc_launch = [&] { malloc_and_tag<<<blocks, alloc::k_block>>>(h, n, sizes, out.get()); };
  auto free_launch = [&] { free_all<<<blocks, alloc::k_block>>>(h, n, out.get()); };
  auto timed_free = [&] {
    const double ms = timer.ms(free_launch);
    rewind();
    return ms;
  };
  std::string error;
  auto checked = [&](const char *when) {
    bad.zero();
    check_launch<<<blocks, alloc::k_block>>>(out.get(), n, sizes, bad.get());
    unsigned long long b[2] = {0, 0};
    bad.download(b, 2);
    if ((b[0] || b[1]) && error.empty())
      error = std::string(when) + ": " + std::to_string(b[0]) + " of " + std::to_string(n) +
              " threads without memory, " + std::to_string(b[1]) + " blocks overwritten";
    return error.empty();
  };
  // Launches that serve no thread load the kernels (lazy module loading), so that the first
  // launch times the heap, not the loader.
  malloc_and_tag<<<1, 32>>>(h, 0, sizes, out.get());
  free_all<<<1, 32>>>(h, 0, out.get());
  check_launch<<<1, 32>>>(out.get(), 0, sizes, bad.get());
  check(cudaDeviceSynchronize(), "loading the kernels");
  // The first launch meets the heap as it was made (or churned): reported apart from the mean.
  const double first_malloc = timer.ms(malloc_launch);
  checked("first launch");
  const double first_free = timed_free();
  double free_sum = 0;
  int iterations = 0;
  if (error.empty())
    for (auto _ : st) {
      st.SetIterationTime(timer.ms(malloc_launch) * 1e-3);
      const bool ok = checked("timed launch");
      free_sum += timed_free();
      ++iterations;
      if (!ok)
        break;
    }
  if (error.empty()) { // after timing: one more launch, its ranges checked on the host
    malloc_launch();
    check(cudaDeviceSynchronize(), "verification launch");
    checked("verification launch");
    std::vector<char *> p(n);
    out.download(p.data(), n);
    std::vector<alloc::byte_range> r;
    alloc::append_ranges(r, p, sizes);
    if (churn) {
      std::vector<char *> q(churn->slots);
      std::vector<std::uint32_t> qb(churn->slots);
      churn->ptr.download(q.data(), q.size());
      churn->bytes.download(qb.data(), qb.size());
      alloc::append_ranges(r, q, [&](std::size_t s) { return qb[s]; });
    }
    const std::uint64_t bad_ranges = alloc::count_bad_ranges(std::move(r), 0, 0);
    if (bad_ranges && error.empty())
      error = std::to_string(bad_ranges) + " ranges misaligned or overlapping";
    free_launch();
    check(cudaDeviceSynchronize(), "free after the verification launch");
  }
  // What the churn left, once: live blocks, their bytes, and any whose tags a timed launch
  // overwrote (checked when the launches ran to the end).
  const auto census = churn ? churn->census() : std::array<unsigned long long, 3>{};
  if (census[2] && error.empty())
    error = std::to_string(census[2]) + " churn blocks overwritten by the timed launches";
  if (!error.empty()) {
    if (churn) // the context of an out-of-memory
      error += " (after the churn: " + std::to_string(census[0]) + " blocks live, " +
               format_bytes(double(census[1])) + " = " +
               std::to_string(int(std::lround(100.0 * double(census[1]) / double(c.heap_bytes)))) +
               " % of the heap; " + std::to_string(churn->refused) + " churn requests refused)";
    st.SkipWithError(error.c_str());
    return;
  }
  st.counters["first_malloc_ms"] = first_malloc;
  st.counters["first_free_ms"] = first_free;
  st.counters["free_ms"] = iterations ? free_sum / iterations : 0.0;
  st.counters["mallocs_per_s"] =
      benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["heap_GiB"] = double(c.heap_bytes) / double(k_gib);
  if (churn) {
    st.counters["occupancy"] = double(census[1]) / double(c.heap_bytes);
    st.counters["churn_live_blocks"] = double(census[0]);
    st.counters["churn_refused"] = double(churn->refused);
    st.counters["churn_ms"] = churn->ms;
  }
}

// A cell of a size allocator: churned first when the cell says so.
template <class H> void run_size_allocator(benchmark::State &st, const peer_cell &c, H h) {
  if (!c.churn) {
    measure(st, c, h, nullptr);
    return;
  }
  churn_state churn;
  churn_to_half(h, c.heap_bytes, churn);
  measure(st, c, h, &churn);
  // Every churn block back: the device malloc heap outlives the cell.
  churn.batches([&](std::uint64_t first, std::uint64_t end, unsigned blocks) {
    churn_free<<<blocks, alloc::k_block>>>(h, first, end, 0, 1000, churn.ptr.get());
  });
}

} // namespace gpuprobe::bench::peers
