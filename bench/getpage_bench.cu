// gpuprobe-bench: BM_getpage/<allocator>/threads:<n>/free_permille:<f> — one get_page per thread,
// timed with CUDA events (UseManualTime) after an untimed warm-up launch, the pool reloaded to the
// same random occupancy before every iteration; then one untimed launch with step counters for
// TAS/WAS, checked (every thread got a page, no page twice) before the numbers are reported.
#include "allocators/registry.cuh"
#include "analysis/models.hpp"
#include "bench/peers/peers.hpp"
#include "bench_common.hpp"
#include "common/build_info.hpp"
#include "common/device_info.hpp"
#include "common/units.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using gpuprobe::alloc::invalid_page;
using gpuprobe::alloc::page_t;

constexpr std::uint64_t k_cuda_malloc_cap = 1ull << 18; // device malloc of 2^20 blocks: ~0.3 s each
using gpuprobe::bench::check;

// The free clusters of a pattern (M of Eq. 8): maximal runs of free pages.
double free_clusters(const std::vector<std::uint8_t> &used) {
  double m = 0;
  for (std::size_t i = 0; i < used.size(); ++i)
    m += !used[i] && (i == 0 || used[i - 1]);
  return m;
}

// The occupancy pattern of a (T, A) and its free clusters, made once per process and kept: the
// grid runs allocator by allocator, so each (T, A) comes back once per allocator (a 2^28-page
// pattern took 0.3-0.5 s to draw and count every time).
struct occupancy_state {
  std::vector<std::uint8_t> used;
  double clusters = 0;
};
const occupancy_state &occupancy(std::uint64_t T, std::uint64_t A) {
  static std::map<std::pair<std::uint64_t, std::uint64_t>, occupancy_state> kept;
  auto [it, fresh] = kept.try_emplace({T, A});
  if (fresh) {
    it->second.used = gpuprobe::alloc::random_occupancy(T, A, 42);
    it->second.clusters = free_clusters(it->second.used);
  }
  return it->second;
}

template <class H> __global__ void get_kernel(H h, unsigned n, page_t *out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n)
    out[t] = h.get_page();
}

template <class H> __global__ void steps_kernel(H h, unsigned n, page_t *out, unsigned *steps) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  gpuprobe::alloc::count_steps s;
  out[t] = h.get_page(s);
  steps[t] = s.steps;
}

struct theory {
  double tas = 0, was = 0;
};

// CRW's counters beside Eq. 9 at this occupancy's M (TAS_theory), which takes Eq. 8's
// p = (M - 1) / (A + M - 1). Here a thread's last page is a free page of the pattern, and the page
// after it is used when the last page ends its cluster: p = M / A (TAS_theory_occupancy).
// next_used measures p: the threads whose first step (the page after their last) did not serve
// them (steps: each thread's, from the untimed launch).
void crw_counters(benchmark::State &st, double pages, double free_pages, double clusters,
                  const std::vector<unsigned> &steps) {
  namespace a = gpuprobe::analysis;
  const double n = double(steps.size());
  const double walked =
      double(std::count_if(steps.begin(), steps.end(), [](unsigned k) { return k > 1; }));
  st.counters["clusters"] = clusters;
  st.counters["next_used"] = walked / n;
  st.counters["TAS_theory_occupancy"] = a::crw_tas_at(pages, free_pages, n, clusters / free_pages);
  st.counters["TAS_theory_next_used"] = a::crw_tas_at(pages, free_pages, n, walked / n);
}

template <class A>
void bm_getpage(
    benchmark::State &st, const std::string &name, std::uint64_t n, int permille,
    std::function<theory(double pages, double free_pages, double threads, double clusters)> model) {
  const std::uint64_t T = gpuprobe::alloc::pages_for(n, permille / 1000.0),
                      free_pages = T * std::uint64_t(permille) / 1000;
  const auto &state = occupancy(T, free_pages);
  const auto &occ = state.used;
  gpuprobe::alloc::pool_config c;
  c.pages = page_t(T);
  c.page_bytes = 0; // ids only: get_page does not touch the pages
  A &a = gpuprobe::bench::current<A>(name + "/" + std::to_string(T), [&] { return new A(c); });
  gpuprobe::alloc::device_array<page_t> out(n);
  gpuprobe::alloc::device_array<unsigned> steps(n);
  const unsigned blocks = gpuprobe::alloc::blocks_for(n);
  const auto packed = A::pack(occ); // packed once, uploaded before every iteration
  // CRW keeps each thread's last page across calls, and Eq. 7 describes the call after one that
  // gave every thread a page: its rows reload the occupancy but keep the last pages the warm-up
  // call left (a first call, with no last page, walks as RW does: reported apart, TAS_first).
  constexpr bool keeps_last = std::is_same_v<A, gpuprobe::alloc::crw>;
  auto load = [&] {
    if constexpr (keeps_last)
      a.load_packed_keep_last(packed);
    else
      a.load_packed(packed);
  };
  auto launch = [&] {
    get_kernel<<<blocks, gpuprobe::alloc::k_block>>>(a.handle(), unsigned(n), out.get());
  };
  std::vector<page_t> ids(n);
  std::vector<unsigned> s(n);
  const auto count_steps = [&] { // one untimed launch with step counters, read back
    steps_kernel<<<blocks, gpuprobe::alloc::k_block>>>(a.handle(), unsigned(n), out.get(),
                                                       steps.get());
    check(cudaDeviceSynchronize(), "steps kernel");
    out.download(ids.data(), n);
    steps.download(s.data(), n);
  };
  if constexpr (keeps_last) { // the first call, from no last page: its own TAS
    a.load_packed(packed);
    count_steps();
    st.counters["TAS_first"] = std::accumulate(s.begin(), s.end(), 0.0) / double(n);
  }
  // Warm-up launch (module load, first touch of the pool's lines; CRW: every last page): not timed.
  a.load_packed(packed);
  launch();
  check(cudaDeviceSynchronize(), "warm-up");
  gpuprobe::bench::time_iterations(st, load, launch);
  // Untimed: steps and the correctness check.
  load();
  count_steps();
  const auto bad = std::count(ids.begin(), ids.end(), invalid_page);
  std::sort(ids.begin(), ids.end());
  if (bad || std::adjacent_find(ids.begin(), ids.end()) != ids.end() || ids.back() >= T) {
    st.SkipWithError(
        ("verification failed: " + std::to_string(bad) + " threads without a page or a page twice")
            .c_str());
    return;
  }
  double was = 0;
  std::uint64_t warps = 0;
  for (std::uint64_t w = 0; w < n; w += 32, ++warps)
    was += *std::max_element(s.begin() + long(w), s.begin() + long(std::min(n, w + 32)));
  st.counters["pages_per_s"] =
      benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["TAS"] = std::accumulate(s.begin(), s.end(), 0.0) / double(n);
  st.counters["WAS"] = was / double(warps);
  st.counters["pages"] = double(T);
  st.counters["free_pages"] = double(free_pages);
  if (model) {
    const auto th = model(double(T), double(free_pages), double(n), state.clusters);
    st.counters["TAS_theory"] = th.tas;
    if (th.was > 0)
      st.counters["WAS_theory"] = th.was;
  }
  if constexpr (keeps_last)
    crw_counters(st, double(T), double(free_pages), state.clusters, s);
}

__global__ void malloc_kernel(gpuprobe::alloc::cuda_malloc_handle h, unsigned n, char **out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n)
    out[t] = h.get_page();
}
__global__ void mfree_kernel(gpuprobe::alloc::cuda_malloc_handle h, unsigned n, char **out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n && out[t])
    h.free_page(out[t]);
}

// CUDA device malloc of 256-byte blocks; the heap (set once per process) holds every request
// twice over, so the free fraction does not apply.
void bm_cuda_malloc(benchmark::State &st, std::uint64_t n) {
  static std::unique_ptr<gpuprobe::alloc::cuda_malloc> m;
  if (!m) {
    gpuprobe::alloc::pool_config c;
    c.pages = 1;
    c.page_bytes = 256;
    gpuprobe::alloc::ensure_malloc_heap(
        gpuprobe::bench::k_heap_bytes); // one heap size for every case of the process
    m = std::make_unique<gpuprobe::alloc::cuda_malloc>(c, 1.0);
  }
  gpuprobe::alloc::device_array<char *> out(n);
  const unsigned blocks = gpuprobe::alloc::blocks_for(n);
  gpuprobe::event_timer timer;
  std::uint64_t nulls = 0;
  malloc_kernel<<<blocks, gpuprobe::alloc::k_block>>>(m->handle(), unsigned(n),
                                                      out.get()); // warm-up, not timed
  mfree_kernel<<<blocks, gpuprobe::alloc::k_block>>>(m->handle(), unsigned(n), out.get());
  check(cudaDeviceSynchronize(), "warm-up");
  for (auto _ : st) {
    st.SetIterationTime(timer.ms([&] {
      malloc_kernel<<<blocks, gpuprobe::alloc::k_block>>>(m->handle(), unsigned(n), out.get());
    }) * 1e-3);
    std::vector<char *> p(n);
    out.download(p.data(), n);
    nulls += std::uint64_t(std::count(p.begin(), p.end(), nullptr));
    mfree_kernel<<<blocks, gpuprobe::alloc::k_block>>>(m->handle(), unsigned(n), out.get());
    check(cudaDeviceSynchronize(), "free kernel");
  }
  if (nulls)
    st.SkipWithError(
        ("device malloc returned nullptr " + std::to_string(nulls) + " times").c_str());
  st.counters["pages_per_s"] =
      benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
}

theory rw_theory(double T, double A, double N, double) {
  return {gpuprobe::analysis::rw_tas(T, A, N), gpuprobe::analysis::rw_was_bound(T, A, N)};
}
template <int W> theory bm_theory(double T, double A, double N, double) {
  return {gpuprobe::analysis::rw_bm_tas(T, A, N, W),
          gpuprobe::analysis::rw_bm_was_bound(T, A, N, W)};
}
theory crw_theory(double T, double A, double N, double M) {
  return {gpuprobe::analysis::crw_tas(T, A, N, M), 0};
}
theory queue_theory(double, double, double N, double) {
  return {gpuprobe::analysis::queue_tas(N), gpuprobe::analysis::queue_was(N)};
}

// The RW paper's model of each page allocator (Eqs. 1-9); bump has none.
using theory_fn = theory (*)(double, double, double, double);
template <class A> theory_fn theory_of() {
  namespace a = gpuprobe::alloc;
  if constexpr (std::is_same_v<A, a::rw>)
    return rw_theory;
  else if constexpr (std::is_same_v<A, a::rw_bm<std::uint32_t>> ||
                     std::is_same_v<A, a::corw<std::uint32_t>>)
    return bm_theory<32>;
  else if constexpr (std::is_same_v<A, a::rw_bm<unsigned long long>> ||
                     std::is_same_v<A, a::corw<unsigned long long>>)
    return bm_theory<64>;
  else if constexpr (std::is_same_v<A, a::crw>)
    return crw_theory;
  else if constexpr (std::is_same_v<A, a::queue> || std::is_same_v<A, a::queue_warp>)
    return queue_theory;
  else
    return nullptr;
}

} // namespace

namespace gpuprobe::bench {
flags &options() {
  static flags f;
  return f;
}
void add_case(const std::string &name, std::function<void(benchmark::State &)> fn, int iterations) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [fn = std::move(fn)](benchmark::State &st) {
                                 if (!options().gpu) {
                                   st.SkipWithError("no CUDA device");
                                 } else {
                                   try {
                                     fn(st);
                                   } catch (const std::exception &e) {
                                     st.SkipWithError(e.what());
                                   }
                                 }
                                 ++options().cases_run;
                                 if (st.error_occurred())
                                   ++options().cases_failed;
                               })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(iterations);
}

// Our flags, listed before Google Benchmark's own in --help.
constexpr const char *k_help =
    R"(gpuprobe-bench: Google Benchmark cases of gpuprobe's allocators and workloads on CUDA device 0.
gpuprobe flags (given as --flag or --flag=VALUE):
  --gpuprobe_full             every thread count and free fraction of BM_getpage (default: a smaller grid)
  --gpuprobe_uncapped         lift the caps of the slow cases (cuda_malloc, ouroboros_chunk, xmalloc > 2 KiB)
  --gpuprobe_tuning=FILE      TLB scope of the scoped workloads: the scope gpuprobe tune measured (its
                              tuning.json)
  --gpuprobe_tlb_scope=SIZE   TLB scope given directly: 64G, 512M, 2097152 (bytes)
  --gpuprobe_peers_heap=SIZE  heap of every allocator in BM_peers (default 32G; bench/peers/README.md)
  --gpuprobe_peers_no_ladder  BM_peers without its occupancy ladder (the largest occupancy served)
  --gpuprobe_peers_warp_clock BM_peers: 5 more launches with a clock on each warp, untimed
                              (warp_cycles_p50/p90/p99/max/slowest, warp_start_spread_us)
  --gpuprobe_rw_stash=N       rw_malloc's stashes per SM (default 64; 0: none; docs/rw-malloc.md)
  --gpuprobe_rw_optimistic=B  1: a warp of rw_malloc that asks no stash claims its first region
                              unread; 0 (default): it reads the region first (docs/rw-malloc.md)
  --gpuprobe_rw_refill=N       rw_malloc's stash refill: a run holding the warp's request N times,
                              for warps that ask more than a unit a lane (1-16, default 4;
                              docs/rw-malloc.md)
  --gpuprobe_rw_refill_small=N the same for warps that ask at most a unit a lane (1-16,
                              default 8)
  --gpuprobe_rw_stash_times=N  a warp asks its slot's stash when a stash holds its request N
                              times (1-64, default 8; docs/rw-malloc.md)
  --gpuprobe_rw_stash_share=N  all stashes together hold at most 1/N of the pool (2-64, default 16)
  --gpuprobe_rw_sm_slices=N    rw_malloc's random regions from SM s's slice s % N of N equal
                              slices of the pool (0-1024, default 0: the whole pool; an experiment,
                              docs/rw-malloc.md)
  --gpuprobe_rw_recycle_share=N  a full warp's freed range goes to its warp slot's stash when
                              it holds at most 1/N of the pool over the slots (0: off, 1-64,
                              default 8; docs/rw-malloc.md)
  --gpuprobe_rw_recycle_ranges=N  words a warp slot holds: a freed warp's blocks in up to N ranges
                              are recycled, in launches whose warps fit the warp slots (1-32,
                              default 32; docs/rw-malloc.md)
  --gpuprobe_rw_bulk=N         the bulk pass: a warp whose requests are all k units, k a power of
                              two up to N, takes a region's aligned slots in one pass (0: off, or
                              1, 2, 4, 8, 16, 32; default 8; docs/rw-malloc.md)
  --gpuprobe_rw_sweeps=N       sweeps a warp of mixed sizes makes in a fragmented region: one
                              request a word, matched by size class (0: off, 1-8, default 0;
                              docs/rw-malloc.md)
Example: gpuprobe-bench --benchmark_filter='BM_getpage/corw32' --benchmark_format=json --benchmark_out=getpage.json
A run in which every case that ran failed exits with status 1.

Google Benchmark flags:
)";

namespace {
// A flag's value as a whole number in [lo, hi], written as one ("4", not "4x" or "04"); else none.
std::optional<int> whole_in(const char *value, int lo, int hi) {
  const int n = std::atoi(value);
  if (n < lo || n > hi || std::to_string(n) != value)
    return std::nullopt;
  return n;
}
// rw_malloc's whole-number flags, --NAME=N with N in [lo, hi].
struct whole_flag {
  const char *name;
  int lo, hi;
  const char *what; // what N counts, in the line that refuses it
  void (*set)(flags &, int);
  bool power_of_two = false; // N must be 0 or a power of two
};
const whole_flag k_whole_flags[] = {
    {"--gpuprobe_rw_stash", 0, 64, "a number of stashes per SM",
     [](flags &o, int n) { o.rw_stash_per_sm = n; }},
    {"--gpuprobe_rw_refill", 1, 16, "a number of requests",
     [](flags &o, int n) { o.rw_refill_times = unsigned(n); }},
    {"--gpuprobe_rw_refill_small", 1, 16, "a number of requests",
     [](flags &o, int n) { o.rw_refill_small = unsigned(n); }},
    {"--gpuprobe_rw_stash_times", 1, 64, "a number of requests",
     [](flags &o, int n) { o.rw_stash_times = unsigned(n); }},
    {"--gpuprobe_rw_stash_share", 2, 64, "N of a share 1/N of the pool",
     [](flags &o, int n) { o.rw_stash_share = unsigned(n); }},
    {"--gpuprobe_rw_sm_slices", 0, 1024, "a number of slices",
     [](flags &o, int n) { o.rw_sm_slices = unsigned(n); }},
    {"--gpuprobe_rw_recycle_share", 0, 64, "N of a share 1/N of the pool (0: off)",
     [](flags &o, int n) { o.rw_recycle_share = n; }},
    {"--gpuprobe_rw_recycle_ranges", 1, 32, "a number of ranges",
     [](flags &o, int n) { o.rw_recycle_ranges = unsigned(n); }},
    {"--gpuprobe_rw_bulk", 0, 32, "0 or a power of two (units)",
     [](flags &o, int n) { o.rw_bulk_max = n; }, true},
    {"--gpuprobe_rw_sweeps", 0, 8, "a number of sweeps", [](flags &o, int n) { o.rw_sweeps = n; }}};
// The whole-number flag `arg` gives (NAME=...), else null.
const whole_flag *whole_flag_of(const char *arg) {
  for (const auto &w : k_whole_flags) {
    const std::size_t n = std::strlen(w.name);
    if (std::strncmp(arg, w.name, n) == 0 && arg[n] == '=')
      return &w;
  }
  return nullptr;
}
} // namespace

// gpuprobe's own flags (--gpuprobe_*) into options(); the rest, for Google Benchmark, into `args`.
// Returns "" or the one line that refuses a flag.
std::string take_gpuprobe_flags(int argc, char **argv, std::vector<char *> &args) {
  auto &o = options();
  for (int i = 0; i < argc; ++i) {
    try {
      if (std::strcmp(argv[i], "--gpuprobe_uncapped") == 0) {
        o.uncapped = true;
      } else if (std::strcmp(argv[i], "--gpuprobe_full") == 0) {
        o.full_grid = true;
      } else if (std::strcmp(argv[i], "--gpuprobe_peers_no_ladder") == 0) {
        o.peers_ladder = false;
      } else if (std::strcmp(argv[i], "--gpuprobe_peers_warp_clock") == 0) {
        o.peers_warp_clock = true;
      } else if (std::strncmp(argv[i], "--gpuprobe_tlb_scope=", 21) == 0) {
        try {
          o.tlb_scope_bytes = parse_bytes(argv[i] + 21); // 64G, 2M or bytes, as everywhere
        } catch (const std::exception &e) {
          return std::string("--gpuprobe_tlb_scope: ") + e.what();
        }
        o.tlb_scope_source = "--gpuprobe_tlb_scope";
      } else if (std::strncmp(argv[i], "--gpuprobe_tuning=", 18) == 0) {
        read_tlb_scope(argv[i] + 18);
      } else if (std::strncmp(argv[i], "--gpuprobe_profile=", 19) == 0) {
        return std::string(
                   "--gpuprobe_profile was replaced by --gpuprobe_tuning=tuning.json: the ") +
               "scope is the one gpuprobe tune measured (one rule for tune and the bench)";
      } else if (std::strncmp(argv[i], "--gpuprobe_peers_heap=", 22) == 0) {
        try {
          o.peers_heap_bytes = parse_bytes(argv[i] + 22);
        } catch (const std::exception &e) {
          return std::string("--gpuprobe_peers_heap: ") + e.what();
        }
      } else if (std::strncmp(argv[i], "--gpuprobe_rw_optimistic=", 25) == 0) {
        const std::string v = argv[i] + 25;
        if (v != "0" && v != "1")
          return std::string("--gpuprobe_rw_optimistic: 0 or 1");
        o.rw_optimistic = v == "1";
      } else if (const auto *w = whole_flag_of(argv[i])) {
        const auto n = whole_in(argv[i] + std::strlen(w->name) + 1, w->lo, w->hi);
        if (!n || (w->power_of_two && (*n & (*n - 1))))
          return std::string(w->name) + ": " + w->what + ", " + std::to_string(w->lo) + " to " +
                 std::to_string(w->hi);
        w->set(o, *n);
      } else if (std::strncmp(argv[i], "--gpuprobe", 10) == 0) {
        return std::string("unknown flag '") + argv[i] + "' (--help lists the gpuprobe flags)";
      } else {
        args.push_back(argv[i]);
      }
    } catch (const std::exception &e) {
      return e.what();
    }
  }
  return "";
}

// The JSON context: the GPU (when there is one), the commit, the caps, the scope, the peers.
void add_context(const device_info *gpu, std::uint64_t peers_heap) {
  const auto &o = options();
  if (gpu) {
    const device_info &dev = *gpu;
    benchmark::AddCustomContext("gpu", dev.name);
    benchmark::AddCustomContext("gpu_uuid", dev.uuid);
    benchmark::AddCustomContext("sm_count", std::to_string(dev.sm_count));
    benchmark::AddCustomContext("driver", cuda_version_string(dev.driver_version));
    benchmark::AddCustomContext("runtime", cuda_version_string(dev.runtime_version));
  } else {
    benchmark::AddCustomContext("gpu", "none (cases fail with an error when run)");
  }
  benchmark::AddCustomContext("gpuprobe_commit", git_commit());
  benchmark::AddCustomContext(
      "cuda_malloc_cap",
      o.uncapped ? "none"
                 : "BM_getpage threads <= 262144, BM_malloc threads <= "
                   "65536, BM_peers threads <= 131072 and no churn (--gpuprobe_uncapped "
                   "lifts it)");
  benchmark::AddCustomContext("tlb_scope_bytes", o.tlb_scope_bytes
                                                     ? std::to_string(o.tlb_scope_bytes) +
                                                           " from " + o.tlb_scope_source
                                                     : "none");
  benchmark::AddCustomContext("peers_heap_bytes", std::to_string(peers_heap));
  // rw_malloc's counts where 0 is a value, as given, or "default" (-1: the flag was not given).
  const auto given_count = [](int v) { return v < 0 ? std::string("default") : std::to_string(v); };
  benchmark::AddCustomContext("rw_stash_per_sm", given_count(o.rw_stash_per_sm));
  benchmark::AddCustomContext("rw_optimistic", o.rw_optimistic ? "1" : "0");
  // rw_malloc's multiples as given, or "default" (0: the flag was not given).
  const auto given = [](unsigned v) { return v ? std::to_string(v) : std::string("default"); };
  benchmark::AddCustomContext("rw_refill_times", given(o.rw_refill_times));
  benchmark::AddCustomContext("rw_refill_small", given(o.rw_refill_small));
  benchmark::AddCustomContext("rw_stash_times", given(o.rw_stash_times));
  benchmark::AddCustomContext("rw_stash_share", given(o.rw_stash_share));
  benchmark::AddCustomContext("rw_sm_slices", given(o.rw_sm_slices));
  benchmark::AddCustomContext("rw_recycle_share", given_count(o.rw_recycle_share));
  benchmark::AddCustomContext("rw_recycle_ranges", given(o.rw_recycle_ranges));
  benchmark::AddCustomContext("rw_bulk", given_count(o.rw_bulk_max));
  benchmark::AddCustomContext("rw_sweeps", given_count(o.rw_sweeps));
  benchmark::AddCustomContext("peers", peers::peers_built());
  benchmark::AddCustomContext(
      "grid",
      o.full_grid ? "full" : "default (--gpuprobe_full for every thread count and free fraction)");
}

// BM_getpage: each page allocator and cuda_malloc over the grid. Default: 2^12, 2^16, 2^20
// threads and full occupancy (`full` threads) at 50 % and 0.5 % free; --gpuprobe_full:
// 2^10..2^20 (x4) at 50, 10, 1 and 0.5 % free.
void register_getpage_benchmarks(std::uint64_t full) {
  const auto &o = options();
  std::vector<std::pair<std::string, std::uint64_t>> threads; // label, count
  for (std::uint64_t t = 1ull << 10; t <= 1ull << 20; t <<= 2)
    if (o.full_grid || t == (1ull << 12) || t == (1ull << 16) || t == (1ull << 20))
      threads.emplace_back(std::to_string(t), t);
  threads.emplace_back(o.gpu ? std::to_string(full) : "full", full);
  const std::vector<int> permilles =
      o.full_grid ? std::vector<int>{500, 100, 10, 5} : std::vector<int>{500, 5};
  using reg_fn = std::function<void(benchmark::State &, std::uint64_t, int)>;
  std::vector<std::pair<std::string, reg_fn>> allocators;
  alloc::for_each_type(alloc::page_allocators{}, [&](auto t) {
    using A = typename decltype(t)::type;
    const char *name = alloc::name_of<A>;
    allocators.emplace_back(name, [name](benchmark::State &st, std::uint64_t n, int f) {
      bm_getpage<A>(st, name, n, f, theory_of<A>());
    });
  });
  allocators.emplace_back(
      "cuda_malloc", [](benchmark::State &st, std::uint64_t n, int) { bm_cuda_malloc(st, n); });
  for (const auto &[name, fn] : allocators)
    for (int f : permilles)
      for (const auto &[label, n] : threads) {
        if (name == "cuda_malloc" && ((n > k_cuda_malloc_cap && !o.uncapped) || f != 500))
          continue;
        const std::string full_name =
            "BM_getpage/" + name + "/threads:" + label + "/free_permille:" + std::to_string(f);
        add_case(full_name, [fn = fn, n = n, f](benchmark::State &st) { fn(st, n, f); });
      }
}

} // namespace gpuprobe::bench

int main(int argc, char **argv) {
  namespace gb = gpuprobe::bench;
  auto &o = gb::options();
  std::vector<char *> args; // what is left for Google Benchmark
  if (const std::string why = gb::take_gpuprobe_flags(argc, argv, args); !why.empty()) {
    std::fprintf(stderr, "gpuprobe-bench: %s\n", why.c_str());
    return 1;
  }
  if (o.tlb_scope_bytes)
    std::fprintf(stderr, "gpuprobe-bench: TLB scope %s (from %s)\n",
                 gpuprobe::format_bytes(double(o.tlb_scope_bytes)).c_str(),
                 o.tlb_scope_source.c_str());
  for (char *a : args)
    if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0)
      std::fputs(gb::k_help, stdout);
  int n_args = int(args.size());
  int count = 0;
  o.gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  if (!o.gpu)
    (void)cudaGetLastError(); // the failed query's error is not left for the first case
  std::optional<gpuprobe::device_info> dev;
  if (o.gpu)
    dev = gpuprobe::query_device(0);
  const std::uint64_t full =
      dev ? std::uint64_t(dev->sm_count) * std::uint64_t(dev->max_threads_per_sm) : 0;
  const std::uint64_t peers_heap =
      o.peers_heap_bytes ? o.peers_heap_bytes : gb::peers::k_default_heap_bytes;
  gb::add_context(dev ? &*dev : nullptr, peers_heap);
  gb::register_tlb_scoped_benchmarks();
  gb::register_getpage_benchmarks(full);
  gb::register_malloc_benchmarks();
  gb::register_workload_benchmarks();
  gb::peers::register_peer_benchmarks(peers_heap);
  bool listing = false; // a list or the help needs no GPU; running a case does
  for (char *a : args)
    listing |= std::strncmp(a, "--benchmark_list_tests", 22) == 0 ||
               std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0;
  benchmark::Initialize(&n_args, args.data());
  if (benchmark::ReportUnrecognizedArguments(n_args, args.data()))
    return 1;
  if (!o.gpu && !listing) { // one line, not a failed row for each of hundreds of cases
    std::fprintf(stderr, "gpuprobe-bench: no CUDA device: no case was run, every one counts as "
                         "failed (--benchmark_list_tests lists them without a GPU)\n");
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (o.cases_run > 0 && o.cases_failed == o.cases_run) {
    std::fprintf(stderr, "gpuprobe-bench: all %d cases that ran failed (their errors are above)\n",
                 o.cases_run);
    return 1;
  }
  return 0;
}
