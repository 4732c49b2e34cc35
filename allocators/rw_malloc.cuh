#pragma once
// RW_malloc (RW paper Alg. 4, §IV-C): malloc of any size up to one bitmap region from a pool of
// units (default 256 B), one used bit per unit in 64-bit words.
//
// A warp's active lanes allocate together. Requests smaller than a unit are packed (16-byte
// aligned, none crossing a unit) into shared units and become one request of the lowest such
// lane (one size on all such lanes: by rank, else by a walk over the lanes); each other lane asks
// for ceil(bytes / unit) units. Per round the warp reads a random region of 32 consecutive words
// (2048 units, aligned) and takes first fits: the first run that holds the smallest pending
// request (a full warp finds it in constant time, a lane per word, docs/rw-malloc.md; a part warp
// walks the runs), and the pending requests that fit it (lane order, exclusive prefix of their
// sizes) are assigned to it; once the region is assigned, a full warp claims it with one atomicOr
// a word (a lane per word: one round trip for the region; a part warp: each lane its own range),
// and a range that meets a bit set by someone else is rolled back and its lane reads the region
// again. A warp whose request a stash holds 8 times (stash_times) is first served from its warp
// slot's stash, a run claimed earlier (see rw_malloc_handle::stash; docs/rw-malloc.md); a full
// warp too large for that takes the slot's recycled ranges, those a full warp's free left there,
// when they hold its every request in lane order (rw_malloc_handle::recycle_cap, free_warp,
// serve_from_ranges). With malloc_config::optimistic (off by default: measured,
// docs/rw-malloc.md), a full warp that asks no stash claims its first region before reading it
// (claim_unread). After
// `max_rounds` random regions the warp scans every region (windows of 32 words at every 16th
// word, from a random one): a request still unserved then gets nullptr (out of memory), unless a
// stash held units (every stash is drained into the bitmap first), units are in another warp's
// hands (a slot taken and not yet given up: its run not yet served or put back, or a refill not
// yet stashed; rw_malloc_handle::mark_taken), or a claim was rolled back during the scan (a
// transient claim can hide a free run): then it scans again.
//
// A whole-unit allocation marks its run's end (rw_malloc_handle::ends: one bit a unit; the lane
// clears the bits inside its run, left by runs freed there before, and sets the bit of its last
// unit; docs/rw-malloc.md). free(p) reads the unit's meta word and the run ends at once: a shared
// unit's live count (its last free takes it to 0 and clears the unit's bit), else 0 or a whole
// run's mark (rw_malloc_handle::whole_run_mark), and then the run's length is the distance to its
// end bit. Free writes no end bit: the next run over those
// units clears what it left.
#include "allocators/common.cuh"
#include "allocators/occupancy.hpp"
#include "allocators/regions.cuh"
#include "allocators/runs.hpp"

namespace gpuprobe::alloc {

struct malloc_config {
  std::uint64_t pool_bytes = 1ull << 34; // 16 GiB
  std::uint32_t unit_bytes = 256;
  unsigned long long seed = 1;
  unsigned max_rounds = 32; // random regions before the exhaustive scan
  bool optimistic = false;  // the first region claimed unread (rw_malloc_handle::optimistic)
  // A stash refill is the first run after a warp's ranges that holds its request this many times
  // (rw_malloc_handle::refill_times; 1-16), for a warp that asks more than a unit a lane.
  unsigned refill_times = 4;
  // The same for a warp that asks at most 32 units in all (a unit a lane; rw_malloc_handle::
  // refill_times_small; 1-16): longer, since such warps meet a churned region's short runs and
  // their refills are small against a stash (docs/rw-malloc.md, measured).
  unsigned refill_times_small = 8;
  // A warp asks its slot's stash when a stash holds its request this many times (1-64;
  // rw_malloc_handle::stash_times). At 8 (4 before: measured, docs/rw-malloc.md) warps of 1 KiB
  // requests on a 32 GiB pool take recycled ranges instead; below 4, warps of 4-8 KiB use stashes.
  unsigned stash_times = 8;
  // All stashes together hold at most 1/stash_share of the pool (2-64; stash_capacity).
  unsigned stash_share = 16;
  // Stashes of claimed units per SM (0: none): a warp slot's run, taken whole by one exchange
  // (docs/rw-malloc.md). 64: one per warp slot of an SM (the most warps an SM holds).
  unsigned stash_per_sm = 64;
  // Recycling (0: off): a full warp whose free hands back its whole-unit runs in one contiguous
  // range (or up to recycle_ranges ranges of one malloc) puts them in its warp slot's empty words,
  // where the next warp of that slot takes them in one exchange; a warp's ranges hold at most
  // 1/recycle_share of the pool over the slots (1-64; rw_malloc_handle::recycle_cap;
  // docs/rw-malloc.md).
  unsigned recycle_share = 8;
  // Words a warp slot holds (1-32): a recycled warp's blocks may lie in up to this many ranges (a
  // walk after a churn hands a warp's lanes their units from several runs); the slot's stash is its
  // first word (rw_malloc_handle::recycle_ranges). Used in launches whose warps fit the warp slots
  // (rw_malloc_handle::launch_words; a larger launch uses one). 32, the default: churned 4-8 KiB
  // launches of 2^14 threads take 0.34-0.42x the time they take with 1 (docs/rw-malloc.md).
  unsigned recycle_ranges = 32;
  // The bulk pass (0: off): a full warp whose pending requests are all k units, k a power of two
  // up to bulk_max, takes the region's aligned slots of k free units in one pass
  // (rw_malloc_handle::bulk_assign) before it walks the runs (1-32, a power of two; 8: requests of
  // 256 B-2 KiB at 256 B units; docs/rw-malloc.md).
  unsigned bulk_max = 8;
  // Sweeps (0: off; 1-8): a full warp of mixed sizes whose region's first run did not hold every
  // request matches the rest to the region's words, one request a word, in constant time a sweep
  // (rw_malloc_handle::sweep_assign), before it walks the runs. Faster after a random churn, slower
  // after a churn by size class (docs/rw-malloc.md, measured): off by default.
  unsigned sweeps = 0;
  char *memory =
      nullptr; // pool_bytes of the caller's (e.g. a VMM range; not owned), else cudaMalloc'd
};

namespace detail {
using alloc::range_mask; // runs.hpp: host and device
// Exclusive prefix sum of v over the lanes of `mask` (v < 2^17).
__device__ inline unsigned warp_exclusive_sum(unsigned mask, unsigned v, unsigned lane) {
  if (mask != 0xffffffffu)
    return ballot_scan(mask, v, (1u << lane) - 1u, 17);
  unsigned s = v;
  for (unsigned d = 1; d < 32; d <<= 1) {
    const unsigned o = __shfl_up_sync(mask, s, d);
    if (lane >= d)
      s += o;
  }
  return s - v;
}
// The region's first run of at least `need` free units, all 32 lanes active, lane j holding word
// j (lanes past the region: ~0): lane_first_run (runs.hpp) on each lane, the lowest find wins.
__device__ inline free_run warp_first_run(unsigned long long mine, unsigned lane,
                                          std::uint32_t need) {
  const unsigned full_free = __ballot_sync(0xffffffffu, mine == 0);
  const unsigned after = lane == 31 ? 0u : ~full_free & (~0u << (lane + 1));
  const unsigned k = after ? unsigned(__ffs(int(after)) - 1) : 32u;
  const unsigned long long next = __shfl_sync(0xffffffffu, mine, int(k & 31));
  const free_run r = lane_first_run(mine, lane, k, next, need);
  const unsigned has = __ballot_sync(0xffffffffu, r.length > 0);
  if (!has)
    return {0, 0};
  const int w = __ffs(int(has)) - 1;
  return {__shfl_sync(0xffffffffu, r.start, w), __shfl_sync(0xffffffffu, r.length, w)};
}
// rw_malloc's sweeps (malloc_config::sweeps): sweep_lanes (runs.hpp) on a full warp. Not
// inlined, so one copy serves malloc's inlined sites and its registers are its own (BM_peers'
// malloc kernel keeps 64 registers and 4 bytes of spill stores, as without sweeps).
struct full_warp {
  __device__ unsigned ballot(bool p) const { return __ballot_sync(0xffffffffu, p); }
  __device__ std::uint64_t shfl(std::uint64_t v, unsigned src) const {
    return __shfl_sync(0xffffffffu, (unsigned long long)v, int(src));
  }
};
__device__ __noinline__ inline sweep_state sweep_words(sweep_state st, unsigned lane,
                                                       std::uint32_t need, unsigned sweeps) {
  return sweep_lanes(full_warp{}, st, lane, need, sweeps);
}

// At least `ns` nanoseconds (tests only: one __nanosleep may sleep less than it is asked).
__device__ inline void wait_ns(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)); // volatile: read now, not hoisted
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
__device__ inline unsigned warp_slot() {
  unsigned w;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(w)); // volatile: the slot the warp runs in now
  return w;
}
} // namespace detail

struct rw_malloc_handle {
  static constexpr const char *name = "rw_malloc";
  // A whole run's first unit's meta word when a warp too large for the stashes allocated it (with
  // recycle_ranges > 1; a full warp of whole-unit requests marks the first run of each range it
  // laid out, when it laid out several): this bit and the low 31 bits of the unit its first lane
  // was given (a shared unit's count never has it).
  // free_warp keeps several ranges of a warp only when their first runs carry one mark: one
  // malloc's layout.
  static constexpr std::uint32_t whole_run_mark = 0x80000000u;
  // A kernel that calls malloc is best built for 4 blocks of 256 threads an SM,
  // __launch_bounds__(256, kernel_min_blocks): unbounded, ptxas gives the inlined path 87-95
  // registers and an SM holds 2 such blocks; bounded by 3 blocks, 67 and 3 blocks; by 4, 64 and
  // one 4-byte value spilled (sm_90, CUDA 13; Build.RwMallocKernelFitsFourBlocksAnSm). The peer
  // harness builds its malloc kernel so (BM_peers' malloc_regs, malloc_blocks_per_sm;
  // docs/rw-malloc.md).
  static constexpr int kernel_min_blocks = 4;
  static constexpr unsigned region_words = 32;
  static constexpr std::uint32_t region_units = region_words * 64;

  char *data;
  unsigned long long *words; // bit set = unit used
  std::uint32_t *meta; // per unit: a shared unit's live count (>= 1), else 0 or whole_run_mark | ..
  std::uint32_t word_count;
  std::uint32_t unit_bytes;
  unsigned long long seed;
  unsigned max_rounds;
  region_view scope; // TLB-scoped regions (in bitmap regions of 32 words): random regions from the
                     // SM's first
  // Claims rolled back so far (a count only ever raised): a run a warp's scan passed while
  // another warp held it for a claim it then undid was free after all, so a scan that ends
  // unserved while this count moved is repeated.
  unsigned long long *rollbacks;
  // Stashes: runs of units claimed in the bitmap and not yet handed out, one word per warp slot
  // (stash_per_sm per SM, a warp's slot by its SM and %warpid). A warp takes its slot's run with
  // one exchange, serves its lanes from it when it holds them all, and puts the rest back; a slot
  // that two warps meet is no harm (the second finds it taken and goes on without it). Every stash
  // is drained into the bitmap before a request is refused. stash_cap = 0: none.
  unsigned long long *stash;
  std::uint32_t stash_sms, stash_per_sm, stash_cap;
  // The in-flight accounting: the exchange that takes a slot leaves `stash_taken` in it
  // until the warp puts a run back or gives the slot up, so the units in its hands (the run it
  // took, the refill it claims) stay in view: a drain leaves a taken slot alone and the warp that
  // met one scans again instead of refusing. It costs no shared counter (an earlier form counted
  // units in hand on one word: BM_peers' 16 B cells 7-36 % slower). false: the exchange leaves 0,
  // the units in a warp's hands are invisible (the race tests' control, never the allocator's).
  bool mark_taken = true;
  // Tests only: a pause (ns) while a taken stash run is in the warp's hands, to widen the window
  // the in-flight accounting closes (the race test,
  // MallocGpu.RwMallocServesWhatAWarpHoldsWhileOthersScan). 0: none.
  unsigned hold_ns = 0;
  // Run ends: bit u set when unit u is the last of a whole-unit run handed out (free's length).
  unsigned long long *ends = nullptr;
  // A full warp that asks no stash claims its first region unread (claim_unread): faster on a
  // fresh heap, slower after a churn (docs/rw-malloc.md), so off unless asked
  // (malloc_config::optimistic, gpuprobe-bench --gpuprobe_rw_optimistic=1).
  bool optimistic = false;
  // A refill is a run that holds the warp's request this many times (malloc_config::refill_times;
  // gpuprobe-bench --gpuprobe_rw_refill=N); refill_times_small for a warp that asks at most a unit
  // a lane (--gpuprobe_rw_refill_small=N; docs/rw-malloc.md).
  unsigned refill_times = 4;
  unsigned refill_times_small = 8;
  // A warp asks its slot's stash when stash_cap holds its request this many times
  // (malloc_config::stash_times; gpuprobe-bench --gpuprobe_rw_stash_times=N).
  unsigned stash_times = 8;
  // Recycling: the most units a full warp's free puts in its warp slot's words, and the largest
  // request (a warp's units) that asks its slot for them (0: no recycling; malloc_config::
  // recycle_share). A warp that asks more than a refill-sized stash holds takes the slot's ranges
  // only when they hold the warp's every request (serve_from_ranges), and else puts them back
  // untouched (no refill).
  std::uint32_t recycle_cap = 0;
  // Words a warp slot holds (malloc_config::recycle_ranges): its stash, then recycle_ranges - 1
  // words in `ranges` (slot_word); a recycled warp's ranges fill them in lane order.
  unsigned recycle_ranges = 1;
  unsigned long long *ranges = nullptr;
  // The largest k of the bulk pass (malloc_config::bulk_max; 0: none).
  unsigned bulk_max = 0;
  // Sweeps a mixed warp makes before it walks on (malloc_config::sweeps; 0: none).
  unsigned sweeps = 0;

  // The largest request served.
  __host__ __device__ std::uint64_t max_bytes() const {
    return std::uint64_t(region_units) * unit_bytes;
  }

  __device__ void *malloc(std::size_t bytes) const {
    const unsigned active = __activemask();
    const unsigned lane = detail::lane_id();
    const bool small = bytes > 0 && bytes < unit_bytes;
    std::uint32_t need = !small && bytes > 0 && bytes <= max_bytes()
                             ? (std::uint32_t(bytes) + unit_bytes - 1) >> unit_shift()
                             : 0u;
    // Small requests: packed in lane order, one request of the lowest small lane.
    const unsigned small_mask = __ballot_sync(active, small);
    std::uint32_t my_unit = 0, my_off = 0;
    if (small_mask) {
      std::uint32_t cu = 0, co = 0;
      const std::uint32_t mine16 = std::uint32_t((bytes + 15) & ~std::size_t(15));
      const std::uint32_t lo = __reduce_min_sync(active, small ? mine16 : ~0u),
                          hi = __reduce_max_sync(active, small ? mine16 : 0u);
      if (lo == hi) { // one size: unit_bytes / size requests a unit, no walk over the lanes
        const std::uint32_t per = unit_bytes / lo,
                            r = unsigned(__popc(int(small_mask & ((1u << lane) - 1u))));
        if (small)
          my_unit = r / per, my_off = (r % per) * lo;
        cu = (unsigned(__popc(int(small_mask))) - 1) / per;
      } else
        for (unsigned m = small_mask; m; m &= m - 1) {
          const unsigned src = unsigned(__ffs(int(m)) - 1);
          const std::uint32_t sz = __shfl_sync(active, mine16, int(src));
          if (co + sz > unit_bytes)
            ++cu, co = 0;
          if (src == lane)
            my_unit = cu, my_off = co;
          co += sz;
        }
      if (lane == unsigned(__ffs(int(small_mask)) - 1))
        need = cu + 1;
    }
    bool recycled = false; // a warp too large for the stashes (find_and_claim)
    const std::uint64_t got = find_and_claim(active, lane, need, recycled);
    // Shared units: the first allocation of each unit writes the unit's live count.
    if (small) {
      const std::uint64_t base = __shfl_sync(small_mask, got, __ffs(int(small_mask)) - 1);
      if (base == ~0ull)
        return nullptr;
      const unsigned same = __match_any_sync(small_mask, my_unit);
      if (my_off == 0)
        meta[base + my_unit] = unsigned(__popc(int(same)));
      __syncwarp(small_mask);
      return data + (base + my_unit) * unit_bytes + my_off;
    }
    // The run's first unit names this malloc: free_warp keeps several ranges of one malloc only.
    // A full warp of whole-unit requests marks the first run of each range (runs of consecutive
    // lanes end to end, as free_warp splits them), and only when they are several (free_warp keeps
    // one range unmarked). Another warp marks nothing: a free keeps blocks in several ranges only
    // when one full warp laid them out.
    if (recycled && launch_words() > 1 && (active & ~small_mask) == 0xffffffffu) {
      const std::uint64_t first = __shfl_sync(0xffffffffu, got, 0);
      const bool begins = begins_range(got, need, lane);
      if (__ballot_sync(0xffffffffu, begins) != 1u && begins && got != ~0ull)
        meta[got] = whole_run_mark | (std::uint32_t(first) & ~whole_run_mark);
    }
    if (got == ~0ull)
      return nullptr;
    mark_run(got, need);
    return data + got * unit_bytes;
  }

  __device__ void free(void *p) const {
    const unsigned active = __activemask();
    if (recycle_cap && active == 0xffffffffu) {
      free_warp(p);
      return;
    }
    if (!p)
      return;
    const std::uint64_t u = unit_of(p);
    if (const std::uint32_t n = freed_run(u))
      release(u, n);
  }

  // The warp slot this warp runs in (SM and %warpid): its stash word's index. (The remainders are
  // taken only where needed: each is a division, on the path to the stash's exchange.)
  __device__ std::uint32_t stash_slot() const {
    const unsigned sm = detail::sm_id(), w = detail::warp_slot();
    return (sm < stash_sms ? sm : sm % stash_sms) * stash_per_sm +
           (w < stash_per_sm ? w : w % stash_per_sm);
  }
  // log2(unit_bytes), a power of two: a shift instead of a 64-bit division.
  __device__ unsigned unit_shift() const { return unsigned(__ffs(int(unit_bytes)) - 1); }
  // Words of its slot a warp of this launch takes, and that a malloc or free of it lays ranges in:
  // recycle_ranges while the launch's warps are at most the warp slots (each warp may have a slot
  // of its own), else 1. In a larger launch the warps of later waves share each slot, its ranges
  // serve one of them, and the marks and the exchange of 32 words cost them all: at 2^20 threads
  // after a churn 8 KiB launches were 1.13-1.18x slower with 32 words (docs/rw-malloc.md).
  __device__ unsigned launch_words() const {
    if (recycle_ranges == 1)
      return 1u;
    const std::uint64_t threads =
        std::uint64_t(gridDim.x) * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
    return (threads + 31) / 32 <= std::uint64_t(stash_sms) * stash_per_sm ? recycle_ranges : 1u;
  }
  // Word j of warp slot `slot`: its stash for j = 0, else a word of `ranges` (the stashes stay one
  // dense array: 16 B-1 KiB warps touch only them).
  __device__ unsigned long long *slot_word(std::uint32_t slot, unsigned j) const {
    return j ? &ranges[std::uint64_t(slot) * (recycle_ranges - 1) + j - 1] : &stash[slot];
  }

  // A full warp's free: each lane's block as free() does, but when the lanes' blocks are whole-unit
  // runs that lie in at most recycle_ranges ranges, each range the runs of consecutive lanes one
  // after another (as a warp's malloc hands a run out, lane order), and their sum is one a warp too
  // large for the stashes may take (more than stash_cap / stash_times units, at most recycle_cap),
  // range j goes into the warp slot's word j when that word is empty, with one compare-and-swap
  // from 0, instead of into the bitmap: the units pass from the warp's blocks to the slot at once,
  // so a drain sees them in one place or the other. A range whose word is not empty goes to the
  // bitmap. Other warps pay no atomic more than free().
  __device__ void free_warp(void *p) const {
    const unsigned lane = detail::lane_id();
    const std::uint64_t u = p ? unit_of(p) : ~0ull;
    std::uint32_t mark = 0;
    const std::uint32_t n = p ? freed_run(u, &mark) : 0u;
    const std::uint32_t total = __reduce_add_sync(0xffffffffu, n);
    bool kept = false;
    if (__all_sync(0xffffffffu, n > 0) && total <= recycle_cap && stash_times * total > stash_cap) {
      const unsigned begins = __ballot_sync(0xffffffffu, begins_range(u, n, lane));
      const unsigned pieces = unsigned(__popc(int(begins)));
      bool keep = pieces == 1;
      if (!keep && pieces <= launch_words()) { // several ranges: only one malloc's (its mark)
        const std::uint32_t mark0 = __shfl_sync(0xffffffffu, mark, 0);
        const bool first = (begins >> lane) & 1u; // a range's first run carries the mark
        keep = __all_sync(0xffffffffu, !first || ((mark & whole_run_mark) && mark0 == mark));
      }
      if (keep) {
        const unsigned excl = detail::warp_exclusive_sum(0xffffffffu, n, lane);
        const unsigned upto = lane == 31 ? ~0u : (2u << lane) - 1u; // lanes 0 .. lane
        const unsigned later = begins & ~upto;                      // ranges after this lane's
        const unsigned end = __shfl_sync(0xffffffffu, excl, later ? __ffs(int(later)) - 1 : 0);
        const bool first = (begins >> lane) & 1u;
        if (first)
          kept = atomicCAS(slot_word(stash_slot(), unsigned(__popc(int(begins & upto))) - 1), 0ull,
                           stash_word(u, (later ? end : total) - excl)) == 0ull;
        kept = __shfl_sync(0xffffffffu, kept, 31 - __clz(int(begins & upto)));
      }
    }
    if (!kept && n)
      release(u, n);
  }

  // A full warp's lanes holding runs [u, u + n): whether this lane's begins a range (the runs of
  // consecutive lanes one after another), as a warp's malloc lays them out and free_warp keeps
  // them.
  __device__ static bool begins_range(std::uint64_t u, std::uint32_t n, unsigned lane) {
    const std::uint64_t prev_end = __shfl_up_sync(0xffffffffu, u + n, 1);
    return lane == 0 || prev_end != u;
  }
  // The unit block p starts at.
  __device__ std::uint64_t unit_of(const void *p) const {
    return std::uint64_t(static_cast<const char *>(p) - data) >> unit_shift();
  }
  // A free of the block at unit u, but for its whole run's bits: a shared unit's live count goes
  // down (its last free clears the unit's bit, leaving the meta word 0, as a whole run's may be)
  // and 0 comes back; else the length of the whole run that starts at u (0: none starts there, not
  // a pointer malloc returned, or freed twice). Meta and the first run-end word are read together:
  // one round trip. `mark`: the meta word as read.
  __device__ std::uint32_t freed_run(std::uint64_t u, std::uint32_t *mark = nullptr) const {
    const std::uint32_t m = __ldcg(&meta[u]);
    const unsigned long long first = __ldcg(&ends[u / 64]);
    if (mark)
      *mark = m;
    if (m && !(m & whole_run_mark)) {
      if (atomicSub(&meta[u], 1u) == 1u)
        release(u, 1);
      return 0;
    }
    return run_length_at([&](std::uint64_t j) { return j == u / 64 ? first : __ldcg(&ends[j]); },
                         word_count, u, region_units);
  }

  // The run ends of units [start, start + n), a run this lane was given: the bits of its units
  // but the last cleared (ends of runs freed there before), then the last's set. One lane's
  // atomics on one word are performed in order; no other lane writes these bits meanwhile (the
  // units are this lane's), and a free reads only the bits of its own run.
  __device__ void mark_run(std::uint64_t start, std::uint32_t n) const {
    mark_run_end(
        start, n, [&](std::uint64_t w, std::uint64_t bits) { atomicAnd(&ends[w], ~bits); },
        [&](std::uint64_t w, std::uint64_t bit) { atomicOr(&ends[w], bit); });
  }

  // Units [start, start + n) free again.
  __device__ void release(std::uint64_t start, std::uint32_t n) const {
    for (std::uint64_t w = start / 64; w <= (start + n - 1) / 64; ++w)
      atomicAnd(&words[w], ~detail::range_mask(w, start, n));
  }

private:
  // A warp's rounds: `max_rounds` random regions of its scope, each on a region boundary (first fit
  // then packs each region from its start and keeps its free space in one run at its end; random
  // word starts scatter allocations and leave no long runs in a half-full pool), then the
  // exhaustive scan's windows of 32 words at every 16th word, from a random one.
  struct round_plan {
    rng64 r;
    std::uint32_t scan_start, lo, n; // the scan's first window; the scope's regions [lo, lo + n)
  };
  // The exhaustive scan's windows start at words 0, 16, 32, ... (the last one ends at the pool's
  // end): their union is every word. (A scan from a random word stepped past words 0 .. start % 16
  // and refused requests that fitted there: RwMallocExactOutOfMemoryWhileStashRunsAreInFlight.)
  __device__ std::uint32_t scan_windows() const { return (word_count + 15) / 16; }
  __device__ round_plan plan_rounds(unsigned active, int leader) const {
    round_plan p{rng64(thread_seed(seed)), 0, 0, 0};
    p.scan_start = __shfl_sync(active, p.r.below(scan_windows()), leader);
    scope.range((word_count + region_words - 1) / region_words, p.lo, p.n);
    return p;
  }
  // Round `round`'s first word (a window that would pass the last word ends there instead).
  __device__ std::uint64_t region_at(round_plan &p, unsigned round, unsigned active,
                                     int leader) const {
    const std::uint64_t w =
        round < max_rounds
            ? std::uint64_t(p.lo + __shfl_sync(active, p.r.below(p.n), leader)) * region_words
            : (p.scan_start + std::uint64_t(round - max_rounds)) % scan_windows() * 16;
    return w + region_words > word_count
               ? (word_count > region_words ? word_count - region_words : 0)
               : w;
  }

  // The words of the region (or window) that starts at word w: 32, fewer at the pool's end.
  __device__ unsigned words_from(std::uint64_t w) const {
    return word_count - w < region_words ? unsigned(word_count - w) : region_words;
  }

  // One pass over a region, from its read to its claim (per lane).
  struct region_pass {
    std::uint64_t w0 = 0;              // the region's first word
    unsigned nw = 0;                   // its words
    unsigned long long mine = ~0ull;   // word `lane` as read, with the units assigned marked
    unsigned long long before = ~0ull; // word `lane` as read
    std::uint32_t mine_at = 0;         // this lane's assigned range (relative to the region)
    unsigned assigned = 0;             // the lanes given a range in this pass
    free_run fill{0, 0};               // the stash refill claimed with them
  };

  // The first unit of this lane's `need` units (~0: none found / nothing asked).
  __device__ std::uint64_t find_and_claim(unsigned active, unsigned lane, std::uint32_t need,
                                          bool &recycled) const {
    unsigned pending = __ballot_sync(active, need > 0);
    std::uint64_t got = ~0ull;
    if (!pending)
      return got;
    const bool full = active == 0xffffffffu;
    const int leader = __ffs(int(active)) - 1;
    // The warp slot's stash, for a request that a stash holds stash_times times: its run is taken
    // now and looked at once the first region's read is under way.
    const std::uint32_t asked = __reduce_add_sync(active, need);
    std::uint32_t slot = ~0u; // the warp slot's stash (~0: none)
    unsigned long long v = 0;
    // A warp too large for a refill-sized stash asks for recycled ranges only (recycle_cap): lane
    // j takes the slot's word j.
    const bool recycled_only = stash_times * asked > stash_cap;
    recycled = recycled_only;
    if (!recycled_only || (full && asked <= recycle_cap)) {
      slot = stash_slot();
      if (recycled_only ? lane < launch_words() : int(lane) == leader)
        v = atomicExch(slot_word(slot, recycled_only ? lane : 0u), taken_mark());
    }
    const unsigned windows = scan_windows();
    round_plan plan = plan_rounds(active, leader);
    region_pass p;
    p.w0 = region_at(plan, 0, active, leader);
    p.nw = words_from(p.w0);
    // The first region is read while the stash answers: a miss costs one round trip, not two.
    // Optimistic: a full warp with no stash to ask claims at the region's start unread
    // (claim_unread): served in one round trip where the region is free there, else the claim's
    // answers are the region read.
    if (optimistic && full && slot == ~0u) {
      if (claim_unread(p, active, lane, leader, need, got))
        return got;
    } else
      p.mine = full && lane < p.nw ? __ldcg(&words[p.w0 + lane]) : ~0ull;
    std::uint32_t refill = 0; // units a refill must hold refill_times(_small) times (0: none)
    if (slot != ~0u &&
        stash_answer(active, lane, leader, full, need, asked, recycled_only, v, slot, refill, got))
      return got;
    unsigned epoch = 0; // rollbacks seen when the exhaustive scan began (low half of the count)
    for (unsigned round = 0, reread = 0; pending && round < max_rounds + windows;) {
      if (round == max_rounds && reread == 0) // the exhaustive scan begins (again)
        epoch = begin_scan(active, lane, leader, slot, refill);
      if (round > 0 || reread > 0) { // round 0's region was read before the stash answered
        if (reread == 0)
          p.w0 = region_at(plan, round, active, leader);
        p.nw = words_from(p.w0);
        p.mine = full && lane < p.nw ? __ldcg(&words[p.w0 + lane]) : ~0ull;
      }
      p.before = p.mine;
      assign(p, active, lane, full, need, pending);
      p.fill = {0, 0};
      const bool refilling = refill && !pending && round < max_rounds; // not in a scan for the last
      if (refilling) {
        add_refill(p, lane, refill);
        refill = 0; // one try
      }
      bool fill_lost = false;
      const unsigned lost = claim_pass(p, active, lane, full, need, fill_lost);
      settle_pass(p, lane, leader, slot, lost, fill_lost, pending, got);
      if (refilling && (!p.fill.length || fill_lost)) // no refill to put in the slot: given up
        leave_slot(slot, lane, leader);
      // A run that fitted was taken by another warp meanwhile: the region may still hold others, so
      // it is read again before moving on. This keeps "out of memory" exact under contention.
      if (lost && ++reread <= 16)
        continue;
      reread = 0;
      ++round;
      // Scan again while units a stash or a warp holds may fit, or a claim was undone since the
      // scan began, with no cap (a cap of 8 let a warp refuse while such events went on). Each
      // such event is another warp's claim, refill or drain: finitely many for
      // finitely many requests.
      if (pending && round == max_rounds + windows && scan_again(active, lane, leader, epoch))
        round = max_rounds;
    }
    if (refill) // served before a refill was tried: the slot is given up
      leave_slot(slot, lane, leader);
    return got;
  }

  // The stash's answer, once the first region's read is under way: true where it served every
  // lane; else the warp goes on with a refill to try (a full warp), or without the slot (another
  // warp holds it, or a part warp gives it up now). A warp too large for the stashes asks the
  // slot's recycled ranges instead (serve_from_ranges) and goes on without the slot.
  __device__ __forceinline__ bool stash_answer(unsigned active, unsigned lane, int leader,
                                               bool full, std::uint32_t need, std::uint32_t asked,
                                               bool recycled_only, unsigned long long v,
                                               std::uint32_t &slot, std::uint32_t &refill,
                                               std::uint64_t &got) const {
    if (recycled_only) { // served from the slot's ranges, or on without the slot
      const bool served = serve_from_ranges(lane, need, v, slot, got);
      slot = ~0u;
      return served;
    }
    v = __shfl_sync(active, v, leader);
    if (v == stash_taken) { // another warp holds the slot: on without it (no refill)
      slot = ~0u;
      return false;
    }
    if (serve_from_stash(active, lane, leader, slot, v, need, asked, got))
      return true;
    if (full)
      refill = asked;
    else // a part warp takes no refill: the slot is given up now
      leave_slot(slot, lane, leader);
    return false;
  }
  // The exhaustive scan begins (again): a refill not yet tried is given up (a scan would meet its
  // slot taken); returns the rollbacks seen now (the low half of the count).
  __device__ __forceinline__ unsigned begin_scan(unsigned active, unsigned lane, int leader,
                                                 std::uint32_t slot, std::uint32_t &refill) const {
    if (refill) {
      leave_slot(slot, lane, leader);
      refill = 0;
    }
    __threadfence();
    return __shfl_sync(active, unsigned(__ldcg(rollbacks)), leader);
  }
  // The value the exchange that takes a slot leaves in it (mark_taken).
  __device__ unsigned long long taken_mark() const { return mark_taken ? stash_taken : 0ull; }
  // A slot this warp took, given up with nothing put back: empty again.
  __device__ void leave_slot(std::uint32_t slot, unsigned lane, int leader) const {
    if (int(lane) == leader)
      leave_word(&stash[slot]);
  }
  // A slot's word this lane took, given up with nothing put back.
  __device__ void leave_word(unsigned long long *w) const {
    if (mark_taken)
      atomicCAS(w, stash_taken, 0ull);
  }

  // A full warp's requests claimed at the start of the region p.w0 without reading it first (issue
  // 49): lane order, exclusive prefix of the needs, each word taken with one atomicCAS from 0 (a
  // word not wholly free is left as it was). Every word taken: every lane served (`got`), true.
  // Else the words taken are given back (the count moves, as for any undone claim) and p.mine
  // holds the region as the claim found it, for the pass that follows: false.
  __device__ bool claim_unread(region_pass &p, unsigned active, unsigned lane, int leader,
                               std::uint32_t need, std::uint64_t &got) const {
    const unsigned excl = detail::warp_exclusive_sum(active, need, lane);
    const std::uint32_t total = __shfl_sync(active, excl + need, 31);
    const bool fits = total <= p.nw * 64;
    const unsigned long long take =
        fits && lane * 64 < total ? detail::range_mask(lane, 0, total) : 0ull;
    unsigned long long old = ~0ull; // past the pool's end: used
    if (take)
      old = atomicCAS(&words[p.w0 + lane], 0ull, take);
    else if (lane < p.nw)
      old = __ldcg(&words[p.w0 + lane]);
    const bool won = take && old == 0;
    if (fits && !__any_sync(active, take && !won)) {
      got = need ? p.w0 * 64 + excl : ~0ull;
      return true;
    }
    if (won)
      atomicAnd(&words[p.w0 + lane], ~take);
    p.mine = won ? 0ull : old;
    if (__any_sync(active, won)) {
      __threadfence(); // the bits are clear again before the count says a claim was undone
      if (int(lane) == leader)
        atomicAdd(rollbacks, 1ull);
    }
    return false;
  }

  // After a pass's claim: the lanes served get their units, the lanes whose range was undone are
  // pending again (and the count moves), and a refill that held goes into the slot.
  __device__ void settle_pass(const region_pass &p, unsigned lane, int leader, std::uint32_t slot,
                              unsigned lost, bool fill_lost, unsigned &pending,
                              std::uint64_t &got) const {
    if ((p.assigned >> lane) & 1u && !((lost >> lane) & 1u))
      got = p.w0 * 64 + p.mine_at;
    if (lost || fill_lost) {
      pending |= lost;
      __threadfence(); // the bits are clear again before the count says a claim was undone
      if (int(lane) == leader)
        atomicAdd(rollbacks, 1ull);
    }
    if (p.fill.length && !fill_lost && int(lane) == leader)
      put_back(&stash[slot], p.w0 * 64 + p.fill.start, p.fill.length);
  }

  // At the end of an exhaustive scan with requests unserved: scan again when a stash held units
  // (every stash is drained into the bitmap now) or was taken (units in a warp's hands: they may
  // fit once served or put back), or a claim was undone since the scan began (a transient claim
  // hides a free run from a scan that passes it); else out of memory.
  __device__ bool scan_again(unsigned active, unsigned lane, int leader, unsigned epoch) const {
    const bool drained = (stash_cap || recycle_cap) && drain(active, lane);
    __threadfence();
    return drained || __shfl_sync(active, unsigned(__ldcg(rollbacks)), leader) != epoch;
  }

  // The stash's answer: when its run `v` holds the warp's `asked` units, every lane is served from
  // it (lane order, exclusive prefix of the needs: `got`), the rest goes back to the slot, and
  // true; else the run goes back to the bitmap.
  __device__ bool serve_from_stash(unsigned active, unsigned lane, int leader, std::uint32_t slot,
                                   unsigned long long v, std::uint32_t need, std::uint32_t asked,
                                   std::uint64_t &got) const {
    const std::uint64_t s0 = stash_start(v);
    const std::uint32_t len = stash_length(v);
    if (hold_ns && len)
      detail::wait_ns(hold_ns); // tests only (hold_ns): the run stays in this warp's hands a while
    if (len >= asked) {
      const unsigned excl = detail::warp_exclusive_sum(active, need, lane);
      if (len > asked) {
        if (int(lane) == leader)
          put_back(&stash[slot], s0 + asked, len - asked);
      } else
        leave_slot(slot, lane, leader);
      got = need ? s0 + excl : ~0ull;
      return true;
    }
    if (int(lane) == leader && len)
      give_back(s0, len);
    return false;
  }

  // A full warp too large for the stashes, lane j holding the slot's word j as its exchange found
  // it. The lanes' requests are laid end to end (lane order) over the words' ranges laid end to end
  // (word order), as the warp that freed them left them: when no request would straddle two
  // ranges and they all fit, each lane takes its place (`got`), the rest of each range goes back to
  // its word, and true. Else each word goes back as it was found: false. In constant time: two
  // prefix sums and a binary search over the ranges' ends. A word another warp holds (stash_taken)
  // is not this warp's and is left alone.
  __device__ bool serve_from_ranges(unsigned lane, std::uint32_t need, unsigned long long v,
                                    std::uint32_t slot, std::uint64_t &got) const {
    const bool mine = lane < launch_words() && v != stash_taken;
    const std::uint64_t s0 = stash_start(v);
    const std::uint32_t len = mine ? stash_length(v) : 0u;
    if (hold_ns && __any_sync(0xffffffffu, len > 0))
      detail::wait_ns(hold_ns); // tests only (hold_ns): the ranges stay in this warp's hands
    const unsigned at = detail::warp_exclusive_sum(0xffffffffu, len, lane), end = at + len;
    const unsigned excl = detail::warp_exclusive_sum(0xffffffffu, need, lane);
    const std::uint32_t asked = __shfl_sync(0xffffffffu, excl + need, 31);
    // This lane's range (each shuffle made by every lane: the search's steps are the same count).
    const unsigned j =
        range_at([&](unsigned i) { return __shfl_sync(0xffffffffu, end, int(i)); }, excl);
    const unsigned j_at = __shfl_sync(0xffffffffu, at, int(j)),
                   j_end = __shfl_sync(0xffffffffu, end, int(j));
    const std::uint64_t j_start = __shfl_sync(0xffffffffu, s0, int(j));
    // j is at most 31: a lane past the last range's end fails here.
    const bool served = __all_sync(0xffffffffu, need == 0 || excl + need <= j_end);
    // Units of this lane's word handed out: the part of [at, end) the requests cover.
    const std::uint32_t used = !served || asked <= at ? 0u : asked - at < len ? asked - at : len;
    if (mine)
      len > used ? put_back(slot_word(slot, lane), s0 + used, len - used)
                 : leave_word(slot_word(slot, lane));
    if (served && need)
      got = j_start + (excl - j_at);
    return served;
  }

  // First fits in the region for the pending requests: the first run that holds the smallest
  // pending request (on a full warp in constant time from the words the lanes hold, assigned units
  // marked used; a part warp walks on past each run), and the requests that fit it in lane order.
  __device__ void assign(region_pass &p, unsigned active, unsigned lane, bool full,
                         std::uint32_t need, unsigned &pending) const {
    auto word = [&](unsigned j) {
      return full ? __shfl_sync(active, p.mine, int(j)) : __ldcg(&words[p.w0 + j]);
    };
    unsigned min_need = __reduce_min_sync(active, (pending >> lane) & 1u ? need : ~0u);
    std::uint32_t from = 0;
    p.assigned = 0;
    if (full && bulk_max && min_need <= bulk_max && !(min_need & (min_need - 1)) &&
        __reduce_max_sync(active, (pending >> lane) & 1u ? need : 0u) == min_need) {
      bulk_assign(p, lane, min_need, pending);
      min_need = __reduce_min_sync(active, (pending >> lane) & 1u ? need : ~0u);
    }
    while (pending) {
      const free_run fr = full ? detail::warp_first_run(p.mine, lane, min_need)
                               : next_run_at_least(word, p.nw, from, min_need);
      if (!fr.length)
        break;
      const bool cand = ((pending >> lane) & 1u) && need <= fr.length;
      const unsigned excl = detail::warp_exclusive_sum(active, cand ? need : 0u, lane);
      const bool fits = cand && excl + need <= fr.length;
      const unsigned fit_mask = __ballot_sync(active, fits);
      const int last = 31 - __clz(int(fit_mask)); // the first candidate always fits: fit_mask != 0
      const std::uint32_t total = __shfl_sync(active, excl + need, last);
      if (fits)
        p.mine_at = fr.start + excl;
      if (full && lane < p.nw && lane * 64 < fr.start + total && (lane + 1) * 64 > fr.start)
        p.mine |= detail::range_mask(lane, fr.start, total);
      from = fr.start + fr.length;
      pending &= ~fit_mask;
      p.assigned |= fit_mask;
      min_need = __reduce_min_sync(active, (pending >> lane) & 1u ? need : ~0u);
      // After the first run (the only pass whose lanes are all it assigned), a warp whose pending
      // requests are of mixed sizes sweeps.
      if (full && sweeps && pending && p.assigned == fit_mask &&
          __reduce_max_sync(active, (pending >> lane) & 1u ? need : 0u) != min_need) {
        sweep_assign(p, lane, need, pending);
        min_need = __reduce_min_sync(active, (pending >> lane) & 1u ? need : ~0u);
      }
    }
  }

  // The sweeps (malloc_config::sweeps): a full warp whose requests left after the region's first
  // run are of mixed sizes matches them to words (detail::sweep_words).
  __device__ void sweep_assign(region_pass &p, unsigned lane, std::uint32_t need,
                               unsigned &pending) const {
    const sweep_state out = detail::sweep_words({p.mine, p.mine_at, pending}, lane, need, sweeps);
    p.mine = out.mine;
    p.mine_at = out.mine_at;
    p.assigned |= pending & ~out.pending;
    pending = out.pending;
  }

  // The bulk pass: a full warp whose pending lanes all ask k units (a power of two) takes the
  // region's aligned slots of k free units (aligned_slots: lane j counts word j's), the r-th
  // pending lane (lane order) the r-th slot (address order), in constant time: a prefix sum, a
  // binary search and a select. For k = 1 that is what the walk over the runs gives; for larger k
  // it skips a run's units before its first aligned slot. Lanes past the region's slots stay
  // pending for the walk.
  __device__ void bulk_assign(region_pass &p, unsigned lane, std::uint32_t k,
                              unsigned &pending) const {
    const std::uint64_t slots = lane < p.nw ? aligned_slots(p.mine, k) : 0ull;
    const unsigned count = popcount64(slots);
    const unsigned excl = detail::warp_exclusive_sum(0xffffffffu, count, lane), end = excl + count;
    const unsigned total = __shfl_sync(0xffffffffu, end, 31);
    if (!total)
      return;
    const unsigned rank = unsigned(__popc(int(pending & ((1u << lane) - 1u))));
    const bool served = ((pending >> lane) & 1u) && rank < total;
    const unsigned j = range_at([&](unsigned i) { return __shfl_sync(0xffffffffu, end, int(i)); },
                                served ? rank : 0u);
    const std::uint64_t at = __shfl_sync(0xffffffffu, slots, int(j));
    const unsigned at_excl = __shfl_sync(0xffffffffu, excl, int(j));
    if (served)
      p.mine_at = j * 64 + nth_set_bit(at, rank - at_excl);
    // Word `lane`'s slots handed out: those of ranks excl .. (pending lanes) - 1.
    const unsigned asked = unsigned(__popc(int(pending)));
    const unsigned given = asked > excl ? (asked - excl < count ? asked - excl : count) : 0u;
    p.mine |= lowest_set_bits(slots, given) * ((1ull << k) - 1);
    const unsigned took = __ballot_sync(0xffffffffu, served);
    pending &= ~took;
    p.assigned |= took;
  }

  // A refill for the stash from the same region (a full warp), claimed with the lanes' own ranges:
  // the first run after them that holds `refill` refill_times times (4 by default; 8 where the warp
  // asks at most a unit a lane: refill_times_small), or stash_cap units where that is less, taken
  // up to 16 such requests or stash_cap units (refill_want, refill_keep: runs.hpp; a shorter run
  // would be used up by the next few warps of the slot).
  __device__ void add_refill(region_pass &p, unsigned lane, std::uint32_t refill) const {
    const unsigned times = refill <= 32 ? refill_times_small : refill_times;
    p.fill = detail::warp_first_run(p.mine, lane, refill_want(refill, times, stash_cap));
    p.fill.length = refill_keep(p.fill.length, refill, times, stash_cap);
    if (p.fill.length && lane < p.nw && lane * 64 < p.fill.start + p.fill.length &&
        (lane + 1) * 64 > p.fill.start)
      p.mine |= detail::range_mask(lane, p.fill.start, p.fill.length);
  }

  // The pass's claim; returns the lanes whose range another warp took first (undone), and in
  // `fill_lost` whether the refill was. A full warp sets the bits it assigned in each word with one
  // atomicOr a word (a lane per word); every range that meets a word another warp took first is
  // undone. A part warp's lanes claim their own ranges.
  __device__ unsigned claim_pass(const region_pass &p, unsigned active, unsigned lane, bool full,
                                 std::uint32_t need, bool &fill_lost) const {
    if (!full) {
      const bool ok = !((p.assigned >> lane) & 1u) || claim(p.w0 * 64 + p.mine_at, need);
      return __ballot_sync(active, !ok);
    }
    const unsigned long long take = p.mine & ~p.before;
    const unsigned long long old = take ? atomicOr(&words[p.w0 + lane], take) : 0ull;
    const unsigned clash = __ballot_sync(active, (old & take) != 0);
    if (!clash)
      return 0;
    const unsigned lost =
        __ballot_sync(active, ((p.assigned >> lane) & 1u) && (clash & word_span(p.mine_at, need)));
    fill_lost = p.fill.length && (clash & word_span(p.fill.start, p.fill.length));
    if (old & take)
      atomicAnd(&words[p.w0 + lane], ~(take & ~old)); // the bits this warp set in a clashed word
    // The lost ranges' bits in the words that did not clash.
    for (unsigned m = lost; m; m &= m - 1) {
      const int l = __ffs(int(m)) - 1;
      undo_outside(clash, lane, p.w0, __shfl_sync(active, p.mine_at, l),
                   __shfl_sync(active, need, l));
    }
    if (fill_lost)
      undo_outside(clash, lane, p.w0, p.fill.start, p.fill.length);
    return lost;
  }

  // Units [start, start + n) back to the bitmap; the count tells a running scan that they are free.
  __device__ void give_back(std::uint64_t start, std::uint32_t n) const {
    release(start, n);
    __threadfence(); // the bits are clear before the count moves
    atomicAdd(rollbacks, 1ull);
  }
  // The rest of a run into the slot this warp took, or to the bitmap when the slot is not as the
  // warp left it (no marks: another warp filled it meanwhile).
  __device__ void put_back(unsigned long long *w, std::uint64_t start, std::uint32_t n) const {
    if (atomicCAS(w, taken_mark(), stash_word(start, n)) != taken_mark())
      give_back(start, n);
  }
  // Every stash into the bitmap (the active lanes share the slots); true when one held units or was
  // taken (a warp's units in flight: the caller scans again), or changed while it was read.
  __device__ bool drain(unsigned active, unsigned lane) const {
    const unsigned rank = unsigned(__popc(int(active & ((1u << lane) - 1u)))),
                   k = unsigned(__popc(int(active)));
    bool any = false;
    const std::uint32_t slots = stash_sms * stash_per_sm;
    for (std::uint32_t i = rank; i < slots * recycle_ranges; i += k) {
      unsigned long long *w = i < slots ? &stash[i] : &ranges[i - slots];
      const unsigned long long v = __ldcg(w);
      if (v == stash_taken) // left alone: its warp puts a run back or gives the slot up
        any = true;
      else if (v) {
        if (atomicCAS(w, v, 0ull) == v)
          give_back(stash_start(v), stash_length(v));
        any = true;
      }
    }
    return __any_sync(active, any);
  }

  // Sets the bits of units [start, start + n) when all were clear; otherwise leaves the bitmap as
  // it was and returns false (one lane, its own range: a part warp's claim).
  __device__ bool claim(std::uint64_t start, std::uint32_t n) const {
    const std::uint64_t first = start / 64, last = (start + n - 1) / 64;
    std::uint64_t w = first;
    for (; w <= last; ++w) {
      const unsigned long long m = detail::range_mask(w, start, n);
      const unsigned long long old = atomicOr(&words[w], m);
      if (old & m) { // someone else's bits: undo mine in this word and the words before
        atomicAnd(&words[w], ~(m & ~old));
        break;
      }
    }
    if (w > last)
      return true;
    for (std::uint64_t v = first; v < w; ++v)
      atomicAnd(&words[v], ~detail::range_mask(v, start, n));
    return false;
  }
  // Lane j's share of undoing units [start, start + n) of the region (relative): its word's bits,
  // unless word j clashed (there every bit this warp set is undone already).
  __device__ void undo_outside(unsigned clash, unsigned lane, std::uint64_t w0, std::uint32_t start,
                               std::uint32_t n) const {
    if (!((clash >> lane) & 1u) && lane * 64 < start + n && (lane + 1) * 64 > start)
      atomicAnd(&words[w0 + lane], ~detail::range_mask(lane, start, n));
  }
};

// Owner: the pool, the bitmap and the meta words.
class rw_malloc {
public:
  using handle_type = rw_malloc_handle;
  // A tuning profile's regions scope the random regions each SM draws (the scan still sees all).
  explicit rw_malloc(const malloc_config &c = {}, const tuning &t = {})
      : cfg_(checked(c)), data_(c.memory ? 0 : c.pool_bytes), words_((units() + 63) / 64),
        meta_(units()), regions_(t, units() * c.unit_bytes,
                                 std::uint64_t(handle_type::region_units) * c.unit_bytes) {
    load(std::vector<unsigned long long>(words_.size(), 0));
    rollbacks_.zero();
  }
  // Units a stash may hold: up to one region, and all stashes together at most 1/stash_share (16)
  // of the pool (a small pool has none).
  std::uint32_t stash_cap() const { return slot_capacity(cfg_.stash_share); }
  // Units a recycled range may hold: up to one region, all slots together at most
  // 1/recycle_share of the pool (0: recycling off, no slots, or a pool too small).
  std::uint32_t recycle_cap() const { return slot_capacity(cfg_.recycle_share); }
  std::uint64_t units() const { return cfg_.pool_bytes / cfg_.unit_bytes; }
  // Free space in holes: runs of draw(rng) units, each used with probability 1 - free_fraction.
  template <class Draw> void prefill(double free_fraction, Draw draw, std::uint64_t seed) {
    load(hole_pattern(units(), free_fraction, draw, seed));
  }
  // Sets the bitmap (bit set = used; bits past the last unit are forced used); no allocation is
  // live afterwards (meta words and run ends cleared).
  void load(std::vector<unsigned long long> w) {
    if (w.size() != words_.size())
      throw std::invalid_argument("rw_malloc::load: wrong number of words");
    const std::uint64_t tail = units() % 64;
    if (tail)
      w.back() |= ~0ull << tail;
    words_.upload(w.data(), w.size());
    stash_.zero(); // a stash's run was claimed in the bitmap this replaces
    ranges_.zero();
    meta_.zero();
    ends_.zero();
  }
  // Units held by the stashes (claimed in the bitmap, not handed out).
  std::uint64_t stashed_units() const {
    std::uint64_t n = 0;
    for (const auto v : stash_words())
      n += stash_units(v);
    return n;
  }
  // Slots left taken (stash_taken): between launches none, or a warp never gave its slot up.
  std::uint64_t taken_slots() const {
    std::uint64_t n = 0;
    for (const auto v : stash_words())
      n += v == stash_taken;
    return n;
  }
  // Units not handed out: free in the bitmap or held by a stash.
  std::uint64_t free_units() const { return count_free_units(bitmap()) + stashed_units(); }
  // Every stash's run back into the bitmap (between launches): afterwards the bitmap's free units
  // are all the free units.
  void drain_stashes() {
    auto w = bitmap();
    for (const auto v : stash_words()) {
      for (std::uint64_t u = stash_start(v); u < stash_start(v) + stash_units(v); ++u)
        w[u / 64] &= ~(1ull << (u % 64));
    }
    words_.upload(w.data(), w.size());
    stash_.zero();
    ranges_.zero();
  }
  std::vector<unsigned long long> bitmap() const {
    std::vector<unsigned long long> w(words_.size());
    words_.download(w.data(), w.size());
    return w;
  }
  handle_type handle() const {
    handle_type h{data(),           words_.get(), meta_.get(),     std::uint32_t(words_.size()),
                  cfg_.unit_bytes,  cfg_.seed,    cfg_.max_rounds, regions_.view(),
                  rollbacks_.get(), stash_.get(), stash_sms_,      cfg_.stash_per_sm,
                  stash_cap()};
    h.optimistic = cfg_.optimistic;
    h.ends = ends_.get();
    h.refill_times = cfg_.refill_times;
    h.refill_times_small = cfg_.refill_times_small;
    h.stash_times = cfg_.stash_times;
    h.recycle_cap = recycle_cap();
    h.recycle_ranges = cfg_.recycle_ranges;
    h.ranges = ranges_.get();
    h.bulk_max = cfg_.bulk_max;
    h.sweeps = cfg_.sweeps;
    return h;
  }
  const malloc_config &config() const { return cfg_; }
  const region_layout &regions() const { return regions_.layout(); }
  char *data() const { return cfg_.memory ? cfg_.memory : data_.get(); }
  std::uint64_t pool_bytes() const { return units() * cfg_.unit_bytes; }

private:
  static const malloc_config &checked(const malloc_config &c) {
    if (c.unit_bytes < 16 || (c.unit_bytes & (c.unit_bytes - 1)))
      throw std::invalid_argument("rw_malloc: unit_bytes must be a power of two >= 16");
    if (c.pool_bytes < c.unit_bytes || c.pool_bytes / c.unit_bytes / 64 >= (1ull << 32))
      throw std::invalid_argument("rw_malloc: pool_bytes must hold 1 .. 2^38 units");
    if (c.refill_times < 1 || c.refill_times > 16 || c.refill_times_small < 1 ||
        c.refill_times_small > 16)
      throw std::invalid_argument("rw_malloc: refill_times and refill_times_small must be 1 .. 16");
    if (c.stash_times < 1 || c.stash_times > 64 || c.stash_share < 2 || c.stash_share > 64)
      throw std::invalid_argument("rw_malloc: stash_times must be 1 .. 64, stash_share 2 .. 64");
    if (c.recycle_share > 64)
      throw std::invalid_argument("rw_malloc: recycle_share must be 0 (off) .. 64");
    if (c.recycle_ranges < 1 || c.recycle_ranges > 32)
      throw std::invalid_argument("rw_malloc: recycle_ranges must be 1 .. 32");
    if (c.bulk_max > 32 || (c.bulk_max & (c.bulk_max - 1)))
      throw std::invalid_argument("rw_malloc: bulk_max must be 0 (off) or a power of two .. 32");
    if (c.sweeps > 8)
      throw std::invalid_argument("rw_malloc: sweeps must be 0 (off) .. 8");
    return c;
  }
  // What a slot may hold when all slots together hold at most 1/share of the pool (share 0: 0).
  std::uint32_t slot_capacity(unsigned share) const {
    return stash_capacity(units(), std::uint64_t(stash_sms_) * cfg_.stash_per_sm,
                          handle_type::region_units, share);
  }
  // Every slot's words: the stashes, then the ranges' words.
  std::vector<unsigned long long> stash_words() const {
    std::vector<unsigned long long> v(stash_.size() + ranges_.size());
    stash_.download(v.data(), stash_.size());
    ranges_.download(v.data() + stash_.size(), ranges_.size());
    return v;
  }
  malloc_config cfg_;
  device_array<char> data_;
  device_array<unsigned long long> words_;
  device_array<std::uint32_t> meta_;
  region_map regions_;                                   // in bitmap regions
  device_array<unsigned long long> ends_{words_.size()}; // run ends (rw_malloc_handle::ends)
  device_array<unsigned long long> rollbacks_{1}; // claims undone (rw_malloc_handle::rollbacks)
  std::uint32_t stash_sms_ = current_sm_count("rw_malloc");
  // One word a warp slot (+1: never an empty array when stash_per_sm is 0), and its
  // recycle_ranges - 1 other words (rw_malloc_handle::slot_word).
  device_array<unsigned long long> stash_{std::size_t(stash_sms_) * cfg_.stash_per_sm + 1};
  device_array<unsigned long long> ranges_{
      std::size_t(stash_sms_) * cfg_.stash_per_sm * (cfg_.recycle_ranges - 1) + 1};
};

} // namespace gpuprobe::alloc
