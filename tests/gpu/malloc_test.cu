// Size allocators (rw_malloc, ouroboros_page/chunk, xmalloc) on a real GPU: >= 10^7 mixed-size
// allocations whose ranges are checked (inside the pool, 16-byte aligned, disjoint from every live
// one, their bytes untouched by others until freed), exact out-of-memory behaviour, the
// signature behaviours of the baselines, and RW_malloc's memory utilization. The MallocSmall
// cases are also run under compute-sanitizer (MallocSanitizer).
#include "allocators/allocators.cuh"
#include "allocators/range_check.hpp"
#include "allocators/request_sizes.hpp"
#include "gpu_test_util.hpp"
#include "tests/common/region_words.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <vector>

using namespace gpuprobe;
using gpuprobe::test::sync_or_throw;

namespace {

__device__ std::uint32_t tag_of(unsigned t, unsigned round) {
  return (t * 2654435761u) ^ (round * 0x9e3779b9u) ^ 0x5bd1e995u;
}

// Threads without an allocation ask for sizes(t); each marks its first and last word.
template <class H>
__global__ void hold_kernel(H h, unsigned n, alloc::request_sizes sizes, char **ptr,
                            std::uint32_t *size, unsigned round, unsigned long long *counters) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n || ptr[t])
    return;
  const std::uint32_t s = sizes(t);
  auto *p = static_cast<std::uint32_t *>(h.malloc(s));
  if (!p) {
    atomicAdd(&counters[1], 1ull); // out of memory
    return;
  }
  p[0] = tag_of(t, round);
  p[s / 4 - 1] = tag_of(t, round);
  ptr[t] = reinterpret_cast<char *>(p);
  size[t] = s | (round << 16);
  atomicAdd(&counters[2], 1ull); // allocations
}

// About half of the holders (all: every one) check their marks and free.
template <class H>
__global__ void release_kernel(H h, unsigned n, char **ptr, std::uint32_t *size, unsigned round,
                               bool all, unsigned long long *counters) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n || !ptr[t])
    return;
  if (!all && (((t * 2654435761u) ^ (round * 40503u)) >> 9 & 1u) == 0u)
    return;
  const auto *p = reinterpret_cast<const std::uint32_t *>(ptr[t]);
  const std::uint32_t s = size[t] & 0xffffu, r = size[t] >> 16;
  if (p[0] != tag_of(t, r) || p[s / 4 - 1] != tag_of(t, r))
    atomicAdd(&counters[0], 1ull); // overwritten
  h.free(ptr[t]);
  ptr[t] = nullptr;
}

struct malloc_churn_result {
  unsigned long long overwritten = 0, out_of_memory = 0, allocations = 0, range_errors = 0;
};

// Live ranges inside [lo, lo + bytes) (bytes 0: not checked), 16-byte aligned, disjoint.
unsigned long long check_ranges(const std::vector<char *> &p, const std::vector<std::uint32_t> &s,
                                const char *lo, std::uint64_t bytes) {
  std::vector<alloc::byte_range> r;
  alloc::append_ranges(r, p, [&](std::size_t i) { return s[i] & 0xffffu; });
  return alloc::count_bad_ranges(std::move(r), reinterpret_cast<std::uintptr_t>(lo), bytes);
}

template <class H>
malloc_churn_result churn(H h, unsigned n, unsigned rounds, alloc::request_sizes sizes, const char *lo,
                   std::uint64_t bytes, unsigned check_every = 1) {
  alloc::device_array<char *> ptr(n);
  alloc::device_array<std::uint32_t> size(n);
  alloc::device_array<unsigned long long> counters(3);
  ptr.zero();
  size.zero(); // read back whole, written only where an allocation succeeded
  counters.zero();
  unsigned long long range_errors = 0;
  std::vector<char *> hp(n);
  std::vector<std::uint32_t> hs(n);
  const unsigned blocks = alloc::blocks_for(n);
  for (unsigned r = 0; r < rounds; ++r) {
    sizes.round = r;
    hold_kernel<<<blocks, alloc::k_block>>>(h, n, sizes, ptr.get(), size.get(), r, counters.get());
    sync_or_throw();
    if (r % check_every == 0 || r + 1 == rounds) { // the live ranges, on the host
      ptr.download(hp.data(), n);
      size.download(hs.data(), n);
      range_errors += check_ranges(hp, hs, lo, bytes);
    }
    release_kernel<<<blocks, alloc::k_block>>>(h, n, ptr.get(), size.get(), r, r + 1 == rounds,
                                               counters.get());
    sync_or_throw();
  }
  unsigned long long v[3];
  counters.download(v, 3);
  return {v[0], v[1], v[2], range_errors}; // overwritten, out of memory, allocations
}

// rw_malloc's defaults on a pool of `bytes` (recycle_ranges: words a warp slot holds).
alloc::malloc_config rw_cfg(std::uint64_t bytes,
                            unsigned recycle_ranges = alloc::malloc_config{}.recycle_ranges) {
  alloc::malloc_config c;
  c.pool_bytes = bytes;
  c.recycle_ranges = recycle_ranges;
  return c;
}
alloc::ouroboros_config ouro_cfg(std::uint64_t bytes, bool virt = false) {
  alloc::ouroboros_config c;
  c.pool_bytes = bytes;
  c.virtualized = virt;
  return c;
}

void expect_clean(const malloc_churn_result &c, unsigned long long min_allocations, const char *name) {
  std::printf("%s: %llu allocations, %llu range errors, %llu overwritten, %llu out of memory\n",
              name, c.allocations, c.range_errors, c.overwritten, c.out_of_memory);
  EXPECT_GE(c.allocations, min_allocations);
  EXPECT_EQ(c.range_errors, 0u);
  EXPECT_EQ(c.overwritten, 0u);
  EXPECT_EQ(c.out_of_memory, 0u);
}

// Every unit free, then 4 KiB requests from 4096 more threads than fit: exactly the fitting ones
// served, the ranges in the pool and unmarked, and every unit free again after.
void expect_exact_fill(alloc::rw_malloc &a, const char *name) {
  EXPECT_EQ(a.free_units(), a.units()) << "units lost (free in the bitmap + stashed)";
  const unsigned fit = unsigned(a.units() / 16), extra = 4096;
  const auto f = churn(a.handle(), fit + extra, 1, {4096, 0}, a.data(), a.pool_bytes());
  std::printf("%s, fill: %llu of %u fitting 4 KiB requests served, %llu refused\n", name,
              f.allocations, fit, f.out_of_memory);
  EXPECT_EQ(f.allocations, fit) << "exact out of memory";
  EXPECT_EQ(f.out_of_memory, extra);
  EXPECT_EQ(f.range_errors + f.overwritten, 0u);
  EXPECT_EQ(a.free_units(), a.units());
}

// 2^19 threads, 40 rounds: 2^19 + 39 * ~2^18 = ~1.07e7 mixed allocations (4..8192 B).
constexpr unsigned k_threads = 1u << 19, k_rounds = 40;

} // namespace

TEST(MallocGpu, RwMallocTenMillionMixedDisjoint) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(rw_cfg(8ull << 30)); // live ~2^19 x 4 KiB = 2 GiB of 8
  expect_clean(churn(a.handle(), k_threads, k_rounds, {}, a.data(), a.pool_bytes()), 10'000'000,
               "rw_malloc");
  EXPECT_EQ(a.free_units(), a.units()) << "every unit free again after all frees";
}

TEST(MallocGpu, OuroborosPageTenMillionMixedDisjoint) {
  GPUPROBE_REQUIRE_GPU();
  alloc::ouroboros_page a(ouro_cfg(16ull << 30));
  expect_clean(churn(a.handle(), k_threads, k_rounds, {}, a.data(), a.pool_bytes()), 10'000'000,
               "ouroboros_page");
}

TEST(MallocGpu, OuroborosChunkTenMillionMixedDisjoint) {
  GPUPROBE_REQUIRE_GPU();
  alloc::ouroboros_chunk a(ouro_cfg(16ull << 30)); // its queue walks are slow: 20 rounds, ~5.5e6
  expect_clean(churn(a.handle(), k_threads, 20, {}, a.data(), a.pool_bytes()), 5'000'000,
               "ouroboros_chunk");
}

TEST(MallocGpu, OuroborosVirtualizedQueuesMixedDisjoint) {
  GPUPROBE_REQUIRE_GPU();
  alloc::ouroboros_page a(ouro_cfg(16ull << 30, true));
  expect_clean(churn(a.handle(), k_threads, 10, {}, a.data(), a.pool_bytes()), 2'500'000,
               "ouroboros_page virtualized");
}

TEST(MallocGpu, XmallocMixedDisjoint) {
  GPUPROBE_REQUIRE_GPU();
  GPUPROBE_IN_FRESH_PROCESS(); // its own device malloc heap
  alloc::xmalloc a;
  expect_clean(churn(a.handle(), k_threads, 10, {}, nullptr, 0), 2'500'000, "xmalloc");
}

// Small pools (these also run under compute-sanitizer).
TEST(MallocGpu, MallocSmallRwExactOutOfMemoryAndReuse) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(
      rw_cfg(256 * 1000)); // 1000 units of 256 B: the last word is partly past the end
  for (unsigned pass = 0; pass < 2; ++pass) {
    const auto c = churn(a.handle(), 1200, 1, {256, 0}, a.data(), a.pool_bytes());
    EXPECT_EQ(c.allocations, 1000u) << "exactly one per unit";
    EXPECT_EQ(c.out_of_memory, 200u);
    EXPECT_EQ(c.range_errors + c.overwritten, 0u);
  }
  // 1050 B = 5 units: 200 fit exactly.
  const auto c = churn(a.handle(), 300, 1, {1050, 0}, a.data(), a.pool_bytes());
  EXPECT_EQ(c.allocations, 200u);
  EXPECT_EQ(c.range_errors + c.overwritten, 0u);
  EXPECT_EQ(a.free_units(), 1000u);
}

// A fill while the warp slots' stashes hold runs. 16-byte requests leave runs in the
// stashes (a warp that finds its stash short takes a run beside its own range); all freed, the
// pool is asked for one-unit requests (256 B: any free unit fits one, so placement cannot strand
// a unit) from more threads than there are units: every unit is served, because every stash is
// drained into the bitmap before a refusal, and the rest are refused. The warm-up is `launches`
// launches of full warps, each freed whole. Where an SM's warps share one slot, one warp at a time
// has it (the others go on without it), and that warp's refill loses its words to the warps that
// read the same region and, with no refill to find, claim before it: on a 16 MiB pool (32 regions)
// 2^14 threads left every slot empty (r113, r114), so the small pool warms with few warps a launch.
void stashes_drained_before_refusal(alloc::rw_malloc &a, unsigned warm_threads, int launches) {
  ASSERT_GE(a.handle().stash_cap, a.handle().stash_times * 2)
      << "a stash that a warp of 16 B requests (2 units) asks";
  for (int k = 0; k < launches; ++k) {
    const auto warm = churn(a.handle(), warm_threads, 1, {16, 0}, a.data(), a.pool_bytes());
    EXPECT_EQ(warm.range_errors + warm.overwritten + warm.out_of_memory, 0u);
  }
  const std::uint64_t held = a.stashed_units();
  EXPECT_EQ(a.free_units(), a.units()) << "units lost (free in the bitmap + stashed)";
  const unsigned fit = unsigned(a.units()), extra = 4096;
  const auto f = churn(a.handle(), fit + extra, 1, {256, 0}, a.data(), a.pool_bytes());
  std::printf("rw_malloc, %llu units stashed before the fill (cap %u a stash): %llu of %u fitting "
              "256 B requests served, %llu refused\n",
              static_cast<unsigned long long>(held), a.handle().stash_cap, f.allocations, fit,
              f.out_of_memory);
  EXPECT_GT(held, 0u) << "the stashes held runs when the fill began";
  EXPECT_EQ(f.allocations, fit) << "exact out of memory with stashes";
  EXPECT_EQ(f.out_of_memory, extra);
  EXPECT_EQ(f.range_errors + f.overwritten, 0u);
  const std::uint64_t before = a.free_units();
  a.drain_stashes();
  EXPECT_EQ(alloc::count_free_units(a.bitmap()), before)
      << "a stash's run was not held in the bitmap";
  EXPECT_EQ(before, a.units());
}
// A small pool with one stash per SM (so that a stash holds 4 times a warp's 2 units of 16 B
// requests; this one runs under compute-sanitizer too), and the default configuration on 1 GiB.
TEST(MallocGpu, MallocSmallRwStashesDrainedBeforeRefusal) {
  GPUPROBE_REQUIRE_GPU();
  alloc::malloc_config c = rw_cfg(16u << 20);
  c.stash_per_sm = 1;
  alloc::rw_malloc a(c);
  stashes_drained_before_refusal(a, 1u << 10, 8);
}
TEST(MallocGpu, RwMallocStashesDrainedBeforeRefusal) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(rw_cfg(1ull << 30));
  stashes_drained_before_refusal(a, 1u << 17, 1);
}

namespace {
// Each lane takes one unit `per` times, one after another, and keeps them: counters[0] served,
// counters[1] refused.
__global__ void take_units(alloc::rw_malloc_handle h, unsigned n, unsigned per,
                           unsigned long long *counters) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n)
    for (unsigned k = 0; k < per; ++k)
      atomicAdd(&counters[h.malloc(h.unit_bytes) ? 0 : 1], 1ull);
}
// The race tests' pool: 32 MiB of 64 B units, one stash per SM (which holds 4 warps' requests of
// one unit a lane). A warp of 32 units asks its stash at stash_times 4 (4 x 32 <= 248 units a stash
// on 132 SMs), not at the default 8.
alloc::malloc_config race_cfg() {
  alloc::malloc_config c = rw_cfg(32u << 20);
  c.unit_bytes = 64;
  c.stash_per_sm = 1;
  c.refill_times_small = 4; // the set-ups below lay out refills of 4 warps' requests (128 units)
  c.stash_times = 4;
  return c;
}
} // namespace

// The exact out-of-memory under any interleaving. The pool is full but for 132 free
// runs of 256 units (one of them in the pool's first 16 words), and lanes take one unit 8 times
// each, one after another, and keep them: as many requests as free units, so every request fits
// and any refusal is an error. One stash per SM holds 4 warps' requests (32 lanes x 1 unit: 128
// <= its cap), so refills put most free units into stashes and the SM's warps are served from
// them; a warp holds a run it took 20 us (hold_ns: the window the in-flight accounting closes,
// widened) while warps that found their slot empty scan the pool (after 2 random regions) and
// drain every stash. Between launches no slot is left taken. An earlier form of this test (one
// unit a lane, one request each) found the scan that skipped words 0 .. start % 16 (at least 8 of
// 96 trials refused before the fix). The same trials run with the accounting off (mark_taken =
// false) and print their refusals: a measure of how often the window is met, not a check (rarely:
// RwMallocServesWhatAWarpHoldsWhileOthersScan meets it every time).
TEST(MallocGpu, RwMallocExactOutOfMemoryWhileStashRunsAreInFlight) {
  GPUPROBE_REQUIRE_GPU();
  alloc::malloc_config c = race_cfg();
  c.max_rounds = 2;
  alloc::rw_malloc a(c);
  ASSERT_GE(a.handle().stash_cap, a.handle().stash_times * 32) << "a stash that a warp asks";
  const std::uint64_t units = a.units(), runs = 132, run = 256;
  const unsigned free_units = unsigned(runs * run), per = 8, n = free_units / per;
  const char *env = std::getenv("GPUPROBE_RACE_TRIALS"); // fewer under compute-sanitizer
  const unsigned trials = env ? unsigned(std::max(1, std::atoi(env))) : 16;
  alloc::device_array<unsigned long long> counters(2);
  for (const bool counted : {true, false}) {
    unsigned lost_trials = 0;
    unsigned long long refused = 0;
    for (unsigned t = 0; t < trials; ++t) {
      std::vector<unsigned long long> w((units + 63) / 64, ~0ull);
      for (std::uint64_t k = 0; k < runs; ++k) { // free runs spread over the pool
        const std::uint64_t at = (k * (units / runs) + 64 * (t % 7)) / 64 * 64;
        for (std::uint64_t u = at; u < at + run; ++u)
          w[u / 64] &= ~(1ull << (u % 64));
      }
      a.load(w);
      auto h = a.handle();
      h.seed = 1000 + t;
      h.hold_ns = 20000;
      if (!counted)
        h.mark_taken = false;
      counters.zero();
      take_units<<<alloc::blocks_for(n), alloc::k_block>>>(h, n, per, counters.get());
      sync_or_throw();
      unsigned long long v[2];
      counters.download(v, 2);
      lost_trials += v[1] > 0;
      refused += v[1];
      if (counted) {
        EXPECT_EQ(v[0], free_units) << "trial " << t << ": a fitting request refused";
        EXPECT_EQ(a.taken_slots(), 0u) << "trial " << t << ": a slot left taken";
      }
      EXPECT_EQ(v[0] + a.free_units(), free_units) << "trial " << t << ": units lost";
    }
    std::printf("rw_malloc %s the in-flight accounting: %u of %u trials refused a fitting request "
                "(%llu refusals of %u requests, one a free unit)\n",
                counted ? "with" : "WITHOUT", lost_trials, trials, refused, free_units);
  }
}

namespace {
// The race of issue 49 made certain: the one warp whose stash slot holds a run (the first to see
// it, by tickets[0]) asks at once, takes the run and holds it (hold_ns); three other warps
// (tickets[1]) wait `late_ns` before they ask, so their scans and drains fall inside that hold; the
// rest leave. Each lane asks one unit. Launched with a few warps an SM, so that some warp runs on
// that slot.
__global__ void take_while_held(alloc::rw_malloc_handle h, unsigned *tickets,
                                unsigned long long late_ns, unsigned long long *counters) {
  const unsigned lane = alloc::detail::lane_id();
  const unsigned slot = h.stash_slot();
  unsigned role = 0; // 0: leave, 1: the holder, 2: late
  if (lane == 0) {
    if (__ldcg(&h.stash[slot]) != 0ull && atomicCAS(&tickets[0], 0u, 1u) == 0u)
      role = 1;
    else if (atomicAdd(&tickets[1], 1u) < 3u)
      role = 2;
  }
  role = __shfl_sync(0xffffffffu, role, 0);
  if (role == 0)
    return;
  if (role == 2)
    alloc::detail::wait_ns(late_ns);
  atomicAdd(&counters[h.malloc(h.unit_bytes) ? 0 : 1], 1ull);
}
} // namespace

// Issue 49's race, met every time: the pool's only free units are one stash's run of 128 (4 warps'
// requests of one unit a lane), put there by a warp's refill in a first launch. In a second launch
// the warp on that slot takes the run and holds it 5 ms; three others ask 200 us later, scan the
// whole pool, drain every stash and find nothing: the units are in a warp's hands. With the
// in-flight accounting (the slot reads taken while the run is held) they scan again until the run's
// rest is put back and all 128 requests are served; with it off (mark_taken = false, the control:
// the allocator without its in-flight accounting) they refuse. The control must refuse, or the test
// did not meet the window.
TEST(MallocGpu, RwMallocServesWhatAWarpHoldsWhileOthersScan) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(race_cfg());
  ASSERT_GE(a.handle().stash_cap, a.handle().stash_times * 32) << "a stash that a warp asks";
  const std::uint64_t units = a.units(), region = alloc::rw_malloc_handle::region_units;
  alloc::device_array<unsigned long long> counters(2);
  alloc::device_array<unsigned> tickets(2);
  for (const bool counted : {true, false}) {
    for (unsigned t = 0; t < 4; ++t) {
      // The first launch: one warp's 32 units and a refill of 128 from the one free run of 160.
      std::vector<unsigned long long> w((units + 63) / 64, ~0ull);
      const std::uint64_t at = (37 + 53 * t) % (units / region) * region + 64 * t;
      for (std::uint64_t u = at; u < at + 160; ++u)
        w[u / 64] &= ~(1ull << (u % 64));
      a.load(w);
      auto h = a.handle();
      h.seed = 77 + t;
      h.max_rounds =
          1u << 16; // random regions until the free run's (a refill is never scanned for)
      counters.zero();
      take_units<<<1, 32>>>(h, 32, 1, counters.get());
      sync_or_throw();
      unsigned long long v[2];
      counters.download(v, 2);
      ASSERT_EQ(v[0], 32u) << "trial " << t;
      ASSERT_EQ(a.stashed_units(), 128u) << "trial " << t << ": the refill is in a stash";
      ASSERT_EQ(alloc::count_free_units(a.bitmap()), 0u);
      // The second launch: 4 warps ask (one a block, 4 blocks an SM launched), 128 units.
      h.max_rounds = 2;
      h.hold_ns = 5'000'000;
      if (!counted)
        h.mark_taken = false;
      counters.zero();
      tickets.zero();
      take_while_held<<<4 * h.stash_sms, 32>>>(h, tickets.get(), 200'000, counters.get());
      sync_or_throw();
      counters.download(v, 2);
      std::printf("rw_malloc %s the in-flight accounting, trial %u: %llu of 128 served, %llu "
                  "refused\n",
                  counted ? "with" : "WITHOUT", t, v[0], v[1]);
      if (counted) {
        EXPECT_EQ(v[0], 128u) << "trial " << t << ": a fitting request refused";
        EXPECT_EQ(a.taken_slots(), 0u) << "trial " << t;
      } else {
        EXPECT_GT(v[1], 0u) << "trial " << t << ": the control met no refusal (the window missed)";
      }
      EXPECT_EQ(v[0] + a.free_units(), 128u) << "trial " << t << ": units lost";
    }
  }
}

namespace {
// Thread t asks bytes[t]; got[t] is its block or nullptr.
__global__ void malloc_each(alloc::rw_malloc_handle h, const std::uint32_t *bytes, unsigned n,
                            char **got) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n)
    got[t] = static_cast<char *>(h.malloc(bytes[t]));
}

// The longest run of free units in a bitmap (bit set = used).
std::uint64_t longest_free_run(const std::vector<unsigned long long> &w) {
  std::uint64_t best = 0, run = 0;
  for (std::size_t u = 0; u < w.size() * 64; ++u) {
    run = (w[u / 64] >> (u % 64)) & 1ull ? 0 : run + 1;
    best = std::max(best, run);
  }
  return best;
}
} // namespace

// With `optimistic`, a full warp that asks no stash claims at its region's start unread
// (atomicCAS a word from 0), and a word it finds taken makes it give back the words it won. Here
// every warp meets the others there: a pool of two regions and no stash (a small pool), 4-40 full
// warps a launch, each warp's lanes asking 1-64 units (one size a warp, or a size a lane), 300
// seeded launches on an empty pool, with the unread claim on and off. After each: the blocks lie in
// the pool, disjoint; the bitmap holds exactly their units (a won word given back leaves no bit);
// and each refused request is longer than every free run left (the pool only filled, so none
// fitted when it was refused).
TEST(MallocGpu, RwMallocUnreadClaimsThatMeetAreExactAndDisjoint) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(rw_cfg(2ull * alloc::rw_malloc_handle::region_units * 256));
  ASSERT_EQ(a.handle().stash_cap, 0u) << "no stash: every full warp claims unread";
  const std::uint64_t units = a.units();
  constexpr unsigned max_threads = 40 * 32;
  alloc::device_array<std::uint32_t> bytes(max_threads);
  alloc::device_array<char *> got(max_threads);
  std::mt19937_64 rng(4949);
  for (const bool optimistic : {true, false}) {
    unsigned long long served = 0, refused = 0, bad = 0;
    for (unsigned trial = 0; trial < 300; ++trial) {
      a.load(std::vector<unsigned long long>((units + 63) / 64, 0));
      const unsigned warps = 4 + unsigned(rng() % 37), n = warps * 32;
      std::vector<std::uint32_t> b(n);
      for (unsigned w = 0; w < warps; ++w) {
        const bool per_lane = rng() % 4 == 0;
        std::uint32_t u = 1u << (rng() % 7); // 1..64 units
        for (unsigned l = 0; l < 32; ++l) {
          if (per_lane)
            u = 1 + std::uint32_t(rng() % 64);
          b[w * 32 + l] = u * 256;
        }
      }
      bytes.upload(b.data(), n);
      got.zero();
      auto h = a.handle();
      h.seed = 9000 + trial;
      h.optimistic = optimistic;
      malloc_each<<<(n + 255) / 256, 256>>>(h, bytes.get(), n, got.get());
      sync_or_throw();
      std::vector<char *> p(n);
      got.download(p.data(), n);
      std::vector<alloc::byte_range> r;
      const std::uint64_t nulls = alloc::append_ranges(r, p, [&](std::size_t i) { return b[i]; });
      const std::uint64_t trial_bad =
          alloc::count_bad_ranges(r, reinterpret_cast<std::uintptr_t>(a.data()), a.pool_bytes());
      std::vector<unsigned long long> want((units + 63) / 64, 0);
      std::uint64_t used = 0;
      for (const auto &[lo, hi] : r) {
        const std::uint64_t u0 = (lo - reinterpret_cast<std::uintptr_t>(a.data())) / 256;
        for (std::uint64_t u = u0; u < u0 + (hi - lo) / 256 && u < units; ++u)
          want[u / 64] |= 1ull << (u % 64);
        used += (hi - lo) / 256;
      }
      const auto bitmap = a.bitmap();
      EXPECT_EQ(bitmap, want) << "trial " << trial << (optimistic ? "" : " (read first)")
                              << ": the bitmap holds other units than the blocks served";
      const std::uint64_t longest = longest_free_run(bitmap);
      std::uint64_t false_refusals = 0;
      for (unsigned i = 0; i < n; ++i)
        false_refusals += !p[i] && b[i] / 256 <= longest;
      EXPECT_EQ(false_refusals, 0u)
          << "trial " << trial << ": refused while a run of " << longest << " units was free";
      EXPECT_EQ(trial_bad, 0u) << "trial " << trial;
      EXPECT_LE(used, units);
      served += r.size(), refused += nulls, bad += trial_bad;
    }
    std::printf("rw_malloc, unread claim %s: %llu blocks served, %llu refused, %llu bad, over 300 "
                "launches on a 2-region pool\n",
                optimistic ? "on" : "off", served, refused, bad);
    EXPECT_GT(refused, 0u) << "some launches ask more than the pool: the refusals were checked";
  }
}

namespace {
// A region's words (bit set = used) for the one-region tests below (test::fragmented_word).
std::vector<unsigned long long> fragmented_region(std::mt19937_64 &rng) {
  std::vector<unsigned long long> w(alloc::rw_malloc_handle::region_units / 64);
  for (auto &x : w)
    x = test::fragmented_word(rng);
  return w;
}
// One full warp's malloc over a pool of one region (rw_cfg's, then `set(config)`; no stash: a
// small pool) whose bitmap is `w`, lane l asking b[l] bytes: the unit each lane got (~0: nullptr).
struct one_region_warp {
  alloc::device_array<std::uint32_t> bytes{32};
  alloc::device_array<char *> got{32};
  template <class Set>
  std::vector<std::uint64_t> units(const std::vector<unsigned long long> &w,
                                   const std::vector<std::uint32_t> &b, Set set) {
    alloc::malloc_config c = rw_cfg(std::uint64_t(alloc::rw_malloc_handle::region_units) * 256);
    set(c);
    alloc::rw_malloc a(c);
    EXPECT_EQ(a.handle().stash_cap, 0u);
    a.load(w);
    bytes.upload(b.data(), 32);
    got.zero();
    malloc_each<<<1, 32>>>(a.handle(), bytes.get(), 32, got.get());
    sync_or_throw();
    std::vector<char *> g(32);
    got.download(g.data(), 32);
    std::vector<std::uint64_t> u(32);
    for (unsigned l = 0; l < 32; ++l)
      u[l] = g[l] ? std::uint64_t(g[l] - a.data()) / 256 : ~0ull;
    return u;
  }
};

// The first run of at least `need` free units in the bitmap `w`, whole (length 0 / less: none),
// unit by unit: the models' walk.
alloc::free_run first_free_run(const std::vector<unsigned long long> &w, std::uint32_t need) {
  const std::uint32_t units = std::uint32_t(w.size() * 64);
  auto used = [&](std::uint32_t u) { return (w[u / 64] >> (u % 64)) & 1ull; };
  alloc::free_run fr{0, 0};
  for (std::uint32_t u = 0; u < units && fr.length < need; ++u)
    fr = used(u) ? alloc::free_run{u + 1, 0} : alloc::free_run{fr.start, fr.length + 1};
  if (fr.length >= need)
    while (fr.start + fr.length < units && !used(fr.start + fr.length))
      ++fr.length;
  return fr;
}

// The host's model of one full warp's first pass over a one-region pool whose bitmap is `w`, every
// lane asking k units: with the bulk pass, the r-th lane takes the r-th aligned slot of k free
// units (address order); the lanes left, and every lane without it, walk the runs: the first run of
// at least k free units takes the next lanes, k units each from its start, until none is left. The
// unit each lane gets (~0: none).
std::vector<std::uint64_t> model_first_pass(std::vector<unsigned long long> w, unsigned k,
                                            bool bulk) {
  std::vector<std::uint64_t> got(32, ~0ull);
  unsigned lane = 0;
  if (bulk)
    for (unsigned j = 0; j < w.size() && lane < 32; ++j)
      for (std::uint64_t s = alloc::aligned_slots(w[j], k); s && lane < 32; s &= s - 1)
        got[lane++] = j * 64 + alloc::ctz64(s);
  for (unsigned l = 0; l < lane; ++l)
    for (unsigned u = 0; u < k; ++u)
      w[(got[l] + u) / 64] |= 1ull << ((got[l] + u) % 64);
  while (lane < 32) {
    const alloc::free_run fr = first_free_run(w, k);
    if (fr.length < k)
      break;
    for (std::uint32_t at = fr.start; at + k <= fr.start + fr.length && lane < 32; at += k) {
      got[lane++] = at;
      for (unsigned u = 0; u < k; ++u)
        w[(at + u) / 64] |= 1ull << ((at + u) % 64);
    }
  }
  return got;
}
} // namespace

// The bulk pass against the host's model, on a seeded family of fragmented regions: a pool of one
// region (no stash, no recycling: a small pool), its words drawn free, used, sparse, dense or in
// runs, and one full warp asking k = 1, 2, 4 or 8 units a lane, with the bulk pass on (bulk_max 8)
// and off. Each lane gets the unit the model gives (the pass's first: a lane the region cannot hold
// gets nullptr); with k = 1 the bulk pass gives what the walk gives.
TEST(MallocGpu, RwMallocBulkPassTakesTheAlignedSlotsTheModelGives) {
  GPUPROBE_REQUIRE_GPU();
  std::mt19937_64 rng(808);
  one_region_warp warp;
  unsigned checked = 0, bulk_served = 0;
  for (unsigned trial = 0; trial < 200; ++trial) {
    const std::vector<unsigned long long> w = fragmented_region(rng);
    const unsigned k = 1u << (trial % 4);
    const std::vector<std::uint32_t> b(32, k * 256);
    for (const unsigned bulk_max : {8u, 0u}) {
      const auto units = warp.units(w, b, [&](alloc::malloc_config &c) {
        c.bulk_max = bulk_max;
        c.seed = 5 + trial;
      });
      const auto want = model_first_pass(w, k, bulk_max != 0);
      for (unsigned l = 0; l < 32; ++l)
        ASSERT_EQ(units[l], want[l])
            << "trial " << trial << ", k " << k << ", bulk_max " << bulk_max << ", lane " << l;
      ++checked;
      if (bulk_max)
        bulk_served += unsigned(
            std::count_if(want.begin(), want.end(), [](std::uint64_t u) { return u != ~0ull; }));
    }
    if (k == 1) // first fit: the bulk pass gives the walk's units
      EXPECT_EQ(model_first_pass(w, 1, true), model_first_pass(w, 1, false)) << "trial " << trial;
  }
  std::printf("%u launches checked against the model, %u requests served with the bulk pass\n",
              checked, bulk_served);
}

namespace {
// The host's model of one full warp of mixed requests (`need` units a lane, 1-32) in a one-region
// pool whose bitmap is `w`: the walk takes the first run that holds the smallest pending request
// and gives it the pending lanes that ask at most its length, in lane order, while their sum fits;
// after its first run, when the requests left are of mixed sizes, `sweeps` sweeps (match_sweep on
// the words' and requests' classes, each request at its word's lowest place that holds it) serve
// what they can, and the walk goes on.
// The unit each lane gets (~0: none).
std::vector<std::uint64_t> model_mixed_pass(std::vector<unsigned long long> w,
                                            const std::vector<std::uint32_t> &need,
                                            unsigned sweeps) {
  std::vector<std::uint64_t> got(32, ~0ull);
  auto take = [&](unsigned lane, std::uint64_t at) {
    got[lane] = at;
    for (std::uint64_t u = at; u < at + need[lane]; ++u)
      w[u / 64] |= 1ull << (u % 64);
  };
  auto pending = [&](unsigned lane) { return got[lane] == ~0ull; };
  bool sweep = sweeps > 0;
  for (;;) {
    std::uint32_t min_need = ~0u;
    for (unsigned l = 0; l < 32; ++l)
      if (pending(l))
        min_need = std::min(min_need, need[l]);
    if (min_need == ~0u)
      break;
    const alloc::free_run fr = first_free_run(w, min_need);
    if (fr.length < min_need)
      break;
    std::uint32_t excl = 0;
    for (unsigned l = 0; l < 32; ++l)
      if (pending(l) && need[l] <= fr.length) {
        if (excl + need[l] <= fr.length)
          take(l, fr.start + excl);
        excl += need[l];
      }
    std::uint32_t lo = ~0u, hi = 0; // the pending requests after the first run: mixed sizes?
    for (unsigned l = 0; l < 32; ++l)
      if (pending(l))
        lo = std::min(lo, need[l]), hi = std::max(hi, need[l]);
    if (sweep && lo < hi) {
      std::uint64_t words[32];
      std::uint32_t needs[32], at[32] = {};
      unsigned pend = 0;
      for (unsigned i = 0; i < 32; ++i) {
        words[i] = i < w.size() ? w[i] : ~0ull;
        needs[i] = need[i];
        pend |= unsigned(pending(i)) << i;
      }
      const unsigned left = alloc::model_sweeps(words, needs, pend, sweeps, at);
      for (unsigned l = 0; l < 32; ++l)
        if (((pend & ~left) >> l) & 1u)
          take(l, at[l]);
    }
    sweep = false;
  }
  return got;
}
} // namespace

// The sweeps against the host's model, on a seeded family of fragmented regions (as above) and
// full warps of mixed requests (1-32 units, or 1-8), with 0, 1, 2 and 8 sweeps: each lane gets
// the unit the model gives. With 0 the model is the walk alone, so the walk of mixed sizes is
// checked too.
TEST(MallocGpu, RwMallocSweepsTakeTheWordsTheModelGives) {
  GPUPROBE_REQUIRE_GPU();
  std::mt19937_64 rng(909);
  one_region_warp warp;
  unsigned checked = 0, differ = 0;
  for (unsigned trial = 0; trial < 200; ++trial) {
    const std::vector<unsigned long long> w = fragmented_region(rng);
    const std::uint32_t most = trial % 2 ? 32 : 8;
    std::vector<std::uint32_t> need(32), b(32);
    for (unsigned l = 0; l < 32; ++l) {
      need[l] = 1 + std::uint32_t(rng() % most);
      // A request below a unit (256 B) shares a unit (packed, not walked): one unit asks 256 B.
      b[l] = need[l] == 1 ? 256u : (need[l] - 1) * 256 + 1 + std::uint32_t(rng() % 256);
    }
    if (need[0] == need[1]) // mixed: at least two sizes
      need[1] = need[0] % most + 1, b[1] = need[1] * 256;
    std::vector<std::uint64_t> walk_only;
    for (const unsigned sweeps : {0u, 1u, 2u, 8u}) {
      const auto units = warp.units(w, b, [&](alloc::malloc_config &c) {
        c.sweeps = sweeps;
        c.seed = 7 + trial;
      });
      const auto want = model_mixed_pass(w, need, sweeps);
      for (unsigned l = 0; l < 32; ++l)
        ASSERT_EQ(units[l], want[l])
            << "trial " << trial << ", sweeps " << sweeps << ", lane " << l;
      ++checked;
      if (!sweeps)
        walk_only = want;
      else
        differ += want != walk_only;
    }
  }
  std::printf("%u launches checked against the model; %u with sweeps served otherwise than the "
              "walk\n",
              checked, differ);
  EXPECT_GT(differ, 100u) << "the family reaches the sweeps";
}

TEST(MallocGpu, MallocSmallRwSharedUnitsAndTooLarge) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(rw_cfg(1 << 20));
  const auto c = churn(a.handle(), 4096, 3, {16, 0}, a.data(), a.pool_bytes()); // 16 per unit
  EXPECT_EQ(c.range_errors + c.overwritten + c.out_of_memory, 0u);
  EXPECT_EQ(a.free_units(), a.units()) << "shared units freed by their last allocation";
  const auto big = churn(a.handle(), 1, 1, {std::uint32_t(a.handle().max_bytes() + 4), 0}, a.data(),
                         a.pool_bytes());
  EXPECT_EQ(big.allocations, 0u) << "larger than a region: nullptr";
}

TEST(MallocGpu, MallocSmallOuroborosOutOfMemory) {
  GPUPROBE_REQUIRE_GPU();
  for (bool chunk : {false, true}) {
    const auto cfg = ouro_cfg(64 * 1024); // 8 chunks of 8 KiB = 16 pages of 4 KiB
    malloc_churn_result c;
    if (chunk) {
      alloc::ouroboros_chunk a(cfg);
      c = churn(a.handle(), 100, 1, {4096, 0}, a.data(), a.pool_bytes());
    } else {
      alloc::ouroboros_page a(cfg);
      c = churn(a.handle(), 100, 1, {4096, 0}, a.data(), a.pool_bytes());
    }
    EXPECT_EQ(c.allocations, 16u) << (chunk ? "chunk" : "page");
    EXPECT_EQ(c.out_of_memory, 84u);
    EXPECT_EQ(c.range_errors + c.overwritten, 0u);
  }
}

TEST(MallocGpu, MallocSmallXmallocChurn) {
  GPUPROBE_REQUIRE_GPU();
  GPUPROBE_IN_FRESH_PROCESS(); // its own device malloc heap
  alloc::xmalloc a;
  const auto c = churn(a.handle(), 2048, 4, {}, nullptr, 0);
  EXPECT_EQ(c.range_errors + c.overwritten + c.out_of_memory, 0u);
}

namespace {
template <class H>
__global__ void malloc_then_free(H h, unsigned n, std::uint32_t bytes, unsigned long long *served) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  auto *p = static_cast<std::uint32_t *>(h.malloc(bytes));
  if (!p)
    return;
  p[0] = t;
  p[bytes / 4 - 1] = t;
  h.free(p);
  atomicAdd(served, 1ull);
}
} // namespace

// "4096 B, freed at once" (RW paper Fig. 13, the Ouroboros survey's setting): 3 x 2^16 threads.
template <class H> void allocate_then_free(H h, const char *name, std::uint32_t bytes = 4096) {
  const unsigned n = 1u << 16;
  alloc::device_array<unsigned long long> served(1);
  served.zero();
  for (int r = 0; r < 3; ++r)
    malloc_then_free<<<n / alloc::k_block, alloc::k_block>>>(h, n, bytes, served.get());
  sync_or_throw();
  unsigned long long s = 0;
  served.download(&s, 1);
  EXPECT_EQ(s, 3ull * n) << name;
}
TEST(MallocGpu, AllocateThenFreeRwMalloc) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(rw_cfg(1ull << 30));
  allocate_then_free(a.handle(), "rw_malloc");
  EXPECT_EQ(a.free_units(), a.units());
}
TEST(MallocGpu, AllocateThenFreeOuroborosPage) {
  GPUPROBE_REQUIRE_GPU();
  alloc::ouroboros_page a(ouro_cfg(1ull << 30));
  allocate_then_free(a.handle(), "ouroboros_page");
}
TEST(MallocGpu, AllocateThenFreeOuroborosChunk) {
  GPUPROBE_REQUIRE_GPU();
  alloc::ouroboros_chunk a(ouro_cfg(1ull << 30));
  allocate_then_free(a.handle(), "ouroboros_chunk");
}
TEST(MallocGpu, AllocateThenFreeCudaMalloc) {
  GPUPROBE_REQUIRE_GPU();
  GPUPROBE_IN_FRESH_PROCESS(); // its own device malloc heap
  alloc::ensure_malloc_heap(std::size_t(4) << 30);
  alloc::pool_config pc;
  pc.pages = 1;
  alloc::cuda_malloc a(pc, 1.0);
  allocate_then_free(a.handle(), "cuda_malloc");
  allocate_then_free(a.handle(), "cuda_malloc 8 KiB", 8192 - 64);
}
TEST(MallocGpu, AllocateThenFreeXmallocCoalesced) {
  GPUPROBE_REQUIRE_GPU();
  GPUPROBE_IN_FRESH_PROCESS(); // its own device malloc heap
  alloc::xmalloc a;
  allocate_then_free(a.handle(), "xmalloc 1 KiB (coalesced)", 1024);
}
TEST(MallocGpu, AllocateThenFreeXmalloc) {
  GPUPROBE_REQUIRE_GPU();
  GPUPROBE_IN_FRESH_PROCESS(); // its own device malloc heap
  alloc::xmalloc a;
  allocate_then_free(a.handle(), "xmalloc");
}
TEST(MallocGpu, AllocateThenFreeXmallocCoalescingOnly) {
  GPUPROBE_REQUIRE_GPU();
  GPUPROBE_IN_FRESH_PROCESS(); // its own device malloc heap
  alloc::xmalloc_config c;
  c.buffering = false;
  alloc::xmalloc a(c);
  allocate_then_free(a.handle(), "xmalloc without buffers");
}

namespace {
template <class H>
__global__ void malloc_only(H h, unsigned n, std::uint32_t bytes, unsigned lanes, char **out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n || (t % 32) >= lanes)
    return;
  out[t] = static_cast<char *>(h.malloc(bytes));
}
template <class H> __global__ void free_all(H h, unsigned n, char **out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n && out[t])
    h.free(out[t]), out[t] = nullptr;
}
// Median kernel time (ms) of malloc_only over `reps` runs; frees after each.
template <class H, class Reset>
double malloc_ms(H h, unsigned n, std::uint32_t bytes, unsigned lanes, Reset reset, int reps = 5) {
  alloc::device_array<char *> out(n);
  out.zero();
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<double> ms;
  for (int r = 0; r < reps + 1; ++r) {
    reset();
    cudaEventRecord(e0);
    malloc_only<<<alloc::blocks_for(n), alloc::k_block>>>(h, n, bytes, lanes, out.get());
    cudaEventRecord(e1);
    sync_or_throw();
    float m = 0;
    cudaEventElapsedTime(&m, e0, e1);
    if (r)
      ms.push_back(m); // the first is a warm-up
    free_all<<<alloc::blocks_for(n), alloc::k_block>>>(h, n, out.get());
    sync_or_throw();
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
} // namespace

// Ouroboros rounds to a power of two: 4100 B is served from the 8 KiB queue, so it costs what
// 8192 B costs in time and in memory (RW paper Fig. 4).
TEST(MallocSignature, Ouroboros4100CostsWhat8192Costs) {
  GPUPROBE_REQUIRE_GPU();
  alloc::ouroboros_page a(ouro_cfg(8ull << 30));
  const unsigned n = 1u << 18;
  std::map<std::uint32_t, std::pair<double, std::uint64_t>>
      r; // bytes -> (ms, chunks taken by one launch)
  for (std::uint32_t bytes : {4096u, 4100u, 8192u}) {
    const double ms = malloc_ms(a.handle(), n, bytes, 32, [&] { a.reset(0.0); });
    a.reset(0.0);
    alloc::device_array<char *> out(n);
    malloc_only<<<alloc::blocks_for(n), alloc::k_block>>>(a.handle(), n, bytes, 32, out.get());
    sync_or_throw();
    r[bytes] = {ms, a.chunks_taken()};
    std::printf("ouroboros_page, %u threads x %u B: %.3f ms, %llu chunks of 8 KiB\n", n, bytes, ms,
                (unsigned long long)a.chunks_taken());
  }
  EXPECT_NEAR(r[4100].first / r[8192].first, 1.0, 0.25);
  EXPECT_EQ(r[4100].second, r[8192].second);
  EXPECT_EQ(r[4100].second, n) << "one 8 KiB chunk per 4100 B request";
  EXPECT_EQ(r[4096].second, n / 2);
}

// XMalloc's coalescing: the same number of allocations costs less with more active lanes
// (XMalloc paper Fig. 5).
TEST(MallocSignature, XmallocCoalescingGainGrowsWithActiveLanes) {
  GPUPROBE_REQUIRE_GPU();
  GPUPROBE_IN_FRESH_PROCESS(); // its own device malloc heap
  alloc::xmalloc a;
  const unsigned allocations = 1u << 14;
  auto none = [] {};
  std::vector<double> per;
  for (unsigned lanes : {1u, 4u, 32u}) {
    const double ms = malloc_ms(a.handle(), allocations / lanes * 32, 64, lanes, none);
    per.push_back(ms * 1e6 / allocations);
    std::printf("xmalloc, %u active lanes: %.1f ns per allocation\n", lanes, per.back());
  }
  EXPECT_GT(per[0] / per[1], 1.5);
  EXPECT_GT(per[1] / per[2], 1.5);
}

// RW paper Fig. 15: 1050 B requests with 256 B units until out of memory: >= 75% of the pool
// served (the ceiling is 1050 / 1280 = 82%).
TEST(MallocUtilization, RwMalloc1050BytesWith256ByteUnits) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(rw_cfg(64u << 20));
  const unsigned n = 1u << 14;
  alloc::device_array<char *> ptr(n);
  alloc::device_array<std::uint32_t> size(n);
  alloc::device_array<unsigned long long> counters(3);
  counters.zero();
  unsigned long long served = 0;
  for (unsigned r = 0; r < 1000; ++r) { // fresh threads each launch until one launch gets nothing
    ptr.zero();
    unsigned long long before[3];
    counters.download(before, 3);
    hold_kernel<<<alloc::blocks_for(n), alloc::k_block>>>(
        a.handle(), n, alloc::request_sizes{1050, 0}, ptr.get(), size.get(), r, counters.get());
    sync_or_throw();
    unsigned long long after[3];
    counters.download(after, 3);
    served += after[2] - before[2];
    if (after[2] == before[2])
      break;
  }
  const double used = double(a.units() - a.free_units()) / double(a.units());
  const double util = double(served) * 1050.0 / double(a.pool_bytes());
  std::printf(
      "rw_malloc 1050 B / 256 B units: requested bytes %.1f%% of the pool, rounded %.1f%%\n",
      100 * util, 100 * used);
  EXPECT_GE(util, 0.75);
}

TEST(MallocSanitizer, SmallPoolsAreClean) {
  GPUPROBE_REQUIRE_GPU();
  if (test::shell("command -v compute-sanitizer").empty())
    GTEST_SKIP() << "compute-sanitizer not installed";
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  for (const char *tool : {"memcheck", "initcheck", "synccheck", "racecheck"}) {
    int rc = 0;
    const auto log =
        test::shell(std::string("compute-sanitizer --tool ") + tool + " --error-exitcode 9 " +
                        self + " --gtest_filter='*MallocSmall*' 2>&1",
                    &rc);
    EXPECT_EQ(rc, 0) << tool << ":\n" << log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
    // A filter that matches nothing exits 0 too: the child must have run the cases it names.
    std::smatch m;
    const bool counted = std::regex_search(log, m, std::regex(R"(Running (\d+) tests?)"));
    const int ran = counted ? std::stoi(m[1].str()) : 0;
    EXPECT_GE(ran, 1) << tool << ": the child ran no test (its filter matched nothing):\n" << log;
    EXPECT_EQ(log.find("[  SKIPPED ]"), std::string::npos) << tool << ": a case skipped:\n" << log;
    std::printf("%s: %s, %d tests under the sanitizer\n", tool, rc == 0 ? "0 errors" : "ERRORS",
                ran);
  }
}

namespace {
// Every thread of the first `lanes` lanes of each warp takes `bytes`, marks its first and last
// word, and frees it again in the same kernel ("freed at once"); `served` counts the marks found
// intact at the free, `lost` the null returns.
template <class H>
__global__ void take_mark_free(H h, unsigned n, std::uint32_t bytes, unsigned lanes,
                               unsigned long long *served, unsigned long long *bad) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n || (t % 32) >= lanes)
    return;
  auto *p = static_cast<std::uint32_t *>(h.malloc(bytes));
  if (!p) {
    atomicAdd(&bad[0], 1ull);
    return;
  }
  p[0] = t;
  p[bytes / 4 - 1] = ~t;
  __threadfence();
  if (p[0] != t || p[bytes / 4 - 1] != ~t)
    atomicAdd(&bad[1], 1ull); // another thread wrote into this block
  h.free(p);
  atomicAdd(served, 1ull);
}
} // namespace

// XMalloc as the paper has it: requests up to 64 KiB go through the size-class FIFOs. 4 KiB blocks
// freed at once, 2^16 and 2^20 threads, lone lanes (an 8 KiB block each), 8 lanes (one 32 KiB
// block per warp) and full warps (128 KiB: past the classes, device malloc), three kernels each.
TEST(MallocGpu, XmallocFourKiBBlocksThroughTheBuffers) {
  GPUPROBE_REQUIRE_GPU();
  GPUPROBE_IN_FRESH_PROCESS(); // its own device malloc heap
  alloc::xmalloc_config cfg;
  cfg.coalesce_max_bytes = 64 << 10;
  if (const char *e = std::getenv("GPUPROBE_XMALLOC_NO_BUFFERS"); e && *e == '1')
    cfg.buffering = false; // diagnosis: the same requests, device malloc alone
  alloc::xmalloc a(cfg);
  alloc::device_array<unsigned long long> served(1), bad(2);
  for (unsigned n : {1u << 20, 1u << 16})
    for (unsigned lanes : {1u, 8u, 32u}) {
      served.zero();
      bad.zero();
      std::printf("xmalloc 4 KiB through the buffers: %u threads, %u lanes\n", n, lanes);
      std::fflush(stdout);
      for (int r = 0; r < 3; ++r)
        take_mark_free<<<alloc::blocks_for(n), alloc::k_block>>>(a.handle(), n, 4096, lanes,
                                                                 served.get(), bad.get());
      sync_or_throw();
      unsigned long long s = 0, b[2] = {0, 0};
      served.download(&s, 1);
      bad.download(b, 2);
      EXPECT_EQ(s, 3ull * (n / 32) * lanes) << n << " threads, " << lanes << " lanes";
      EXPECT_EQ(b[0], 0u) << "null returns";
      EXPECT_EQ(b[1], 0u) << "blocks written by two threads";
    }
}

namespace {
// Soak size: GPUPROBE_SOAK_OPS operations (default 2 x 10^7; dev/device_round.sh soak asks
// 10^9).
double soak_ops() {
  const char *e = std::getenv("GPUPROBE_SOAK_OPS");
  return e && *e ? std::atof(e) : 2e7;
}

// CoRW: each thread holding a page frees it with probability 1/2 (its owner word must still
// name it), each other thread takes one (the page's owner word must have been empty).
template <class H>
__global__ void corw_soak_round(H h, unsigned n, alloc::page_t *held, unsigned *owner,
                                unsigned round, unsigned long long *c) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  const alloc::page_t p = held[t];
  if (p != alloc::invalid_page) {
    if (((t * 2654435761u) ^ (round * 40503u)) >> 9 & 1u)
      return;
    if (atomicExch(&owner[p], 0u) != t + 1)
      atomicAdd(&c[0], 1ull); // someone else held it: an overlap
    h.free_page(p);
    held[t] = alloc::invalid_page;
    atomicAdd(&c[2], 1ull);
    return;
  }
  const alloc::page_t q = h.get_page();
  if (q == alloc::invalid_page) {
    atomicAdd(&c[1], 1ull); // out of pages
    return;
  }
  if (atomicExch(&owner[q], t + 1) != 0u)
    atomicAdd(&c[0], 1ull);
  held[t] = q;
  atomicAdd(&c[2], 1ull);
}
template <class H>
__global__ void corw_release_all(H h, unsigned n, alloc::page_t *held, unsigned *owner,
                                 unsigned long long *c) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n || held[t] == alloc::invalid_page)
    return;
  if (atomicExch(&owner[held[t]], 0u) != t + 1)
    atomicAdd(&c[0], 1ull);
  h.free_page(held[t]);
  held[t] = alloc::invalid_page;
  atomicAdd(&c[2], 1ull);
}
} // namespace

namespace {
// Soak: rw_malloc with `ranges` recycled ranges a warp slot, mixed sizes 4..8192 B from launches of
// n threads, about half the holders freeing each round, until GPUPROBE_SOAK_OPS mallocs + frees;
// every block's first and last word checked at its free, the live ranges every 50 rounds; then
// every unit free again (none lost) and an exact out-of-memory: 4 KiB requests from more threads
// than fit take exactly units / 16.
void soak_rw_malloc(unsigned ranges, unsigned n) {
  alloc::rw_malloc a(rw_cfg(8ull << 30, ranges));
  const unsigned rounds = unsigned(std::ceil(soak_ops() / double(n)));
  const auto c = churn(a.handle(), n, rounds, {}, a.data(), a.pool_bytes(), 50);
  std::printf("rw_malloc soak, %u range(s) a slot: %u rounds, %llu mallocs, %llu range errors, "
              "%llu overwritten, %llu out of memory\n",
              ranges, rounds, c.allocations, c.range_errors, c.overwritten, c.out_of_memory);
  EXPECT_GE(2.0 * double(c.allocations), soak_ops() * 0.99) << "mallocs + frees";
  EXPECT_EQ(c.range_errors, 0u);
  EXPECT_EQ(c.overwritten, 0u);
  expect_exact_fill(a, "rw_malloc soak");
}
} // namespace

TEST(Soak, RwMallocMixedSizesThenExactOutOfMemory) {
  GPUPROBE_REQUIRE_GPU();
  soak_rw_malloc(1, 1u << 20);
}

// The same with 32 ranges a slot: kept ranges must not split the pool for the final fill. 2^17
// threads a launch: their warps fit the warp slots, so warps keep and take several ranges
// (rw_malloc_handle::launch_words).
TEST(Soak, RwMallocThirtyTwoRangesMixedSizesThenExactOutOfMemory) {
  GPUPROBE_REQUIRE_GPU();
  ASSERT_LE((1u << 17) / 32, alloc::current_sm_count("soak") * alloc::malloc_config{}.stash_per_sm);
  soak_rw_malloc(32, 1u << 17);
}

// With stash_times 1 and 1/8 of the pool in stashes (8 stashes a SM: 2048 units each),
// warps of 4-8 KiB requests use the stashes too. A launch of full warps leaves refills in the
// stashes; over a mixed churn the ranges stay in the pool and disjoint and no mark is overwritten,
// every unit is free or stashed once all is freed, and a fill of 4 KiB requests is served to the
// last fitting one.
TEST(MallocGpu, RwMallocLargeRequestStashesStayDisjointAndExact) {
  GPUPROBE_REQUIRE_GPU();
  alloc::malloc_config cfg = rw_cfg(8ull << 30);
  cfg.stash_per_sm = 8;
  cfg.stash_times = 1;
  cfg.stash_share = 8;
  alloc::rw_malloc a(cfg);
  ASSERT_GE(a.stash_cap(), 2u * 512u) << "a stash holds two warps of 4 KiB requests";
  // One launch of full warps (later rounds' warps are partial, and only a full warp refills).
  expect_clean(churn(a.handle(), k_threads, 1, {}, a.data(), a.pool_bytes()), k_threads,
               "rw_malloc, stashes for large requests, one launch");
  EXPECT_GT(a.stashed_units(), 0u) << "refills went into the stashes";
  expect_clean(churn(a.handle(), k_threads, 10, {}, a.data(), a.pool_bytes()), 2'500'000,
               "rw_malloc, stashes for large requests");
  expect_exact_fill(a, "rw_malloc, stashes for large requests");
}

namespace {
// Each thread, `rounds` times: malloc(bytes[r * n + t]), the block's first byte written, free (the
// warp whole at each call: one warp a block).
__global__ void recycle_rounds(alloc::rw_malloc_handle h, const std::uint32_t *bytes,
                               unsigned rounds, unsigned n, char **out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  for (unsigned r = 0; r < rounds; ++r) {
    __syncwarp();
    char *p = static_cast<char *>(h.malloc(bytes[r * n + t]));
    out[r * n + t] = p;
    if (p)
      *p = 1;
    __syncwarp();
    h.free(p);
  }
}
} // namespace

// Recycling: a full warp whose free hands back its blocks in at most recycle_ranges ranges (each
// the runs of consecutive lanes one after another) keeps range j in its warp slot's word j when
// that word is empty, and the slot's next warp takes its lanes' units from them when its requests,
// laid end to end in lane order over the ranges laid end to end, fit with none straddling two
// ranges. 64 warps (one a block, so each keeps its slot), 24 rounds of malloc + free in one
// launch, seeded sizes (one size a warp, or a size a lane; 1-8 whole units, so some warps ask more
// than the ranges hold); a model on the host follows each slot's words from the blocks the launch
// returned. Every warp the model serves from its slot must get the
// units the model says, and no other warp a unit of a range; afterwards the slots hold what the
// model says, none is left taken, and every unit is free or in a slot.
TEST(MallocGpu, RwMallocWarpsGetTheirSlotsRecycledRangeBack) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(rw_cfg(4ull << 30, 32));
  const auto h = a.handle();
  ASSERT_GE(h.recycle_cap, 200u) << "a range holds a warp of 1 KiB requests";
  constexpr unsigned warps = 64, n = warps * 32, rounds = 24;
  const unsigned words = h.recycle_ranges;
  std::mt19937_64 rng(8080);
  std::vector<std::uint32_t> b(rounds * n);
  for (unsigned r = 0; r < rounds; ++r)
    for (unsigned w = 0; w < warps; ++w) {
      const bool per_lane = rng() % 3 == 0;
      std::uint32_t k = 1 + std::uint32_t(rng() % 8);
      for (unsigned l = 0; l < 32; ++l) {
        if (per_lane)
          k = 1 + std::uint32_t(rng() % 8);
        // whole units: a request under one unit is packed into a shared unit instead
        b[r * n + w * 32 + l] = 256 * k - (k > 1 ? std::uint32_t(rng() % 200) : 0u);
      }
    }
  alloc::device_array<std::uint32_t> bytes(b.size());
  alloc::device_array<char *> out(b.size());
  bytes.upload(b.data(), b.size());
  out.zero();
  recycle_rounds<<<warps, 32>>>(h, bytes.get(), rounds, n, out.get());
  sync_or_throw();
  std::vector<char *> p(b.size());
  out.download(p.data(), p.size());
  std::vector<std::uint64_t> slot(warps * words, 0); // warp w's words: slot[w * words + j]
  unsigned long long hits = 0, misses = 0, wrong = 0, nulls = 0, kept = 0, multi = 0;
  for (unsigned r = 0; r < rounds; ++r)
    for (unsigned w = 0; w < warps; ++w) {
      std::uint64_t u[32];
      std::uint32_t need[32], asked = 0;
      for (unsigned l = 0; l < 32; ++l) {
        const unsigned t = r * n + w * 32 + l;
        need[l] = (b[t] + 255) / 256;
        asked += need[l];
        nulls += !p[t];
        u[l] = p[t] ? std::uint64_t(p[t] - a.data()) / 256 : ~0ull;
      }
      std::uint64_t *ws = &slot[w * words];
      // The model's serve: the lanes' requests laid end to end over the words' ranges laid end to
      // end; every lane inside one range, or none served.
      std::uint64_t at[32];
      std::uint32_t used[32] = {}, off = 0;
      unsigned l = 0;
      for (; l < 32; off += need[l++]) {
        unsigned j = 0;
        std::uint32_t base = 0;
        for (; j < words && base + alloc::stash_length(ws[j]) <= off; ++j)
          base += alloc::stash_length(ws[j]);
        if (j == words || off + need[l] > base + alloc::stash_length(ws[j]))
          break;
        at[l] = alloc::stash_start(ws[j]) + (off - base);
        used[j] += need[l];
      }
      const bool asks = h.stash_times * asked > h.stash_cap && asked <= h.recycle_cap;
      if (asks && l == 32) {
        ++hits;
        for (unsigned i = 0; i < 32; ++i)
          wrong += u[i] != at[i];
        for (unsigned j = 0; j < words; ++j) {
          const std::uint32_t len = alloc::stash_length(ws[j]);
          ws[j] = len > used[j]
                      ? alloc::stash_word(alloc::stash_start(ws[j]) + used[j], len - used[j])
                      : 0;
        }
      } else {
        misses += asks;
        for (unsigned i = 0; i < 32; ++i) // the slot's units are claimed: no walk hands them out
          for (unsigned j = 0; j < words; ++j)
            wrong += ws[j] && u[i] < alloc::stash_start(ws[j]) + alloc::stash_length(ws[j]) &&
                     u[i] + need[i] > alloc::stash_start(ws[j]);
      }
      // The free: ranges of consecutive lanes' blocks, range j into word j when it is empty.
      bool whole = true;
      unsigned ranges = 0;
      for (unsigned i = 0; i < 32; ++i) {
        whole &= u[i] != ~0ull;
        ranges += i == 0 || u[i] != u[i - 1] + need[i - 1];
      }
      if (whole && ranges <= words && asked <= h.recycle_cap &&
          h.stash_times * asked > h.stash_cap) {
        multi += ranges > 1;
        for (unsigned i = 0, j = 0; i < 32; ++j) {
          std::uint32_t len = need[i];
          unsigned e = i + 1;
          for (; e < 32 && u[e] == u[e - 1] + need[e - 1]; ++e)
            len += need[e];
          if (!ws[j]) {
            ws[j] = alloc::stash_word(u[i], len);
            ++kept;
          }
          i = e;
        }
      }
    }
  std::uint64_t held = 0;
  for (const auto v : slot)
    held += alloc::stash_length(v);
  std::printf(
      "rw_malloc recycling: %llu warps served from their slot's ranges, %llu not, %llu "
      "lanes against the model, %llu ranges kept (%llu frees of several ranges), %llu units "
      "left in slots (a warp's ranges at most %u units, %u words a slot)\n",
      hits, misses, wrong, kept, multi, (unsigned long long)held, h.recycle_cap, words);
  EXPECT_EQ(nulls, 0u);
  EXPECT_EQ(wrong, 0u) << "a lane served other than the model says";
  EXPECT_GT(hits, warps * rounds / 16) << "the family reaches slots that serve";
  EXPECT_GT(misses, warps) << "and slots that do not";
  EXPECT_GT(multi, 0u) << "and frees of several ranges";
  EXPECT_EQ(a.stashed_units(), held) << "the slots hold what the model says";
  EXPECT_EQ(a.taken_slots(), 0u);
  EXPECT_EQ(a.free_units(), a.units()) << "units lost (free in the bitmap + in slots)";
}

namespace {
// One warp: 1 KiB a lane, by one malloc of the whole warp (halves = false) or by two mallocs of
// half a warp each; then the whole warp frees.
__global__ void malloc_then_free_warp(alloc::rw_malloc_handle h, bool halves, unsigned *pieces) {
  if (blockIdx.x > 0) // a larger launch: its other warps ask nothing
    return;
  const unsigned lane = threadIdx.x;
  void *p = nullptr;
  if (!halves)
    p = h.malloc(1024);
  else if (lane < 16) // two mallocs: the halves diverge here
    p = h.malloc(1024);
  __syncwarp();
  if (halves && lane >= 16)
    p = h.malloc(1024);
  __syncwarp();
  const std::uint64_t u = p ? h.unit_of(p) : ~0ull;
  const std::uint64_t prev = __shfl_up_sync(0xffffffffu, u + 4, 1);
  const unsigned begins = __ballot_sync(0xffffffffu, lane == 0 || prev != u);
  if (lane == 0)
    *pieces = p ? unsigned(__popc(int(begins))) : 0u;
  __syncwarp();
  h.free(p);
}
} // namespace

// A warp's blocks in several ranges are kept in its slot only when one malloc laid them out (the
// first block of each range carries that malloc's mark): a pool of 10-unit runs puts two 1 KiB
// blocks (4 units) in each, so a warp's 32 blocks lie in about 16 ranges. Kept after one malloc of
// the warp; after two mallocs of half a warp each (blocks of different ages, as a long churn leaves
// a warp), into the bitmap.
TEST(MallocGpu, RwMallocKeepsSeveralRangesOfOneMallocOnly) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(rw_cfg(4ull << 30, 32));
  ASSERT_GE(a.handle().recycle_cap, 128u);
  std::vector<unsigned long long> w(a.bitmap().size(), 0);
  for (std::uint64_t u = 10; u < a.units(); u += 11) // runs of 10 free units, one used between
    w[u / 64] |= 1ull << (u % 64);
  const std::uint64_t used = a.units() / 11; // units 10, 21, 32, ...
  alloc::device_array<unsigned> pieces(1);
  for (const bool halves : {false, true}) {
    a.load(w);
    malloc_then_free_warp<<<1, 32>>>(a.handle(), halves, pieces.get());
    sync_or_throw();
    unsigned n = 0;
    pieces.download(&n, 1);
    std::printf("rw_malloc, %s: blocks in %u ranges, %llu units kept in slots\n",
                halves ? "two mallocs of half a warp" : "one malloc of the warp", n,
                (unsigned long long)a.stashed_units());
    EXPECT_GE(n, 8u) << "the blocks lie in several ranges";
    EXPECT_EQ(a.stashed_units(), halves ? 0u : 128u);
    EXPECT_EQ(a.free_units(), a.units() - used) << "units lost";
    EXPECT_EQ(a.taken_slots(), 0u);
  }
}

// Several ranges are kept only in a launch whose warps fit the warp slots (launch_words): the same
// one malloc of a warp, in a launch of one more warp than there are slots (the others ask
// nothing), leaves its blocks in about 16 ranges, and they go to the bitmap.
TEST(MallocGpu, RwMallocKeepsOneRangeInALaunchLargerThanTheSlots) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(rw_cfg(4ull << 30, 32));
  const auto h = a.handle();
  std::vector<unsigned long long> w(a.bitmap().size(), 0);
  for (std::uint64_t u = 10; u < a.units(); u += 11) // runs of 10 free units, one used between
    w[u / 64] |= 1ull << (u % 64);
  alloc::device_array<unsigned> pieces(1);
  for (const unsigned blocks :
       {1u, h.stash_sms * h.stash_per_sm, h.stash_sms * h.stash_per_sm + 1}) {
    a.load(w);
    malloc_then_free_warp<<<blocks, 32>>>(h, false, pieces.get());
    sync_or_throw();
    unsigned n = 0;
    pieces.download(&n, 1);
    const bool fits = blocks <= h.stash_sms * h.stash_per_sm;
    std::printf(
        "rw_malloc, a launch of %u warps (%u slots): blocks in %u ranges, %llu units kept\n",
        blocks, h.stash_sms * h.stash_per_sm, n, (unsigned long long)a.stashed_units());
    EXPECT_GE(n, 8u) << "the blocks lie in several ranges";
    EXPECT_EQ(a.stashed_units(), fits ? 128u : 0u);
    EXPECT_EQ(a.taken_slots(), 0u);
  }
}

// Ranges recycled by a launch of full warps of 1 KiB requests are drained before a refusal: a fill
// of 4 KiB requests (too large for a range) is served to the last fitting one.
TEST(MallocGpu, RwMallocRecycledRangesDrainedBeforeRefusal) {
  GPUPROBE_REQUIRE_GPU();
  alloc::rw_malloc a(rw_cfg(4ull << 30));
  expect_clean(churn(a.handle(), k_threads, 1, {1024, 0}, a.data(), a.pool_bytes()), k_threads,
               "rw_malloc, recycled ranges");
  std::printf("rw_malloc, recycled ranges: %llu units in slots after the launch's free\n",
              (unsigned long long)a.stashed_units());
  EXPECT_GT(a.stashed_units(), 100'000u) << "the free left ranges in the slots";
  expect_exact_fill(a, "rw_malloc, recycled ranges");
}

// Soak: CoRW with 64-bit words, 2^20 threads over 2^22 pages, about half the holders
// freeing each round, until GPUPROBE_SOAK_OPS get_page + free_page; an owner word per page catches
// any page handed to two threads. Then every page is taken by exactly one of pages + 4096 threads.
TEST(Soak, CorwPagesNeverTwiceThenExactOutOfPages) {
  GPUPROBE_REQUIRE_GPU();
  alloc::pool_config pc;
  pc.pages = 1u << 22;
  pc.page_bytes = 0; // ids only
  alloc::corw<unsigned long long> a(pc);
  const unsigned n = 1u << 20, extra = 4096, m = pc.pages + extra;
  alloc::device_array<alloc::page_t> held(m);
  alloc::device_array<unsigned> owner(pc.pages);
  alloc::device_array<unsigned long long> c(3);
  alloc::cuda_or_throw(cudaMemset(held.get(), 0xff, sizeof(alloc::page_t) * m), "cudaMemset");
  owner.zero();
  c.zero();
  unsigned long long ops = 0, v[3] = {0, 0, 0};
  unsigned round = 0;
  for (; double(ops) < soak_ops(); ++round) {
    corw_soak_round<<<alloc::blocks_for(n), alloc::k_block>>>(a.handle(), n, held.get(),
                                                              owner.get(), round, c.get());
    if (round % 64 == 63) {
      sync_or_throw();
      c.download(v, 3);
      ops = v[2];
    }
  }
  corw_release_all<<<alloc::blocks_for(n), alloc::k_block>>>(a.handle(), n, held.get(), owner.get(),
                                                             c.get());
  sync_or_throw();
  c.download(v, 3);
  std::printf("corw soak: %u rounds, %llu operations, %llu overlaps, %llu out of pages\n", round,
              v[2], v[0], v[1]);
  EXPECT_GE(double(v[2]), soak_ops());
  EXPECT_EQ(v[0], 0u) << "a page held by two threads";
  EXPECT_EQ(v[1], 0u) << "out of pages with half the pool free";
  c.zero();
  corw_soak_round<<<alloc::blocks_for(m), alloc::k_block>>>(a.handle(), m, held.get(), owner.get(),
                                                            0, c.get());
  sync_or_throw();
  c.download(v, 3);
  std::printf("corw fill: %llu of %u pages taken, %llu refused\n", v[2], pc.pages, v[1]);
  EXPECT_EQ(v[2], pc.pages) << "exact out of pages";
  EXPECT_EQ(v[1], extra);
  EXPECT_EQ(v[0], 0u);
}
