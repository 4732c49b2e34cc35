// BM_malloc/<allocator>/size:<bytes|mixed|4096+free>/threads:<n>/free_permille:<f>: one malloc per
// thread (4096+free: malloc then free at once), timed with CUDA events after an untimed warm-up,
// the allocator reset to the same state before every iteration; then the ranges of one more
// launch are checked (every thread served, 16-byte aligned, inside the pool, disjoint).
// BM_utilization/<allocator>/unit:<u>/size:<s>: allocate until out of memory (RW paper Fig. 15).
#include "allocators/allocators.cuh"
#include "allocators/range_check.hpp"
#include "allocators/request_sizes.hpp"
#include "bench_common.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuprobe::bench {
namespace {

template <class H>
__global__ void malloc_kernel(H h, unsigned n, alloc::request_sizes sizes, bool free_at_once,
                              char **out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  char *p = static_cast<char *>(h.malloc(sizes(t)));
  if (free_at_once && p) {
    p[0] = 1; // touch it, then give it back
    h.free(p);
    p = nullptr; // nothing left for the untimed free kernel
  }
  out[t] = p;
}
template <class H> __global__ void free_kernel(H h, unsigned n, char **out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n && out[t])
    h.free(out[t]);
}

// Ranges of one launch: the number of threads without memory, and of bad ranges.
std::pair<std::uint64_t, std::uint64_t> verify(const alloc::device_array<char *> &out, unsigned n,
                                               alloc::request_sizes sizes, const char *lo,
                                               std::uint64_t bytes) {
  std::vector<char *> p(n);
  out.download(p.data(), n);
  std::vector<alloc::byte_range> r;
  const std::uint64_t nulls = alloc::append_ranges(r, p, sizes);
  return {nulls,
          alloc::count_bad_ranges(std::move(r), reinterpret_cast<std::uintptr_t>(lo), bytes)};
}

struct cell {
  std::string alloc;
  std::uint32_t size; // 0: mixed
  bool free_at_once;
  std::uint64_t threads;
  int permille;
};

// Bytes a request takes in RW_malloc / Ouroboros (rounded), on average.
double rounded_mean(const cell &c, std::uint32_t unit) {
  const alloc::request_sizes s{c.size, 0};
  double sum = 0;
  for (std::uint64_t t = 0; t < 4096; ++t)
    sum += std::ceil(double(s(t)) / unit) * unit;
  return sum / 4096;
}
// Pool: at least 16 GiB, and large enough that one launch takes at most half of the free space.
std::uint64_t pool_bytes(const cell &c) {
  const double need = 2.0 * double(c.threads) *
                      std::max(rounded_mean(c, 256), rounded_mean(c, 8192) / 2) /
                      (c.permille / 1000.0);
  return std::max<std::uint64_t>(16 * k_gib, (std::uint64_t(need) + k_gib - 1) / k_gib * k_gib);
}
bool fits(const cell &c) { return pool_bytes(c) <= 36 * k_gib; }

template <class H>
void run_cell(benchmark::State &st, const cell &c, H h, const std::function<void()> &reset,
              const char *lo, std::uint64_t bytes) {
  const unsigned n = unsigned(c.threads), blocks = alloc::blocks_for(n);
  const alloc::request_sizes sizes{c.size, 0};
  alloc::device_array<char *> out(n);
  out.zero();
  const bool frees_after = !lo; // heap allocators: give the memory back after each launch
  auto prepare = [&] {
    if (frees_after)
      free_kernel<<<blocks, alloc::k_block>>>(h, n, out.get());
    reset();
  };
  auto launch = [&] {
    malloc_kernel<<<blocks, alloc::k_block>>>(h, n, sizes, c.free_at_once, out.get());
  };
  prepare();
  launch(); // warm-up
  check(cudaDeviceSynchronize(), "warm-up");
  time_iterations(st, prepare, launch);
  prepare();
  launch();
  check(cudaDeviceSynchronize(), "verification launch");
  if (!c.free_at_once) {
    const auto [nulls, bad] = verify(out, n, sizes, lo, bytes);
    if (nulls || bad) {
      st.SkipWithError(("verification failed: " + std::to_string(nulls) +
                        " threads without memory, " + std::to_string(bad) + " bad ranges")
                           .c_str());
      return;
    }
  }
  if (frees_after)
    free_kernel<<<blocks, alloc::k_block>>>(h, n, out.get());
  check(cudaDeviceSynchronize(), "free");
  st.counters["allocs_per_s"] =
      benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["pool_GiB"] = double(bytes) / double(k_gib);
}

void bm_malloc(benchmark::State &st, const cell &c) {
  const std::uint64_t bytes = pool_bytes(c);
  const double free_fraction = c.permille / 1000.0;
  if (c.alloc == "rw_malloc") {
    const alloc::malloc_config mc = rw_malloc_config(bytes);
    auto &a = current<alloc::rw_malloc>("rw_malloc/" + std::to_string(bytes), [&] {
      return new alloc::rw_malloc(mc, rw_malloc_tuning());
    });
    // Free space in holes the size of this cell's requests (in units).
    static std::string pattern_key;
    static std::vector<unsigned long long> pattern;
    const std::string key =
        std::to_string(a.units()) + "/" + std::to_string(c.size) + "/" + std::to_string(c.permille);
    if (key != pattern_key) {
      const alloc::request_sizes s{c.size, 7};
      std::uint64_t k = 0;
      pattern = alloc::hole_pattern(
          a.units(), free_fraction, [&](auto &) { return (s(k++) + 255) / 256; }, 42);
      pattern_key = key;
    }
    run_cell(
        st, c, a.handle(), [&] { a.load(pattern); }, a.data(), a.pool_bytes());
  } else if (c.alloc == "ouroboros_page" || c.alloc == "ouroboros_chunk") {
    alloc::ouroboros_config oc;
    oc.pool_bytes = bytes;
    auto go = [&](auto *tag) {
      using A = std::remove_pointer_t<decltype(tag)>;
      auto &a = current<A>(c.alloc + "/" + std::to_string(bytes), [&] { return new A(oc); });
      run_cell(
          st, c, a.handle(), [&] { a.reset(1.0 - free_fraction); }, a.data(), a.pool_bytes());
    };
    if (c.alloc == "ouroboros_page")
      go(static_cast<alloc::ouroboros_page *>(nullptr));
    else
      go(static_cast<alloc::ouroboros_chunk *>(nullptr));
  } else if (c.alloc == "xmalloc") {
    alloc::xmalloc_config xc;
    xc.heap_bytes = k_heap_bytes;
    auto &a = current<alloc::xmalloc>("xmalloc", [&] { return new alloc::xmalloc(xc); });
    run_cell(
        st, c, a.handle(), [] {}, nullptr, 0);
  } else {
    alloc::pool_config pc;
    pc.pages = 1;
    pc.page_bytes = 1;
    alloc::ensure_malloc_heap(k_heap_bytes);
    alloc::cuda_malloc a(pc, 1.0);
    run_cell(
        st, c, a.handle(), [] {}, nullptr, 0);
  }
}

// ---- Utilization until out of memory (RW paper Fig. 15) ----

template <class H>
__global__ void fill_kernel(H h, unsigned n, alloc::request_sizes sizes, std::uint32_t unit,
                            bool pow2, unsigned long long *acc) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  const std::uint32_t s = sizes(t);
  if (!h.malloc(s))
    return;
  unsigned long long r = s;
  if (pow2) {
    r = 16;
    while (r < s)
      r <<= 1;
  } else if (s >= unit) {
    r = (s + unit - 1) / unit * unit;
  } else {
    r = (s + 15) / 16 * 16;
  }
  atomicAdd(&acc[0], 1ull);
  atomicAdd(&acc[1], (unsigned long long)s);
  atomicAdd(&acc[2], r);
}

template <class H>
void fill_until_full(benchmark::State &st, H h, std::uint32_t size, std::uint32_t unit, bool pow2,
                     std::uint64_t pool) {
  const alloc::request_sizes sizes{size, 3};
  const unsigned n = unsigned(std::max<std::uint64_t>(4096, pool / sizes.mean_bytes() / 16));
  alloc::device_array<unsigned long long> acc(3);
  acc.zero();
  unsigned long long v[3] = {0, 0, 0}, prev = ~0ull;
  unsigned launches = 0;
  for (auto _ : st) {
    for (launches = 0; launches < 10000 && v[0] != prev; ++launches) {
      prev = v[0];
      fill_kernel<<<alloc::blocks_for(n), alloc::k_block>>>(h, n, sizes, unit, pow2, acc.get());
      check(cudaDeviceSynchronize(), "fill");
      acc.download(v, 3);
    }
  }
  st.counters["allocations"] = double(v[0]);
  st.counters["launches"] = double(launches);
  st.counters["util_requested"] = double(v[1]) / double(pool);
  st.counters["util_rounded"] = double(v[2]) / double(pool);
}

void bm_utilization(benchmark::State &st, const std::string &name, std::uint32_t unit,
                    std::uint32_t size) {
  const std::uint64_t pool = 256ull << 20;
  if (name == "rw_malloc") {
    alloc::malloc_config mc = rw_malloc_config(pool);
    mc.unit_bytes = unit;
    alloc::rw_malloc a(mc);
    fill_until_full(st, a.handle(), size, unit, false, pool);
  } else {
    alloc::ouroboros_config oc;
    oc.pool_bytes = pool;
    oc.chunk_bytes = unit * 32;
    if (name == "ouroboros_page") {
      alloc::ouroboros_page a(oc);
      fill_until_full(st, a.handle(), size, unit, true, a.pool_bytes());
    } else {
      alloc::ouroboros_chunk a(oc);
      fill_until_full(st, a.handle(), size, unit, true, a.pool_bytes());
    }
  }
}

} // namespace

void register_malloc_benchmarks() {
  const auto &o = options();
  std::vector<std::uint64_t> threads = {1u << 12, 1u << 16, 1u << 20};
  std::vector<int> permilles = {500};
  if (o.full_grid) {
    threads = {1u << 10, 1u << 12, 1u << 14, 1u << 16, 1u << 18, 1u << 20};
    permilles = {500, 100, 10};
  }
  const std::vector<std::pair<std::string, std::pair<std::uint32_t, bool>>> sizes = {
      {"16", {16, false}},        {"256", {256, false}},   {"1024", {1024, false}},
      {"4096", {4096, false}},    {"8192", {8192, false}}, {"mixed", {0, false}},
      {"4096+free", {4096, true}}};
  for (const char *a :
       {"rw_malloc", "xmalloc", "ouroboros_page", "ouroboros_chunk", "cuda_malloc"}) {
    const bool heap = std::string(a) == "xmalloc" || std::string(a) == "cuda_malloc";
    for (const auto &[label, sz] : sizes)
      for (const int f : heap ? std::vector<int>{1000} : permilles)
        for (const auto n : threads) {
          const cell c{a, sz.first, sz.second, n, f == 1000 ? 500 : f};
          if (!heap && !fits(c))
            continue; // would not fit a 36 GiB pool at this free fraction
          // Device malloc: 2^20 threads x 256 B take ~5 s a launch (capped unless
          // --gpuprobe_uncapped).
          if (std::string(a) == "cuda_malloc" && n > (1u << 16) && !o.uncapped)
            continue;
          // Ouroboros' chunk queue: every taker walks from the front chunk (1.5 s a launch at 2^20
          // x 16 B).
          if (std::string(a) == "ouroboros_chunk" && n > (1u << 16) && !o.uncapped)
            continue;
          // XMalloc does not coalesce requests over 2 KiB: each is a block of its own, from the
          // class's 256 buffered blocks and then device malloc, one by one.
          if (std::string(a) == "xmalloc" && (sz.first == 0 || sz.first > 2048) && n > (1u << 16) &&
              !o.uncapped)
            continue;
          add_case("BM_malloc/" + std::string(a) + "/size:" + label +
                       "/threads:" + std::to_string(n) + "/free_permille:" + std::to_string(f),
                   [c](benchmark::State &st) { bm_malloc(st, c); });
        }
  }
  for (const char *a : {"rw_malloc", "ouroboros_page", "ouroboros_chunk"})
    for (std::uint32_t unit : {128u, 256u, 512u, 1024u})
      for (std::uint32_t size : {100u, 1050u, 3000u, 4096u, 0u}) {
        if (size > unit * 32 || (size == 0 && unit * 32 < 8192))
          continue;
        if (!o.full_grid && size != 1050 && size != 0)
          continue; // default: 1050 B and mixed
        const std::string label = size ? std::to_string(size) : "mixed";
        const std::string key = std::string(a).find("ouroboros") == 0
                                    ? "/chunk:" + std::to_string(unit * 32)
                                    : "/unit:" + std::to_string(unit);
        add_case(
            "BM_utilization/" + std::string(a) + key + "/size:" + label,
            [a = std::string(a), unit, size](benchmark::State &st) {
              bm_utilization(st, a, unit, size);
            },
            1);
      }
}

} // namespace gpuprobe::bench
