// BM_workload/...: the allocators inside real kernels, each checked against a simple correct
// baseline after timing.
//   hash_join/<variant>/tuples:<n>/page_bytes:<p>   end-to-end radix hash join (RW paper §VI)
//   growable_array/<variant>/elements:<n>           GGArray vs static and VMM arrays
//   tlb_scoped_sampling|grouping/<pool>/footprint_gib:<F>/mode:<one_pass|scoped>   TLB paper §5
#include "allocators/allocators.cuh"
#include "allocators/workloads/growable_array.cuh"
#include "allocators/workloads/hash_join.cuh"
#include "allocators/workloads/tlb_scoped.cuh"
#include "bench_common.hpp"
#include "common/device_memory.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/units.hpp"
#include "model/tuning.hpp"

#include <chrono>
#include <cmath>
#include <vector>

namespace gpuprobe::bench {
namespace {

// ---- hash join ----

// One join's relations alive at a time (10M tuples: 320 MB).
workloads::hash_join &current_join(unsigned tuples) {
  static std::unique_ptr<workloads::hash_join> j;
  if (!j || j->tuples() != tuples) {
    j.reset();
    j = std::make_unique<workloads::hash_join>(tuples);
  }
  return *j;
}

template <class A> void reset_pages(A &a) {
  if constexpr (std::is_same_v<A, alloc::queue>)
    a.rewind_after_gets();
  else if constexpr (std::is_same_v<A, alloc::bump>)
    a.prefill(a.config().pages, 0);
  else
    a.clear();
}

template <class A>
void join_cell(benchmark::State &st, const std::string &variant, unsigned tuples,
               std::uint32_t page_bytes, std::uint64_t pool_bytes) {
  alloc::pool_config c;
  c.page_bytes = page_bytes;
  std::uint64_t pages =
      std::max<std::uint64_t>(pool_bytes / page_bytes, std::uint64_t(tuples) * 5 / 4);
  pages = (pages + 63) / 64 * 64;
  c.pages = alloc::page_t(pages);
  auto &a =
      current<A>("join/" + variant + "/" + std::to_string(pages) + "/" + std::to_string(page_bytes),
                 [&] { return new A(c); });
  auto &j = current_join(tuples);
  auto prepare = [&] { reset_pages(a); };
  auto launch = [&] { j.run(a.handle(), page_bytes); };
  prepare();
  launch(); // warm-up
  check(cudaDeviceSynchronize(), "warm-up");
  time_iterations(st, prepare, launch);
  // Verification run on a zeroed pool: exactly the n result tuples, none lost or doubled.
  check(cudaMemset(a.handle().data, 0, std::size_t(pages) * page_bytes), "memset pool");
  prepare();
  launch();
  check(cudaDeviceSynchronize(), "verification join");
  const std::string why = j.verify(a.handle().data, std::uint64_t(pages) * page_bytes);
  if (!why.empty()) {
    st.SkipWithError(("verification failed: " + why).c_str());
    return;
  }
  st.counters["tuples_per_s"] =
      benchmark::Counter(double(tuples), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["pages"] = double(pages);
  st.counters["partitions"] = double(j.partitions());
}

// ---- growable array ----

// One growable-array cell's state: its checksums, times and memory, and the first error.
struct growable_run {
  static constexpr unsigned rounds = 8, vectors = 1024;
  std::uint64_t elements;
  unsigned per_round, blocks;
  alloc::device_array<unsigned long long> acc{1};
  double rw_ms = 0, used = 0, grow_ms = 0;
  unsigned long long want_insert, want_rw;
  event_timer timer;
  std::string error;

  explicit growable_run(std::uint64_t n)
      : elements(n), per_round(unsigned(n / rounds)), blocks(alloc::blocks_for(per_round)),
        want_insert(workloads::expected_insert_sum(n)), want_rw(workloads::expected_rw_sum(n)) {}

  // A sum kernel's result against `want` (the first mismatch is the cell's error).
  template <class Launch> void sums(Launch sum_launch, unsigned long long want, const char *what) {
    acc.zero();
    sum_launch();
    unsigned long long got = 0;
    check(cudaDeviceSynchronize(), "sum");
    acc.download(&got, 1);
    if (got != want && error.empty())
      error = std::string("verification failed after ") + what;
  }
};

// A static array (allocated once) or a VMM range mapped round by round (every iteration starts
// from an empty mapping; only the address range is reserved).
void flat_iterations(benchmark::State &st, bool is_static, growable_run &g) {
  std::unique_ptr<alloc::device_array<std::uint32_t>> flat;
  std::unique_ptr<vmm_growable> vmm;
  if (is_static)
    flat = std::make_unique<alloc::device_array<std::uint32_t>>(g.elements);
  alloc::device_array<unsigned long long> size(1);
  for (auto _ : st) {
    if (!flat) {
      vmm.reset();
      vmm = std::make_unique<vmm_growable>(g.elements * 4, 0);
    }
    size.zero();
    st.SetIterationTime(g.timer.ms([&] {
      for (unsigned r = 0; r < g.rounds; ++r) {
        if (vmm) { // the host maps before each round (its time is inside the insert time too)
          const auto g0 = std::chrono::steady_clock::now();
          vmm->grow_to(std::size_t(r + 1) * g.per_round * 4);
          g.grow_ms +=
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g0)
                  .count();
        }
        std::uint32_t *a = flat ? flat->get() : reinterpret_cast<std::uint32_t *>(vmm->data());
        workloads::flat_insert<<<g.blocks, alloc::k_block>>>(a, size.get(), g.per_round,
                                                             std::uint64_t(r) * g.per_round);
      }
    }) * 1e-3);
    std::uint32_t *a = flat ? flat->get() : reinterpret_cast<std::uint32_t *>(vmm->data());
    g.sums([&] { workloads::flat_sum<<<1024, alloc::k_block>>>(a, g.elements, g.acc.get()); },
           g.want_insert, "insert");
    g.rw_ms +=
        g.timer.ms([&] { workloads::flat_read_write<<<1024, alloc::k_block>>>(a, g.elements); });
    g.sums([&] { workloads::flat_sum<<<1024, alloc::k_block>>>(a, g.elements, g.acc.get()); },
           g.want_rw, "read/write");
    g.used = double(flat ? g.elements * 4 : vmm->mapped_bytes());
  }
}

// The GGArray: `vectors` lock-free vectors whose buckets come from allocator handle `h`; after()
// runs once its buckets are released.
template <class Handle, class After>
void ggarray_iterations(benchmark::State &st, Handle h, After &&after, growable_run &g) {
  alloc::device_array<workloads::lf_vector> vecs(g.vectors);
  std::vector<workloads::lf_vector> hv(g.vectors);
  for (auto _ : st) {
    vecs.zero();
    st.SetIterationTime(g.timer.ms([&] {
      for (unsigned r = 0; r < g.rounds; ++r)
        workloads::gg_insert<<<g.blocks, alloc::k_block>>>(h, vecs.get(), g.vectors, g.per_round,
                                                           std::uint64_t(r) * g.per_round);
    }) * 1e-3);
    vecs.download(hv.data(), g.vectors);
    unsigned long long failed = 0;
    g.used = 0;
    for (const auto &v : hv)
      failed += v.failed, g.used += double(workloads::gg_bucket_bytes(v.size));
    if (failed && g.error.empty())
      g.error = std::to_string(failed) + " elements found no memory";
    g.sums([&] { workloads::gg_sum<<<1024, alloc::k_block>>>(vecs.get(), g.vectors, g.acc.get()); },
           g.want_insert, "insert");
    g.rw_ms += g.timer.ms(
        [&] { workloads::gg_read_write<<<1024, alloc::k_block>>>(vecs.get(), g.vectors); });
    g.sums([&] { workloads::gg_sum<<<1024, alloc::k_block>>>(vecs.get(), g.vectors, g.acc.get()); },
           g.want_rw, "read/write");
    workloads::gg_release<<<alloc::blocks_for(g.vectors), alloc::k_block>>>(h, vecs.get(),
                                                                            g.vectors);
    check(cudaDeviceSynchronize(), "release");
    after();
  }
}

void growable_cell(benchmark::State &st, const std::string &variant, std::uint64_t elements) {
  growable_run g(elements);
  if (variant == "static" || variant == "vmm") {
    flat_iterations(st, variant == "static", g);
  } else if (variant == "ggarray_rw_malloc") {
    // 4 KiB units: buckets grow to 256 KiB, and with 256 B units the random first-fit leaves no
    // 1024-unit run in a half-full pool (small buckets land in every region).
    alloc::malloc_config mc;
    mc.pool_bytes = std::max<std::uint64_t>(k_gib, elements * 4 * 4);
    mc.unit_bytes = 4096;
    alloc::rw_malloc a(mc);
    ggarray_iterations(
        st, a.handle(),
        [&] {
          if (a.free_units() != a.units() && g.error.empty())
            g.error = "rw_malloc pool not empty after release";
        },
        g);
  } else {
    alloc::ensure_malloc_heap(k_heap_bytes);
    alloc::pool_config pc;
    pc.pages = 1;
    alloc::cuda_malloc a(pc, 1.0);
    ggarray_iterations(
        st, a.handle(), [] {}, g);
  }
  if (!g.error.empty()) {
    st.SkipWithError(g.error.c_str());
    return;
  }
  st.counters["rw_ms"] = g.rw_ms / double(st.iterations());
  // Growing apart from inserting: the host's mapping calls (vmm); none for a static array; the
  // GGArray's bucket allocations happen inside its insert kernels (not separable, not reported).
  if (variant == "vmm" || variant == "static")
    st.counters["grow_ms"] = g.grow_ms / double(st.iterations());
  st.counters["mem_used_MiB"] = g.used / double(1 << 20);
  st.counters["mem_needed_MiB"] = double(elements) * 4 / double(1 << 20);
  st.counters["mem_used_over_needed"] = g.used / (double(elements) * 4);
  st.counters["rounds"] = g.rounds;
}

// ---- TLB-scoped sampling and grouping ----

// The pool and the driver of one (workload, pool, footprint): one alive at a time.
struct scoped_state {
  device_pool mem;
  std::unique_ptr<workloads::sampling_run> sampling;
  std::unique_ptr<workloads::grouping_run> grouping;
  scoped_state(bool g, const std::string &pool, std::uint64_t footprint)
      : mem(parse_alloc_kind(pool), footprint, 0, 7) {
    if (g)
      grouping = std::make_unique<workloads::grouping_run>(mem.data(), footprint);
    else
      sampling = std::make_unique<workloads::sampling_run>(mem.data(), footprint);
  }
};

void scoped_cell(benchmark::State &st, bool grouping, const std::string &pool,
                 std::uint64_t footprint, bool scoped) {
  const auto &o = options();
  if (scoped && o.tlb_scope_bytes == 0) {
    st.SkipWithError("no TLB scope: give --gpuprobe_tuning=tuning.json (gpuprobe tune's scope) "
                     "or --gpuprobe_tlb_scope=BYTES");
    return;
  }
  const std::uint64_t scope = scoped ? o.tlb_scope_bytes : 0;
  auto &s = current<scoped_state>(std::string(grouping ? "grouping/" : "sampling/") + pool + "/" +
                                      std::to_string(footprint),
                                  [&] { return new scoped_state(grouping, pool, footprint); });
  auto run = [&](auto &r) {
    time_iterations(
        st, [&] { r.reset(); }, [&] { r.launch(scope); });
    r.reset();
    r.launch(scope);
    return r.verify();
  };
  const std::string why = grouping ? run(*s.grouping) : run(*s.sampling);
  if (!why.empty()) {
    st.SkipWithError(("verification failed: " + why).c_str());
    return;
  }
  if (grouping) {
    st.counters["inserts_per_s"] = benchmark::Counter(
        double(s.grouping->input()), benchmark::Counter::kIsIterationInvariantRate);
    st.counters["groups"] = double(s.grouping->groups());
  } else {
    st.counters["reads_per_s"] =
        benchmark::Counter(s.sampling->reads(), benchmark::Counter::kIsIterationInvariantRate);
  }
  st.counters["footprint_GiB"] = double(footprint) / double(k_gib);
  st.counters["scope_GiB"] = double(scope ? std::min(scope, footprint) : footprint) / double(k_gib);
  st.counters["passes"] = double(workloads::scope_passes(footprint, scope));
}

} // namespace

// The scope: tune's measured decision, as tuning.json holds it (one rule for tune, validate and
// the bench: tune/decisions.hpp's decide_tlb_scope_measured).
void read_tlb_scope(const std::string &tuning) {
  const model::tuning_file t = model::read_tuning(tuning);
  if (t.allocator.tlb_scope_bytes == 0)
    throw error("'" + tuning + "': tune kept one pass (" +
                (t.tlb_scope ? t.tlb_scope->reason : std::string("no tlb_scope decision")) +
                "); give --gpuprobe_tlb_scope=BYTES to scope anyway");
  auto &o = options();
  o.tlb_scope_bytes = t.allocator.tlb_scope_bytes;
  o.tlb_scope_source = tuning + " (" + (t.tlb_scope ? t.tlb_scope->reason : "tune's scope") + ")";
}

void register_workload_benchmarks() {
  const auto &o = options();
  // Hash join: table sizes at 32 B pages in a 4 GiB pool (the RW paper's 128M pages), then page
  // sizes at 4M tuples in an 8 GiB pool.
  std::vector<unsigned> tuples = {1u << 14, 1u << 20, 10'000'000u};
  std::vector<std::uint32_t> page_sizes = {32, 256, 2048};
  if (o.full_grid) {
    tuples = {1u << 14, 1u << 16, 1u << 18, 1u << 20, 1u << 22, 10'000'000u};
    page_sizes = {32, 64, 128, 256, 512, 1024, 2048};
  }
  using join_fn =
      void (*)(benchmark::State &, const std::string &, unsigned, std::uint32_t, std::uint64_t);
  const std::vector<std::pair<std::string, join_fn>> variants = {
      {"do_bump", join_cell<alloc::bump>},
      {"queue", join_cell<alloc::queue>},
      {"rw", join_cell<alloc::rw>},
      {"rw_bm32", join_cell<alloc::rw_bm<std::uint32_t>>},
      {"corw32", join_cell<alloc::corw<std::uint32_t>>}};
  for (const auto &[v, fn] : variants) {
    for (unsigned n : tuples)
      add_case("BM_workload/hash_join/" + v + "/tuples:" + std::to_string(n) + "/page_bytes:32",
               [v = v, fn = fn, n](benchmark::State &st) { fn(st, v, n, 32, 4 * k_gib); });
    for (std::uint32_t p : page_sizes)
      if (p != 32)
        add_case("BM_workload/hash_join/" + v + "/tuples:4194304/page_bytes:" + std::to_string(p),
                 [v = v, fn = fn, p](benchmark::State &st) { fn(st, v, 1u << 22, p, 8 * k_gib); });
  }
  for (const char *v : {"static", "vmm", "ggarray_rw_malloc", "ggarray_cuda_malloc"})
    add_case(
        std::string("BM_workload/growable_array/") + v + "/elements:67108864",
        [v = std::string(v)](benchmark::State &st) { growable_cell(st, v, 1ull << 26); }, 5);
}

void register_tlb_scoped_benchmarks() {
  const auto &o = options();
  // Footprints up to most of the 80 GB: the grouping table stops at 70 GiB (+ 1 GiB of input).
  std::vector<std::uint64_t> sampling = {16, 72}, grouping = {16, 70};
  if (o.full_grid)
    sampling = {4, 16, 32, 48, 64, 72}, grouping = {4, 16, 32, 48, 64, 70};
  for (const char *w : {"tlb_scoped_sampling", "tlb_scoped_grouping"})
    for (const char *pool : {"cudamalloc", "vmm"})
      for (std::uint64_t fp : std::string(w) == "tlb_scoped_sampling" ? sampling : grouping)
        for (bool scoped : {false, true}) {
          add_case(std::string("BM_workload/") + w + "/" + pool + "/footprint_gib:" +
                       std::to_string(fp) + "/mode:" + (scoped ? "scoped" : "one_pass"),
                   [g = std::string(w) == "tlb_scoped_grouping", p = std::string(pool), fp,
                    scoped](benchmark::State &st) { scoped_cell(st, g, p, fp * k_gib, scoped); });
        }
}

} // namespace gpuprobe::bench
