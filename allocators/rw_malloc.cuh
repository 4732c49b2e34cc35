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
// sizes) are claimed as one range: the active lanes set the range's words with atomicOr,
// and a range that meets a bit set by someone else is rolled back and the region read again. After
// `max_rounds` random regions the warp scans every region (windows of 32 words, stride 16) from
// a random start: a request still unserved then gets nullptr (out of memory), unless a claim was
// rolled back during the scan (a transient claim can hide a free run): then it scans again.
//
// free(p) reads the unit's meta word: the run length of a whole-unit allocation, or a live count
// for a shared unit (tag bit 31), whose bit is cleared when its last allocation is freed.
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
  char *memory =
      nullptr; // pool_bytes of the caller's (e.g. a VMM range; not owned), else cudaMalloc'd
};

namespace detail {
constexpr std::uint32_t shared_unit = 0x80000000u;
// Bits of word w covered by units [start, start + n).
__device__ inline unsigned long long range_mask(std::uint64_t w, std::uint64_t start,
                                                std::uint64_t n) {
  const std::uint64_t lo = max(start, w * 64), hi = min(start + n, w * 64 + 64);
  const unsigned len = unsigned(hi - lo), at = unsigned(lo - w * 64);
  return (len == 64 ? ~0ull : ((1ull << len) - 1)) << at;
}
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
} // namespace detail

struct rw_malloc_handle {
  static constexpr const char *name = "rw_malloc";
  static constexpr unsigned region_words = 32;
  static constexpr std::uint32_t region_units = region_words * 64;

  char *data;
  unsigned long long *words; // bit set = unit used
  std::uint32_t *meta; // per unit: run length at a run's first unit, or shared_unit | live count
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

  // The largest request served.
  __host__ __device__ std::uint64_t max_bytes() const {
    return std::uint64_t(region_units) * unit_bytes;
  }

  __device__ void *malloc(std::size_t bytes) const {
    const unsigned active = __activemask();
    const unsigned lane = detail::lane_id();
    const bool small = bytes > 0 && bytes < unit_bytes;
    std::uint32_t need = !small && bytes > 0 && bytes <= max_bytes()
                             ? std::uint32_t((bytes + unit_bytes - 1) / unit_bytes)
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
    const std::uint64_t got = find_and_claim(active, lane, need);
    // Shared units: the first allocation of each unit writes the unit's live count.
    if (small) {
      const std::uint64_t base = __shfl_sync(small_mask, got, __ffs(int(small_mask)) - 1);
      if (base == ~0ull)
        return nullptr;
      const unsigned same = __match_any_sync(small_mask, my_unit);
      if (my_off == 0)
        meta[base + my_unit] = detail::shared_unit | unsigned(__popc(int(same)));
      __syncwarp(small_mask);
      return data + (base + my_unit) * unit_bytes + my_off;
    }
    if (got == ~0ull)
      return nullptr;
    meta[got] = need;
    return data + got * unit_bytes;
  }

  __device__ void free(void *p) const {
    if (!p)
      return;
    const std::uint64_t u = std::uint64_t(static_cast<char *>(p) - data) / unit_bytes;
    const std::uint32_t m = __ldcg(&meta[u]);
    if (m & detail::shared_unit) {
      if (atomicSub(&meta[u], 1u) == (detail::shared_unit | 1u))
        release(u, 1);
      return;
    }
    release(u, m);
  }

  // Units [start, start + n) free again.
  __device__ void release(std::uint64_t start, std::uint32_t n) const {
    for (std::uint64_t w = start / 64; w <= (start + n - 1) / 64; ++w)
      atomicAnd(&words[w], ~detail::range_mask(w, start, n));
  }

private:
  // The first unit of this lane's `need` units (~0: none found / nothing asked).
  __device__ std::uint64_t find_and_claim(unsigned active, unsigned lane,
                                          std::uint32_t need) const {
    unsigned pending = __ballot_sync(active, need > 0);
    std::uint64_t got = ~0ull;
    if (!pending)
      return got;
    const bool full = active == 0xffffffffu;
    const int leader = __ffs(int(active)) - 1;
    const unsigned rank = unsigned(__popc(int(active & ((1u << lane) - 1u)))),
                   k = unsigned(__popc(int(active)));
    rng64 r(thread_seed(seed));
    const std::uint32_t scan_start = __shfl_sync(active, r.below(word_count), leader);
    const unsigned windows = (word_count + 15) / 16;
    const std::uint32_t regions = (word_count + region_words - 1) / region_words;
    std::uint32_t lo, n;
    scope.range(regions, lo, n);
    std::uint64_t w0 = 0;
    unsigned long long epoch = 0; // rollbacks seen when the exhaustive scan began
    unsigned scans = 0;
    for (unsigned round = 0, reread = 0; pending && round < max_rounds + windows;) {
      if (round == max_rounds && reread == 0) { // the exhaustive scan begins (again)
        __threadfence();
        epoch = __shfl_sync(active, __ldcg(rollbacks), leader);
      }
      // Random regions start on a region boundary: first-fit then packs each region from its start
      // and keeps its free space in one run at its end (random word starts scatter allocations
      // and leave no long runs in a half-full pool).
      if (reread == 0) {
        w0 = round < max_rounds
                 ? std::uint64_t(lo + __shfl_sync(active, r.below(n), leader)) * region_words
                 : (scan_start + std::uint64_t(round - max_rounds) * 16) % word_count;
        if (w0 + region_words > word_count)
          w0 = word_count > region_words ? word_count - region_words : 0;
      }
      const unsigned nw = word_count - w0 < region_words ? unsigned(word_count - w0) : region_words;
      unsigned long long mine = full && lane < nw ? __ldcg(&words[w0 + lane]) : ~0ull;
      auto word = [&](unsigned j) {
        return full ? __shfl_sync(active, mine, int(j)) : __ldcg(&words[w0 + j]);
      };
      unsigned min_need = __reduce_min_sync(active, (pending >> lane) & 1u ? need : ~0u);
      bool clashed = false;
      std::uint32_t from = 0; // a part warp walks on from the last run it claimed
      while (pending) {
        // The first run that holds the smallest pending request: on a full warp in constant time
        // from the words the lanes hold (claimed units marked used), else by walking.
        const free_run fr = full ? detail::warp_first_run(mine, lane, min_need)
                                 : next_run_at_least(word, nw, from, min_need);
        if (!fr.length)
          break;
        const bool cand = ((pending >> lane) & 1u) && need <= fr.length;
        const unsigned excl = detail::warp_exclusive_sum(active, cand ? need : 0u, lane);
        const bool fits = cand && excl + need <= fr.length;
        const unsigned fit_mask = __ballot_sync(active, fits);
        const int last =
            31 - __clz(int(fit_mask)); // the first candidate always fits: fit_mask != 0
        const std::uint32_t total = __shfl_sync(active, excl + need, last);
        const std::uint64_t start = w0 * 64 + fr.start;
        if (!claim(active, rank, k, start, total)) {
          clashed = true; // the region changed under us: read it again (a few times)
          break;
        }
        if (fits)
          got = start + excl;
        if (full && lane < nw && (w0 + lane) * 64 < start + total && (w0 + lane + 1) * 64 > start)
          mine |= detail::range_mask(w0 + lane, start, total);
        from = fr.start + fr.length;
        pending &= ~fit_mask;
        min_need = __reduce_min_sync(active, (pending >> lane) & 1u ? need : ~0u);
      }
      // A run that fitted was taken by another warp meanwhile: the region may still hold others, so
      // it is read again before moving on. This keeps "out of memory" exact under contention.
      if (clashed && ++reread <= 16)
        continue;
      reread = 0;
      ++round;
      if (pending && round == max_rounds + windows && ++scans < 8) {
        // Out of memory only if no claim was undone during the scan: a transient claim hides a
        // free run from a scan that passes it, and makes "out of memory" spurious.
        __threadfence();
        if (__shfl_sync(active, __ldcg(rollbacks), leader) != epoch)
          round = max_rounds;
      }
    }
    return got;
  }

  // Sets the bits of units [start, start + n) when all were clear (the active lanes share the
  // words); otherwise leaves the bitmap as it was and returns false.
  __device__ bool claim(unsigned active, unsigned rank, unsigned k, std::uint64_t start,
                        std::uint32_t n) const {
    const std::uint64_t first = start / 64, last = (start + n - 1) / 64;
    unsigned taken = 0; // my words set in full
    bool clash = false;
    for (std::uint64_t w = first + rank; w <= last; w += k) {
      const unsigned long long m = detail::range_mask(w, start, n);
      const unsigned long long old = atomicOr(&words[w], m);
      if (old & m) { // someone else's bits: undo mine in this word, stop
        atomicAnd(&words[w], ~(m & ~old));
        clash = true;
        break;
      }
      ++taken;
    }
    if (!__any_sync(active, clash))
      return true;
    std::uint64_t w = first + rank;
    for (unsigned i = 0; i < taken; ++i, w += k)
      atomicAnd(&words[w], ~detail::range_mask(w, start, n));
    __threadfence(); // the bits are clear again before the count says a claim was undone
    if (rank == 0)
      atomicAdd(rollbacks, 1ull);
    return false;
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
    load(std::vector<unsigned long long>(words_.size(), 0), true);
    rollbacks_.zero();
  }
  std::uint64_t units() const { return cfg_.pool_bytes / cfg_.unit_bytes; }
  // Free space in holes: runs of draw(rng) units, each used with probability 1 - free_fraction.
  template <class Draw> void prefill(double free_fraction, Draw draw, std::uint64_t seed) {
    load(hole_pattern(units(), free_fraction, draw, seed), false);
  }
  // Sets the bitmap (bit set = used; bits past the last unit are forced used).
  void load(std::vector<unsigned long long> w, bool zero_meta = false) {
    if (w.size() != words_.size())
      throw std::invalid_argument("rw_malloc::load: wrong number of words");
    const std::uint64_t tail = units() % 64;
    if (tail)
      w.back() |= ~0ull << tail;
    words_.upload(w.data(), w.size());
    if (zero_meta)
      meta_.zero();
  }
  std::vector<unsigned long long> bitmap() const {
    std::vector<unsigned long long> w(words_.size());
    words_.download(w.data(), w.size());
    return w;
  }
  handle_type handle() const {
    return {data(),          words_.get(), meta_.get(),     std::uint32_t(words_.size()),
            cfg_.unit_bytes, cfg_.seed,    cfg_.max_rounds, regions_.view(),
            rollbacks_.get()};
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
    return c;
  }
  malloc_config cfg_;
  device_array<char> data_;
  device_array<unsigned long long> words_;
  device_array<std::uint32_t> meta_;
  region_map regions_;                            // in bitmap regions
  device_array<unsigned long long> rollbacks_{1}; // claims undone (rw_malloc_handle::rollbacks)
};

} // namespace gpuprobe::alloc
