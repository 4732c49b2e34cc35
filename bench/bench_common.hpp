#pragma once
// What the gpuprobe-bench translation units share: flags, the device heap, event timing, and one
// large allocator alive at a time.
#include "allocators/common.cuh"
#include "common/timing.cuh"

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>

namespace gpuprobe::bench {

struct flags {
  bool gpu = false;
  bool uncapped = false;  // --gpuprobe_uncapped: cuda_malloc cells past their cap
  bool full_grid = false; // --gpuprobe_full: every thread count and free fraction
  std::uint64_t tlb_scope_bytes =
      0; // TLB-scoped workloads (--gpuprobe_tuning / --gpuprobe_tlb_scope)
  std::string tlb_scope_source;
  std::uint64_t peers_heap_bytes = 0; // --gpuprobe_peers_heap (0: peers::k_default_heap_bytes)
  bool peers_ladder = true;           // --gpuprobe_peers_no_ladder: BM_peers without the ladder
  bool peers_warp_clock = false; // --gpuprobe_peers_warp_clock: BM_peers' warp_cycles_* counters
  int rw_stash_per_sm = -1;   // --gpuprobe_rw_stash=N: rw_malloc's stashes per SM (-1: its default)
  bool rw_optimistic = false; // --gpuprobe_rw_optimistic=1: rw_malloc's unread claim
  unsigned rw_refill_times = 0; // --gpuprobe_rw_refill=N: rw_malloc's refill_times (0: its default)
  unsigned rw_refill_small = 0; // --gpuprobe_rw_refill_small=N: refill_times_small (0: its default)
  unsigned rw_stash_times = 0;  // --gpuprobe_rw_stash_times=N: stash_times (0: its default)
  unsigned rw_stash_share = 0;  // --gpuprobe_rw_stash_share=N: stash_share (0: its default)
  unsigned rw_sm_slices = 0;    // --gpuprobe_rw_sm_slices=N: rw_malloc's SM slices (0: none)
  int rw_recycle_share = -1;    // --gpuprobe_rw_recycle_share=N: recycle_share (-1: its default)
  unsigned rw_recycle_ranges = 0; // --gpuprobe_rw_recycle_ranges=N: recycle_ranges (0: its default)
  int rw_bulk_max = -1;           // --gpuprobe_rw_bulk=N: rw_malloc's bulk_max (-1: its default)
  int rw_sweeps = -1;             // --gpuprobe_rw_sweeps=N: rw_malloc's sweeps (-1: its default)
  int cases_run = 0, cases_failed = 0; // a run in which every case failed exits non-zero
};
flags &options();

// rw_malloc's configuration in every case: the pool, and the stashes the flags ask for.
inline alloc::malloc_config rw_malloc_config(std::uint64_t pool_bytes) {
  alloc::malloc_config mc;
  mc.pool_bytes = pool_bytes;
  if (options().rw_stash_per_sm >= 0)
    mc.stash_per_sm = unsigned(options().rw_stash_per_sm);
  mc.optimistic = options().rw_optimistic;
  if (options().rw_refill_times)
    mc.refill_times = options().rw_refill_times;
  if (options().rw_refill_small)
    mc.refill_times_small = options().rw_refill_small;
  if (options().rw_stash_times)
    mc.stash_times = options().rw_stash_times;
  if (options().rw_stash_share)
    mc.stash_share = options().rw_stash_share;
  if (options().rw_recycle_share >= 0)
    mc.recycle_share = unsigned(options().rw_recycle_share);
  if (options().rw_recycle_ranges)
    mc.recycle_ranges = options().rw_recycle_ranges;
  if (options().rw_bulk_max >= 0)
    mc.bulk_max = unsigned(options().rw_bulk_max);
  if (options().rw_sweeps >= 0)
    mc.sweeps = unsigned(options().rw_sweeps);
  return mc;
}

// rw_malloc's tuning in every case: SM slices when --gpuprobe_rw_sm_slices asks (alloc::sm_slices),
// else none.
inline alloc::tuning rw_malloc_tuning() {
  if (options().rw_sm_slices <= 1)
    return {};
  return alloc::sm_slices(options().rw_sm_slices, alloc::current_sm_count("rw_malloc_tuning"));
}

// Device malloc heap of every cuda_malloc / xmalloc case: one size per process (the limit cannot
// change after the first malloc kernel).
// 4 GiB holds the largest case (xmalloc, 2^20 x 1 KiB coalesced into 64 KiB blocks: 2 GiB) and
// leaves the rest of the memory to the pools.
constexpr std::size_t k_heap_bytes = std::size_t(4) << 30;

inline void check(cudaError_t e, const char *what) { alloc::cuda_or_throw(e, what); }

// Times `launch` with CUDA events; `prepare` (untimed) runs before each iteration.
inline void time_iterations(benchmark::State &st, const std::function<void()> &prepare,
                            const std::function<void()> &launch) {
  event_timer timer;
  for (auto _ : st) {
    prepare();
    st.SetIterationTime(timer.ms(launch) * 1e-3);
  }
}

// One large object alive at a time, whatever its type (pools of tens of GiB): made anew when the
// key (which names the type) changes.
inline std::shared_ptr<void> &current_object() {
  static std::shared_ptr<void> obj;
  return obj;
}
inline std::string &current_key() {
  static std::string key;
  return key;
}
template <class T, class Make> T &current(const std::string &key, Make make) {
  if (current_key() != key) {
    current_object().reset();
    current_key().clear();
    current_object() = std::shared_ptr<T>(make());
    current_key() = key;
  }
  return *static_cast<T *>(current_object().get());
}

// Registers a case that reports "no CUDA device" without one and turns exceptions into errors.
void add_case(const std::string &name, std::function<void(benchmark::State &)> fn,
              int iterations = 10);

// --gpuprobe_tuning=PATH: the scope is tune's measured decision in that tuning.json. Throws
// gpuprobe::error when tune kept one pass (or the file is not a tuning).
void read_tlb_scope(const std::string &tuning);

void register_malloc_benchmarks();
void register_workload_benchmarks();
// Registered first: footprints of up to 72 GiB need the memory that the device malloc heap of a
// later cuda_malloc / xmalloc case keeps for the rest of the process.
void register_tlb_scoped_benchmarks();

} // namespace gpuprobe::bench
