#pragma once
// The peer harness' protocol, the same for every allocator (bench/peers/README.md). A handle H
// is passed by value to the kernels and has
//   __device__ void *malloc(std::size_t)   nullptr when it cannot serve
//   __device__ void  free(void *)
//   static constexpr int kernel_min_blocks   (optional) the blocks of k_block threads an SM that a
//                                            kernel calling malloc is built for (__launch_bounds__)
// A cell: a fresh heap (made by the caller), brought to its state (empty, or churned to 50 %
// occupancy with mixed sizes: make_state), then measure(): one first launch on that heap, then
// timed iterations of { one malloc per thread + a write into its block | check | free }, and
// after timing one more launch whose ranges are checked on the host against each other and the
// churn's live blocks.
#include "allocators/common.cuh"
#include "allocators/hash.hpp"
#include "allocators/range_check.hpp"
#include "allocators/request_sizes.hpp"
#include "bench/bench_common.hpp"
#include "bench/peers/peers.hpp"
#include "common/stats.hpp"
#include "common/timing.cuh"
#include "common/units.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpuprobe::bench::peers {

// The malloc kernel's __launch_bounds__ blocks an SM: the handle's kernel_min_blocks where it
// states one (rw_malloc: 4), else 1, which bounds nothing (256 threads x 255 registers fit an SM).
template <class H, class = void> struct kernel_min_blocks { static constexpr int value = 1; };
template <class H> struct kernel_min_blocks<H, std::void_t<decltype(H::kernel_min_blocks)>> {
  static constexpr int value = H::kernel_min_blocks;
};

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

// Thread t's malloc of its cell's size, the tags written into its block, the block into out[t]:
// what the timed launch does and the clocked one measures.
template <class H>
__device__ __forceinline__ void malloc_one(const H &h, unsigned t, alloc::request_sizes sizes,
                                           char **out) {
  const std::uint32_t b = sizes(t);
  char *p = malloc_retrying(h, b);
  if (p)
    put_tags(p, b, t + 1); // the write into every block
  out[t] = p;
}
template <class H>
__global__ void __launch_bounds__(alloc::k_block, kernel_min_blocks<H>::value)
    malloc_and_tag(H h, unsigned n, alloc::request_sizes sizes, char **out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n)
    malloc_one(h, t, sizes, out);
}
// malloc_and_tag with a clock on each warp (--gpuprobe_peers_warp_clock): lane 0 of warp w writes
// when its malloc began (the global timer, ns) into began[w] and the SM cycles its malloc and tags
// took into cycles[w]. Which warps make a launch long: its slowest warp's chain, or warps that
// began late.
template <class H>
__global__ void __launch_bounds__(alloc::k_block, kernel_min_blocks<H>::value)
    malloc_and_clock(H h, unsigned n, alloc::request_sizes sizes, char **out,
                     unsigned long long *began, unsigned *cycles) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)); // volatile: read before the malloc
  const long long c0 = clock64();
  malloc_one(h, t, sizes, out);
  __syncwarp(__activemask());
  const long long c1 = clock64();
  if (t % 32 == 0)
    began[t / 32] = t0, cycles[t / 32] = unsigned(c1 - c0);
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

// A cell's launch over one set of arrays: one malloc per thread (with its tags), the check on the
// device, the free. measure() times it; the occupancy ladder makes it once a level.
template <class H> struct cell_launch {
  H h;
  unsigned n, blocks;
  alloc::request_sizes sizes;
  alloc::device_array<char *> out;
  alloc::device_array<unsigned long long> bad{2};

  cell_launch(H handle, const peer_cell &c)
      : h(handle), n(unsigned(c.threads)), blocks(alloc::blocks_for(n)), sizes{c.size, 0}, out(n) {
    out.zero();
  }
  void malloc() { malloc_and_tag<<<blocks, alloc::k_block>>>(h, n, sizes, out.get()); }
  void free() { free_all<<<blocks, alloc::k_block>>>(h, n, out.get()); }
  // One malloc launch with a clock on each warp (malloc_and_clock): {began ns, cycles} a warp.
  std::pair<std::vector<unsigned long long>, std::vector<unsigned>> clocked_malloc() {
    const unsigned warps = (n + 31) / 32;
    alloc::device_array<unsigned long long> began(warps);
    alloc::device_array<unsigned> cycles(warps);
    malloc_and_clock<<<blocks, alloc::k_block>>>(h, n, sizes, out.get(), began.get(), cycles.get());
    check(cudaDeviceSynchronize(), "the clocked malloc launch");
    std::pair<std::vector<unsigned long long>, std::vector<unsigned>> r{
        std::vector<unsigned long long>(warps), std::vector<unsigned>(warps)};
    began.download(r.first.data(), warps);
    cycles.download(r.second.data(), warps);
    return r;
  }
  // The launch checked on the device: {threads without memory, blocks whose tags another thread
  // overwrote}.
  std::array<unsigned long long, 2> failures() {
    bad.zero();
    check_launch<<<blocks, alloc::k_block>>>(out.get(), n, sizes, bad.get());
    std::array<unsigned long long, 2> b{};
    bad.download(b.data(), 2);
    return b;
  }
  // Launches that serve no thread load the kernels (lazy module loading), so that a first
  // launch times the heap, not the loader.
  void load_kernels() {
    malloc_and_tag<<<1, 32>>>(h, 0, sizes, out.get());
    free_all<<<1, 32>>>(h, 0, out.get());
    check_launch<<<1, 32>>>(out.get(), 0, sizes, bad.get());
    check(cudaDeviceSynchronize(), "loading the kernels");
  }
};

// ---- heap states: mixed sizes, allocated and freed over rounds, to 50 % of the heap ----

// A size's class: the power of two it rounds up to, 16 B (class 0) .. 8 KiB (class 9).
GPUPROBE_HD inline unsigned size_class(std::uint32_t bytes) {
  unsigned k = 0;
  while ((16u << k) < bytes)
    ++k;
  return k;
}
constexpr unsigned k_size_classes = 10;

__device__ inline bool coin(std::uint64_t slot, unsigned round, unsigned salt, unsigned permille) {
  return alloc::mix64(slot * 0x9e3779b97f4a7c15ull ^ (std::uint64_t(round) << 40) ^ salt) % 1000 <
         permille;
}
// One round's requests: into empty slots, each with probability permille / 1000; class_mask != 0
// only into slots of those size classes; fixed: each slot asks its own size every round (the
// class churn), else a new mixed size per round.
struct fill_plan {
  unsigned round = 0, permille = 0, class_mask = 0;
  bool fixed = false;
  GPUPROBE_HD std::uint32_t bytes(std::uint64_t slot) const {
    return alloc::request_sizes{0, fixed ? 0u : round}(slot);
  }
};
template <class H>
__global__ void churn_malloc(H h, std::uint64_t first, std::uint64_t end, fill_plan plan,
                             char **ptr, std::uint32_t *bytes, unsigned long long *refused) {
  const std::uint64_t s = first + blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  if (s >= end || ptr[s])
    return;
  const std::uint32_t b = plan.bytes(s);
  if ((plan.class_mask && !((plan.class_mask >> size_class(b)) & 1u)) ||
      !coin(s, plan.round, 1, plan.permille))
    return;
  // Asked once: a refusal here is counted (churn_refused), not asked again.
  char *p = static_cast<char *>(h.malloc(b));
  if (!p) {
    atomicAdd(refused, 1ull);
    return;
  }
  put_tags(p, b, k_churn_tag | std::uint32_t(s));
  ptr[s] = p;
  bytes[s] = b;
}
// Frees live blocks: every one of the classes in class_mask, else each with probability
// permille / 1000.
template <class H>
__global__ void churn_free(H h, std::uint64_t first, std::uint64_t end, unsigned round,
                           unsigned permille, unsigned class_mask, char **ptr,
                           const std::uint32_t *bytes) {
  const std::uint64_t s = first + blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  if (s >= end || !ptr[s])
    return;
  if (class_mask ? !((class_mask >> size_class(bytes[s])) & 1u) : !coin(s, round, 2, permille))
    return;
  h.free(ptr[s]);
  ptr[s] = nullptr;
}
// out[0]: live blocks, out[1]: their bytes, out[2]: live blocks whose tags were overwritten,
// out[3 + c]: live blocks of size class c.
constexpr unsigned k_census_counts = 3 + k_size_classes;
__global__ inline void churn_census(std::uint64_t slots, char *const *ptr,
                                    const std::uint32_t *bytes, unsigned long long *out) {
  const std::uint64_t s = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  const char *p = s < slots ? ptr[s] : nullptr;
  warp_count(&out[0], p != nullptr);
  if (p) {
    atomicAdd(&out[1], (unsigned long long)bytes[s]);
    atomicAdd(&out[3 + size_class(bytes[s])], 1ull);
    if (!tags_intact(p, bytes[s], k_churn_tag | std::uint32_t(s)))
      atomicAdd(&out[2], 1ull);
  }
}

// The live blocks of a heap state (bench/peers/README.md, "Heap states"). Slots: the heap over the
// mean mixed request (4098 B), so a fraction of the slots live is that fraction of the heap.
struct churn_state {
  using census_t = std::array<unsigned long long, k_census_counts>;
  heap_state state = heap_state::empty;
  std::uint64_t heap_bytes = 0, slots = 0;
  alloc::device_array<char *> ptr;
  alloc::device_array<std::uint32_t> bytes;
  alloc::device_array<unsigned long long> counts{k_census_counts}, refused_count{1};
  unsigned long long refused = 0; // requests refused while the state was made
  double ms = 0;                  // time of the churn's kernels

  churn_state(heap_state st, std::uint64_t heap)
      : state(st), heap_bytes(heap),
        slots(std::uint64_t(double(heap) / alloc::request_sizes{0, 0}.mean_bytes())) {
    if (slots >= (1ull << 31))
      throw std::invalid_argument("peer harness: heap too large for 2^31 churn slots");
    ptr = alloc::device_array<char *>(slots);
    bytes = alloc::device_array<std::uint32_t>(slots);
    ptr.zero();
    refused_count.zero();
  }

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
  template <class H> void fill(H h, const fill_plan &plan) {
    batches([&](std::uint64_t first, std::uint64_t end, unsigned blocks) {
      churn_malloc<<<blocks, alloc::k_block>>>(h, first, end, plan, ptr.get(), bytes.get(),
                                               refused_count.get());
    });
    refused_count.download(&refused, 1);
  }
  template <class H> void free(H h, unsigned round, unsigned permille, unsigned class_mask) {
    batches([&](std::uint64_t first, std::uint64_t end, unsigned blocks) {
      churn_free<<<blocks, alloc::k_block>>>(h, first, end, round, permille, class_mask, ptr.get(),
                                             bytes.get());
    });
  }
  // Into empty slots (of `class_mask`'s classes, or any) until `target` of the slots are live.
  template <class H> void fill_to(H h, double target, unsigned round, unsigned class_mask = 0) {
    const census_t now = census();
    double empty = double(slots - now[0]);
    if (class_mask) { // only the classes' empty slots can be filled
      empty = 0;
      for (unsigned k = 0; k < k_size_classes; ++k)
        if ((class_mask >> k) & 1u)
          empty += double(slots_of_class(k)) - double(now[3 + k]);
    }
    const double want = target * double(slots) - double(now[0]);
    if (want <= 0 || empty <= 0)
      return;
    const unsigned permille = unsigned(std::lround(std::min(1000.0, 1000.0 * want / empty)));
    fill(h, {round, permille, class_mask, state == heap_state::class_churn});
  }
  double occupancy() { return double(census()[1]) / double(heap_bytes); }

  // live blocks, their bytes, overwritten ones, live blocks per size class
  census_t census() {
    counts.zero();
    churn_census<<<alloc::blocks_for(slots), alloc::k_block>>>(slots, ptr.get(), bytes.get(),
                                                               counts.get());
    check(cudaDeviceSynchronize(), "churn census");
    census_t c{};
    counts.download(c.data(), c.size());
    return c;
  }
  // Slots whose own size is of class k (the class churn's sizes), counted once on the host.
  std::uint64_t slots_of_class(unsigned k) {
    if (class_slots_.empty()) {
      class_slots_.assign(k_size_classes, 0);
      for (std::uint64_t s = 0; s < slots; ++s)
        ++class_slots_[size_class(alloc::request_sizes{0, 0}(s))];
    }
    return class_slots_[k];
  }

private:
  std::vector<std::uint64_t> class_slots_;
};

// The churned states. Round 0 fills 60 % of the slots with mixed sizes; each of 3 rounds then
// frees about half the live blocks and allocates into empty slots until half the slots are live:
// - churn: a random half of the blocks, new sizes each round;
// - class churn: every block of whole size classes (in a random order, until half the live blocks
//   are freed), refilled with blocks of those classes only; each slot keeps its size, so a class's
//   blocks are emptied together, as a program that frees one kind of object at a time does.
template <class H> void make_state(H h, churn_state &c) {
  if (c.state == heap_state::empty)
    return;
  const bool by_class = c.state == heap_state::class_churn;
  c.fill(h, {0, 600, 0, by_class});
  for (unsigned round = 1; round <= 3; ++round) {
    unsigned mask = 0;
    if (by_class) {
      const auto now = c.census();
      std::array<unsigned, k_size_classes> order{};
      for (unsigned k = 0; k < k_size_classes; ++k)
        order[k] = k;
      std::sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
        return alloc::mix64(a * 0x9e3779b97f4a7c15ull + round) <
               alloc::mix64(b * 0x9e3779b97f4a7c15ull + round);
      });
      unsigned long long freed = 0;
      for (unsigned i = 0; i < k_size_classes && 2 * freed < now[0]; ++i) {
        mask |= 1u << order[i];
        freed += now[3 + order[i]];
      }
    }
    c.free(h, round, 500, mask);
    c.fill_to(h, 0.5, round, mask);
  }
}

// The largest occupancy at which the cell is still served: from the state, the heap is filled
// further in steps (50, 60, .. 90 % of the heap, with the state's kind of requests) and the cell's
// launch is made once at each; the ladder stops where the fill is refused, the launch is refused,
// or the launch could not fit (level + launch > 95 % of the heap).
// `cap`: the highest level tried (a peer without a safe out-of-memory path stops below where it
// faults); a level whose fill and launch took over 2 s ends the ladder (a peer that searches the
// whole heap for every refused request would take hours higher up).
enum class ladder_stop {
  top = 0,
  launch_does_not_fit = 1,
  fill_refused = 2,
  launch_refused = 3,
  too_slow = 4,
  capped = 5
};
template <class H>
void occupancy_ladder(benchmark::State &st, const peer_cell &c, H h, churn_state &s, double cap) {
  const double heap = double(c.heap_bytes);
  const double launch = double(c.threads) * (c.size ? c.size : alloc::request_sizes{}.mean_bytes());
  cell_launch<H> one(h, c);
  double served = s.occupancy();
  ladder_stop stop = ladder_stop::top;
  const double ms_before = s.ms;
  for (unsigned level = 5; level <= 9; ++level) {
    const double target = level / 10.0;
    if (target > cap + 1e-9) {
      stop = ladder_stop::capped;
      break;
    }
    if (target * heap + launch > 0.95 * heap) {
      stop = ladder_stop::launch_does_not_fit;
      break;
    }
    const auto t0 = std::chrono::steady_clock::now();
    s.fill_to(h, target, 10 + level);
    const auto now = s.census();
    const double occ = double(now[1]) / heap;
    if (double(now[0]) < (target - 0.02) * double(s.slots)) { // refusals kept the slots empty
      stop = ladder_stop::fill_refused;
      break;
    }
    one.malloc();
    const auto b = one.failures();
    if (!b[1]) // blocks that overlap are not freed (measure())
      one.free();
    if (b[0] || b[1]) {
      stop = ladder_stop::launch_refused;
      break;
    }
    served = occ;
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(2)) {
      stop = level < 9 ? ladder_stop::too_slow : ladder_stop::top;
      break;
    }
  }
  st.counters["served_to"] = served;
  st.counters["ladder_stop"] = double(int(stop));
  st.counters["ladder_ms"] = s.ms - ms_before;
}

// The ranges of the launch's blocks and of the churn's live blocks that are misaligned or overlap
// (count_bad_ranges with no bounds: where a peer's blocks lie is not known).
template <class Launch> std::uint64_t bad_ranges_after(Launch &one, churn_state *churn) {
  std::vector<char *> p(one.n);
  one.out.download(p.data(), one.n);
  std::vector<alloc::byte_range> r;
  alloc::append_ranges(r, p, one.sizes);
  if (churn) {
    std::vector<char *> q(churn->slots);
    std::vector<std::uint32_t> qb(churn->slots);
    churn->ptr.download(q.data(), q.size());
    churn->bytes.download(qb.data(), qb.size());
    alloc::append_ranges(r, q, [&](std::size_t s) { return qb[s]; });
  }
  return alloc::count_bad_ranges(std::move(r), 0, 0);
}

// The heap's size and, after a churn, what it left: occupancy, live blocks, refusals, its time.
inline void churn_counters(benchmark::State &st, const peer_cell &c, const churn_state *churn,
                           const churn_state::census_t &census) {
  st.counters["heap_GiB"] = double(c.heap_bytes) / double(k_gib);
  if (churn) {
    st.counters["occupancy"] = double(census[1]) / double(c.heap_bytes);
    st.counters["churn_live_blocks"] = double(census[0]);
    st.counters["churn_refused"] = double(churn->refused);
    st.counters["churn_ms"] = churn->ms;
  }
}

// What the churn left, said beside a cell's error (the context of an out-of-memory).
inline std::string churn_context(const peer_cell &c, const churn_state &churn,
                                 const churn_state::census_t &census) {
  return " (after the churn: " + std::to_string(census[0]) + " blocks live, " +
         format_bytes(double(census[1])) + " = " +
         std::to_string(int(std::lround(100.0 * double(census[1]) / double(c.heap_bytes)))) +
         " % of the heap; " + std::to_string(churn.refused) + " churn requests refused)";
}

// The malloc kernel as built: its registers a thread and the blocks of k_block threads an SM holds
// (what the registers leave: at 80 or fewer, 3; at 81-96, 2).
template <class H> void kernel_counters(benchmark::State &st) {
  cudaFuncAttributes a{};
  check(cudaFuncGetAttributes(&a, malloc_and_tag<H>), "the malloc kernel's attributes");
  int blocks = 0;
  check(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, malloc_and_tag<H>, alloc::k_block, 0),
      "the malloc kernel's occupancy");
  st.counters["malloc_regs"] = a.numRegs;
  st.counters["malloc_blocks_per_sm"] = blocks;
}

// The timed launches' mean free and the spread (min, max) of malloc and of free.
inline void spread_counters(benchmark::State &st, double free_sum, int iterations,
                            const std::array<double, 4> &spread) {
  st.counters["free_ms"] = iterations ? free_sum / iterations : 0.0;
  if (iterations) {
    st.counters["malloc_min_ms"] = spread[0];
    st.counters["malloc_max_ms"] = spread[1];
    st.counters["free_min_ms"] = spread[2];
    st.counters["free_max_ms"] = spread[3];
  }
}

// --gpuprobe_peers_warp_clock (else nothing): k_clocked launches (each checked and freed, untimed)
// with a clock on each warp; over all their warps, the percentiles of a warp's malloc in SM cycles
// (warp_cycles_p50, _p90, _p99, _max) and, per launch, its slowest warp's cycles and how late its
// last warp began after its first (warp_cycles_slowest, warp_start_spread_us: the launches' means).
constexpr int k_clocked = 5;
template <class H, class Checked, class Free>
void warp_clock_counters(benchmark::State &st, cell_launch<H> &one, const Checked &checked,
                         const Free &free) {
  if (!options().peers_warp_clock)
    return;
  std::vector<double> all;
  double spread_ns = 0, slowest = 0;
  for (int i = 0; i < k_clocked; ++i) {
    const auto [began, cycles] = one.clocked_malloc();
    if (!checked("clocked launch"))
      return;
    free();
    all.insert(all.end(), cycles.begin(), cycles.end());
    const auto [lo, hi] = std::minmax_element(began.begin(), began.end());
    spread_ns += double(*hi - *lo);
    slowest += double(*std::max_element(cycles.begin(), cycles.end()));
  }
  check(cudaDeviceSynchronize(), "the clocked launches' free");
  st.counters["warp_cycles_p50"] = quantile(all, 0.5);
  st.counters["warp_cycles_p90"] = quantile(all, 0.9);
  st.counters["warp_cycles_p99"] = quantile(all, 0.99);
  st.counters["warp_cycles_max"] = *std::max_element(all.begin(), all.end());
  st.counters["warp_cycles_slowest"] = slowest / k_clocked;
  st.counters["warp_start_spread_us"] = spread_ns / k_clocked * 1e-3;
}

// What the caller's heap is: where its blocks lie is not known for the peers, so only alignment
// and overlap are checked (count_bad_ranges with no bounds).
// `rewind` (untimed) runs after each free: a bump pointer's free is a rewind to the cell's state.
// Returns false when blocks overlapped (nothing may be freed after that).
template <class H>
bool measure(
    benchmark::State &st, const peer_cell &c, H h, churn_state *churn,
    const std::function<void()> &rewind = [] {}) {
  cell_launch<H> one(h, c);
  const unsigned n = one.n;
  event_timer timer;
  auto malloc_launch = [&] { one.malloc(); };
  auto free_launch = [&] { one.free(); };
  auto timed_free = [&] {
    const double ms = timer.ms(free_launch);
    rewind();
    return ms;
  };
  std::string error;
  bool sound = true; // no block overwritten by another thread: freeing is safe
  auto checked = [&](const char *when) {
    const auto b = one.failures();
    sound = sound && !b[1];
    if ((b[0] || b[1]) && error.empty())
      error = std::string(when) + ": " + std::to_string(b[0]) + " of " + std::to_string(n) +
              " threads without memory, " + std::to_string(b[1]) + " blocks overwritten";
    return error.empty();
  };
  one.load_kernels();
  // The first launch meets the heap as it was made (or churned): reported apart from the mean.
  // Blocks that overlap (an allocator's bug) are not freed: that can fault the free, and the
  // cell's heap is dropped with the cell anyway.
  const double first_malloc = timer.ms(malloc_launch);
  checked("first launch");
  const double first_free = sound ? timed_free() : 0.0;
  double free_sum = 0;
  int iterations = 0;
  // The spread over the timed launches: min and max of malloc and of free.
  std::array<double, 4> spread = {1e300, 0, 1e300, 0};
  if (error.empty())
    for (auto _ : st) {
      const double ms = timer.ms(malloc_launch);
      st.SetIterationTime(ms * 1e-3);
      const bool ok = checked("timed launch");
      if (!sound)
        break; // overlapping blocks are not freed
      const double free_ms = timed_free();
      if (!ok)
        break; // freed: device malloc's heap outlives the cell
      free_sum += free_ms, ++iterations;
      spread = {std::min(spread[0], ms), std::max(spread[1], ms), std::min(spread[2], free_ms),
                std::max(spread[3], free_ms)};
    }
  if (error.empty()) { // after timing: one more launch, its ranges checked on the host
    warp_clock_counters(st, one, checked, [&] { free_launch(), rewind(); });
    malloc_launch();
    check(cudaDeviceSynchronize(), "verification launch");
    checked("verification launch");
    const std::uint64_t bad_ranges = bad_ranges_after(one, churn);
    if (bad_ranges && error.empty())
      error = std::to_string(bad_ranges) + " ranges misaligned or overlapping";
    sound = sound && !bad_ranges;
    if (sound) {
      free_launch();
      check(cudaDeviceSynchronize(), "free after the verification launch");
    }
  }
  // What the churn left, once: live blocks, their bytes, and any whose tags a timed launch
  // overwrote (checked when the launches ran to the end).
  const auto census = churn ? churn->census() : churn_state::census_t{};
  if (census[2] && error.empty())
    error = std::to_string(census[2]) + " churn blocks overwritten by the timed launches";
  if (!error.empty()) {
    if (churn) // the context of an out-of-memory
      error += churn_context(c, *churn, census);
    st.SkipWithError(error.c_str());
    return sound;
  }
  st.counters["first_malloc_ms"] = first_malloc;
  st.counters["first_free_ms"] = first_free;
  kernel_counters<H>(st);
  spread_counters(st, free_sum, iterations, spread);
  st.counters["mallocs_per_s"] =
      benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
  churn_counters(st, c, churn, census);
  return sound;
}

// A cell of a size allocator: the heap brought to the cell's state, the cell measured, then the
// occupancy ladder up to `ladder_cap` (0: none; --gpuprobe_peers_no_ladder: none).
template <class H>
void run_size_allocator(benchmark::State &st, const peer_cell &c, H h, double ladder_cap = 0.9) {
  churn_state s(c.state, c.heap_bytes);
  make_state(h, s);
  if (!measure(st, c, h, c.state == heap_state::empty ? nullptr : &s))
    return; // blocks overlapped: nothing is freed (the heap goes with the cell)
  if (ladder_cap > 0 && options().peers_ladder && !st.error_occurred())
    occupancy_ladder(st, c, h, s, ladder_cap);
  s.free(h, 0, 1000, 0); // every block back: the device malloc heap outlives the cell
}

} // namespace gpuprobe::bench::peers
