// validate: the workloads run default vs tuned. Each trial takes its pool memory (cudaMalloc, or
// scattered VMM chunks; a TLB-sized one shared with the next such workload, pool_source) and runs
// both configurations over it; run() prepares untimed and times one repetition; verify() runs each
// configuration once more and checks what it produced.
#include "allocators/allocators.cuh"
#include "allocators/range_check.hpp"
#include "allocators/request_sizes.hpp"
#include "allocators/workloads/hash_join.cuh"
#include "allocators/workloads/tlb_scoped.cuh"
#include "common/device_memory.hpp"
#include "common/units.hpp"
#include "tune/decisions.hpp"
#include "tune/kernels.cuh"
#include "tune/measure.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

namespace gpuprobe::tune {

namespace {

std::string gib(std::uint64_t b, const char *sep = " ") { return format_gib(double(b), sep); }

// Page sizes of the trials; the workload list computes the same regions from them.
constexpr std::uint32_t k_page_bytes = 1024;     // get_page + write, CRW
constexpr std::uint32_t k_join_page_bytes = 256; // hash join output pages
// rw_malloc's random windows are its bitmap regions of 2048 units of the default 256 B.
const std::uint64_t k_malloc_window_bytes =
    std::uint64_t(alloc::rw_malloc_handle::region_units) * alloc::malloc_config{}.unit_bytes;

} // namespace

// The TLB-sized pools mapped once per kind, not once per workload: on an H100
// a full validate took 36 s, 3.7 s of it timed launches, and each VMM row on a 70 or
// 72 GiB pool took 3.3-6.5 s, mostly mapping its pool; on one shared pool the VMM rows after the
// first took 0.3-3.8 s. A request within 10 % of the largest a workload makes
// (tlb_sampling's 72 GiB, tlb_grouping's 70, getpage's 72) takes the first bytes of one pool of
// that size, held from one such workload to the next; any other request (the 8 GiB allocator
// pools) maps a pool of its own, as before, after the held one is unmapped (the two do not fit in
// the device's memory together). So every trial runs on a pool of its own size or on one at most
// 10 % larger; when every trial took the first bytes of one pool, the 8 GiB get_page at 1 % free
// on VMM read 15 % slower than on a pool of its own (an H100).
class pool_source {
public:
  pool_source(std::uint64_t largest, int device, std::uint64_t seed)
      : largest_(largest), device_(device), seed_(seed) {}
  std::shared_ptr<device_pool> take(alloc_kind kind, std::uint64_t bytes) {
    const bool large = served_by_tlb_pool(bytes, largest_);
    if (held_ && !(large && held_->kind() == kind))
      held_.reset(); // its trial ended with its workload: the memory goes back (or to the shelf)
    if (!large) {
      pool_keeper::drop(); // a kept TLB-sized pool and this one do not fit together
      return std::make_shared<device_pool>(kind, bytes, device_, seed_);
    }
    if (!held_) {
      bool taken = false;
      held_ = keepable_pool(kind, largest_, device_, seed_, &taken); // kept by a pool_keeper
      if (taken)
        note_ = "[pools] the " + std::string(to_string(kind)) + " pool of " +
                std::to_string(largest_ >> 30) + " GiB kept from the stage before: not made again";
    }
    return held_;
  }
  void release() { held_.reset(); }
  // What to say of the last pool taken ("" when nothing is to be said), said once.
  std::string take_note() { return std::exchange(note_, std::string()); }

private:
  std::uint64_t largest_;
  int device_;
  std::uint64_t seed_;
  std::shared_ptr<device_pool> held_;
  std::string note_;
};

namespace {

// A trial's memory: the first `bytes` of a pool from the source (or of a pool of its own where no
// source is set).
class pool_part {
public:
  pool_part(const std::string &pool, std::uint64_t bytes, const validate_options &o)
      : whole_(o.pools ? o.pools->take(parse_alloc_kind(pool), bytes)
                       : std::make_shared<device_pool>(parse_alloc_kind(pool), bytes, o.device,
                                                       o.seed)),
        bytes_(bytes) {}
  char *data() const { return whole_->data(); }
  std::size_t bytes() const { return bytes_; }

private:
  std::shared_ptr<device_pool> whole_;
  std::size_t bytes_;
};

// A page pool's configuration over the trial's memory.
alloc::pool_config pages_on(const pool_part &m, std::uint32_t page_bytes, std::uint64_t seed) {
  alloc::pool_config c;
  c.page_bytes = page_bytes;
  c.pages = alloc::page_t(m.bytes() / page_bytes);
  c.memory = m.data();
  c.seed = seed;
  return c;
}

std::string words_regions(int bits, const alloc::region_layout &l) {
  return "CoRW " + std::to_string(bits) + "-bit, " +
         (l.regions > 1 ? std::to_string(l.regions) + " regions" : std::string("one region"));
}

using model::decision;

// get_page + write the page: CoRW with 32-bit words and one region vs the tuning's word size and
// regions; 1 KiB pages, the pool at `free_fraction`, up to 2^20 threads (3/4 of the free pages).
template <class WordT> class getpage_trial final : public trial {
public:
  getpage_trial(const std::string &pool, std::uint64_t bytes, double f, const alloc::tuning &t,
                const validate_options &o)
      : mem_(pool, bytes, o), cfg_(pages_on(mem_, k_page_bytes, o.seed)), def_(cfg_),
        tuned_(cfg_, t), threads_(threads_for(cfg_.pages, f)), out_(threads_) {
    // The occupancy packed once per word size; the byte-per-page pattern is not kept.
    const auto occ =
        alloc::random_occupancy(cfg_.pages, std::uint64_t(double(cfg_.pages) * f), o.seed);
    def_words_ = def_.pack(occ);
    tuned_words_ = tuned_.pack(occ);
  }
  static unsigned threads_for(std::uint64_t pages, double f) {
    unsigned n = 1u << 20;
    while (n > 256 && double(n) > 0.75 * double(pages) * f)
      n /= 2;
    return n;
  }
  double run(bool tuned) override {
    return tuned ? once(tuned_, tuned_words_) : once(def_, def_words_);
  }
  std::string verify() override {
    once(def_, def_words_);
    std::string why = check_pages(out_, threads_, cfg_.pages, cfg_.memory, cfg_.page_bytes, tag_);
    if (!why.empty())
      return "default: " + why;
    once(tuned_, tuned_words_);
    why = check_pages(out_, threads_, cfg_.pages, cfg_.memory, cfg_.page_bytes, tag_);
    return why.empty() ? "" : "tuned: " + why;
  }

private:
  template <class A> double once(A &a, const typename A::packed_state &words) {
    a.load_packed(words); // the occupancy packed once per word size, not at every repetition
    ++tag_;
    return timer_.ms([&] {
      get_and_write_launches(a.handle(), out_.get(), threads_, 1, cfg_.page_bytes, tag_);
    });
  }
  pool_part mem_;
  alloc::pool_config cfg_;
  alloc::corw<std::uint32_t> def_;
  alloc::corw<WordT> tuned_;
  typename alloc::corw<std::uint32_t>::packed_state def_words_;
  typename alloc::corw<WordT>::packed_state tuned_words_;
  unsigned threads_;
  alloc::device_array<alloc::page_t> out_;
  event_timer timer_;
  unsigned tag_ = 0;
};

// CRW: the per-thread start vs the tuning's placement; `launches` launches of 2^16 threads each
// take a page and write it, from 1 KiB pages at 10 % free.
class crw_trial final : public trial {
public:
  static constexpr unsigned threads = 1u << 16, launches = 8;
  crw_trial(const std::string &pool, std::uint64_t bytes, const alloc::tuning &t,
            const validate_options &o)
      : mem_(pool, bytes, o), cfg_(pages_on(mem_, k_page_bytes, o.seed)), def_(cfg_, threads),
        tuned_(cfg_, threads, t),
        packed_(alloc::crw::pack(alloc::random_occupancy(cfg_.pages, cfg_.pages / 10, o.seed))),
        out_(std::size_t(threads) * launches) {}
  double run(bool tuned) override { return once(tuned ? tuned_ : def_); }
  std::string verify() override {
    for (auto *a : {&def_, &tuned_}) {
      once(*a);
      const std::string why =
          check_pages(out_, out_.size(), cfg_.pages, cfg_.memory, cfg_.page_bytes, tag_);
      if (!why.empty())
        return (a == &def_ ? "default: " : "tuned: ") + why;
    }
    return "";
  }

private:
  double once(alloc::crw &a) {
    a.load_packed(packed_); // packed once; loading also forgets every thread's last page
    ++tag_;
    return timer_.ms([&] {
      get_and_write_launches(a.handle(), out_.get(), threads, launches, cfg_.page_bytes, tag_);
    });
  }
  pool_part mem_;
  alloc::pool_config cfg_;
  alloc::crw def_, tuned_;
  alloc::crw::packed_state packed_;
  alloc::device_array<alloc::page_t> out_;
  event_timer timer_;
  unsigned tag_ = 0;
};

// rw_malloc mixed sizes (4..8192 B) + write every byte: one region vs the tuning's regions; 2^18
// threads, the pool half free in holes of the request sizes.
__global__ void malloc_and_write(alloc::rw_malloc_handle h, alloc::request_sizes sizes, void **out,
                                 unsigned tag) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t bytes = sizes(t);
  void *p = h.malloc(bytes);
  out[t] = p;
  const unsigned lane = threadIdx.x & 31u;
  for (int j = 0; j < 32; ++j) { // the warp writes each lane's block, 4-byte stores coalesced
    auto *q = reinterpret_cast<unsigned *>(
        __shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(p), j));
    const std::uint32_t n = __shfl_sync(0xffffffffu, bytes, j) / 4;
    const unsigned owner = blockIdx.x * blockDim.x + (threadIdx.x & ~31u) + unsigned(j);
    if (q)
      for (std::uint32_t k = lane; k < n; k += 32)
        q[k] = owner ^ tag;
  }
}

class malloc_trial final : public trial {
public:
  static constexpr unsigned threads = 1u << 18;
  malloc_trial(const std::string &pool, std::uint64_t bytes, const alloc::tuning &t,
               const validate_options &o)
      : mem_(pool, bytes, o), cfg_(config(mem_, o.seed)), def_(cfg_), tuned_(cfg_, t),
        out_(threads) {
    std::uint64_t k = 0;
    alloc::request_sizes s;
    pattern_ = alloc::hole_pattern(
        def_.units(), 0.5, [&](auto &) { return (s(k++) + cfg_.unit_bytes - 1) / cfg_.unit_bytes; },
        o.seed);
  }
  double run(bool tuned) override { return once(tuned ? tuned_ : def_); }
  std::string verify() override {
    for (auto *a : {&def_, &tuned_}) {
      once(*a);
      std::vector<void *> p(threads);
      out_.download(p.data(), threads);
      std::vector<std::pair<std::uintptr_t, std::uintptr_t>> r;
      std::uint64_t nulls = 0, stamps = 0;
      for (unsigned i = 0; i < threads; ++i) {
        if (!p[i]) {
          ++nulls;
          continue;
        }
        const auto a0 = reinterpret_cast<std::uintptr_t>(p[i]);
        r.emplace_back(a0, a0 + sizes_(i));
        if (i % 1021 == 0) { // a sample of the writes
          unsigned v = 0;
          GPUPROBE_CUDA_CHECK(cudaMemcpy(&v, p[i], 4, cudaMemcpyDeviceToHost));
          stamps += v != (i ^ tag_);
        }
      }
      const char *which = a == &def_ ? "default: " : "tuned: ";
      if (nulls)
        return which + std::to_string(nulls) + " requests got nullptr";
      if (const auto bad = alloc::count_bad_ranges(r, reinterpret_cast<std::uintptr_t>(cfg_.memory),
                                                   cfg_.pool_bytes))
        return which + std::to_string(bad) +
               " allocations misaligned, outside the pool or overlapping";
      if (stamps)
        return which + std::to_string(stamps) + " sampled allocations do not hold what was written";
    }
    return "";
  }

private:
  static alloc::malloc_config config(const pool_part &m, std::uint64_t seed) {
    alloc::malloc_config c;
    c.pool_bytes = m.bytes();
    c.memory = m.data();
    c.seed = seed;
    return c;
  }
  double once(alloc::rw_malloc &a) {
    a.load(pattern_);
    ++tag_; // the sizes stay the same in every repetition; the stamp changes
    return timer_.ms([&] {
      malloc_and_write<<<threads / alloc::k_block, alloc::k_block>>>(a.handle(), sizes_, out_.get(),
                                                                     tag_);
    });
  }
  pool_part mem_;
  alloc::malloc_config cfg_;
  alloc::rw_malloc def_, tuned_;
  std::vector<unsigned long long> pattern_;
  alloc::request_sizes sizes_;
  alloc::device_array<void *> out_;
  event_timer timer_;
  unsigned tag_ = 0;
};

// Hash join (4M tuples, 256 B output pages): CoRW 32-bit one region vs the tuning's.
template <class WordT> class join_trial final : public trial {
public:
  join_trial(const std::string &pool, std::uint64_t bytes, const alloc::tuning &t,
             const validate_options &o)
      : mem_(pool, bytes, o), cfg_(pages_on(mem_, k_join_page_bytes, o.seed)), def_(cfg_),
        tuned_(cfg_, t), join_(1u << 22) {}
  double run(bool tuned) override { return tuned ? once(tuned_) : once(def_); }
  std::string verify() override {
    for (int k = 0; k < 2; ++k) {
      GPUPROBE_CUDA_CHECK(
          cudaMemset(cfg_.memory, 0, mem_.bytes())); // scan_pool counts what the join wrote
      k == 0 ? once(def_) : once(tuned_);
      const std::string why =
          join_.verify(cfg_.memory, std::uint64_t(cfg_.pages) * cfg_.page_bytes);
      if (!why.empty())
        return (k == 0 ? "default: " : "tuned: ") + why;
    }
    return "";
  }

private:
  template <class A> double once(A &a) {
    a.clear();
    return timer_.ms([&] { join_.run(a.handle(), cfg_.page_bytes); });
  }
  pool_part mem_;
  alloc::pool_config cfg_;
  alloc::corw<std::uint32_t> def_;
  alloc::corw<WordT> tuned_;
  workloads::hash_join join_;
  event_timer timer_;
};

// TLB-scoped sampling / grouping: one pass vs passes of the tuning's scope.
template <class Run> class scoped_trial final : public trial {
public:
  // default_scope: the default configuration's scope (0: one pass).
  scoped_trial(const std::string &pool, std::uint64_t bytes, std::uint64_t scope,
               const validate_options &o, std::uint64_t default_scope = 0)
      : mem_(pool, bytes, o), run_(mem_.data(), bytes), scope_(scope),
        default_scope_(default_scope) {}
  double run(bool tuned) override {
    run_.reset();
    return timer_.ms([&] { run_.launch(tuned ? scope_ : default_scope_); });
  }
  std::string verify() override {
    for (bool tuned : {false, true}) {
      run(tuned);
      const std::string why = run_.verify();
      if (!why.empty())
        return (tuned ? "tuned: " : "default: ") + why;
    }
    return "";
  }

private:
  pool_part mem_;
  Run run_;
  std::uint64_t scope_, default_scope_;
  event_timer timer_;
};

} // namespace

std::uint64_t default_tlb_footprint(bool quick, int device) {
  std::size_t free_b = 0, total_b = 0;
  GPUPROBE_CUDA_CHECK(cudaSetDevice(device));
  GPUPROBE_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  // A pool kept from the stage before is free memory to this one: the footprint is the one that
  // stage computed (its kernels' code loaded since may have taken a few MiB: within 2 GiB, the
  // kept pool's bytes are taken as the footprint), so its pool is taken, not made again.
  const std::uint64_t f = tune::tlb_footprint_for(free_b + pool_keeper::kept_device_bytes(), quick);
  const auto kept = pool_keeper::kept();
  const std::uint64_t near = 2ull << 30;
  if (kept && kept->device == device && f + near >= kept->bytes && f <= kept->bytes + near)
    return kept->bytes;
  return f;
}

namespace {

// The TLB-scoped workloads' footprint: the option's, else most of the free memory.
std::uint64_t footprint_of(const validate_options &o) {
  return o.tlb_footprint ? o.tlb_footprint : default_tlb_footprint(o.quick, o.device);
}

// get_page + write on the allocator pools, and at 50 % free on a pool as large as the TLB footprint
// (where a pool can exceed the shared level's reach, so regions can apply).
void getpage_rows(std::vector<workload> &w, const alloc::tuning &t, const validate_options &o,
                  const std::string &pool, std::uint64_t footprint) {
  std::vector<double> fractions = {0.5, 0.1, 0.01, 0.005};
  if (o.quick)
    fractions = {0.5, 0.01};
  std::vector<std::pair<std::uint64_t, double>> cells;
  for (double f : fractions)
    cells.emplace_back(o.pool_bytes, f);
  cells.emplace_back(footprint, 0.5);
  for (const auto &[bytes, f] : cells) {
    char name[64];
    if (bytes == o.pool_bytes)
      std::snprintf(name, sizeof name, "getpage_write/free:%g%%", f * 100);
    else
      std::snprintf(name, sizeof name, "getpage_write/pool:%s/free:%g%%", gib(bytes, "").c_str(),
                    f * 100);
    const auto layout =
        alloc::layout_regions(t, bytes, std::uint64_t(k_page_bytes) * unsigned(t.word_bits));
    w.push_back({name, pool, words_regions(32, {}), words_regions(t.word_bits, layout),
                 words_regions_changes(t.word_bits, layout.regions),
                 [=, bytes = bytes, f = f] {
                   return alloc::with_word(t, [&](auto word) -> std::unique_ptr<trial> {
                     return std::make_unique<getpage_trial<decltype(word)>>(pool, bytes, f, t, o);
                   });
                 },
                 bytes});
  }
}

// CRW's cluster start, rw_malloc's regions and the hash join's pages (words and regions).
void allocator_rows(std::vector<workload> &w, const alloc::tuning &t, const validate_options &o,
                    const std::string &pool) {
  std::vector<model::decision_change> crw;
  if (t.crw != alloc::crw_start::thread)
    crw = {{decision::crw_placement, "thread", alloc::to_string(t.crw)}};
  w.push_back({"crw_write/free:10%", pool, "CRW start thread",
               std::string("CRW start ") + alloc::to_string(t.crw), crw,
               [=] { return std::make_unique<crw_trial>(pool, o.pool_bytes, t, o); },
               o.pool_bytes});
  const auto malloc_layout = alloc::layout_regions(t, o.pool_bytes, k_malloc_window_bytes);
  w.push_back({"rw_malloc_mixed_write", pool, "rw_malloc one region",
               "rw_malloc " + (malloc_layout.regions > 1
                                   ? std::to_string(malloc_layout.regions) + " regions"
                                   : std::string("one region")),
               words_regions_changes(32, malloc_layout.regions),
               [=] { return std::make_unique<malloc_trial>(pool, o.pool_bytes, t, o); },
               o.pool_bytes});
  const auto join_layout = alloc::layout_regions(
      t, o.pool_bytes, std::uint64_t(k_join_page_bytes) * unsigned(t.word_bits));
  w.push_back({"hash_join/4M", pool, words_regions(32, {}), words_regions(t.word_bits, join_layout),
               words_regions_changes(t.word_bits, join_layout.regions),
               [=] {
                 return alloc::with_word(t, [&](auto word) -> std::unique_ptr<trial> {
                   return std::make_unique<join_trial<decltype(word)>>(pool, o.pool_bytes, t, o);
                 });
               },
               o.pool_bytes});
}

// The TLB-scoped gathers at the scope chosen against one pass, and against the scope of
// the level's former capacity, the middle of its ramp; each row that measures a difference
// differs in the scope alone.
void tlb_rows(std::vector<workload> &w, const alloc::tuning &t, const validate_options &o,
              const std::string &pool, std::uint64_t footprint) {
  const std::uint64_t group_footprint = footprint > 4 * k_gib ? footprint - 2 * k_gib : footprint;
  const std::uint64_t s = t.tlb_scope_bytes, m = t.tlb_scope_midpoint_bytes;
  const auto passes = [&](std::uint64_t fp, std::uint64_t sc) {
    return sc >= fp ? std::string("one pass")
                    : std::to_string(workloads::scope_passes(fp, sc)) + " passes of " + gib(sc);
  };
  // A row differs in the scope alone, where one of its two scopes takes more than one pass; its
  // trial maps `bytes`.
  const auto row = [&](std::uint64_t bytes, const std::string &name, const std::string &from,
                       const std::string &to, bool differs,
                       std::function<std::unique_ptr<trial>()> make) {
    std::vector<model::decision_change> c;
    if (differs)
      c = {{decision::tlb_scope, from, to}};
    w.push_back({name, pool, from, to, c, std::move(make), bytes});
  };
  row(footprint, "tlb_sampling/" + gib(footprint, ""), "one pass",
      s ? std::to_string(workloads::scope_passes(footprint, s)) + " passes of " + gib(s)
        : "one pass",
      s && s < footprint, [=] {
        return std::make_unique<scoped_trial<workloads::sampling_run>>(pool, footprint, s, o);
      });
  row(group_footprint, "tlb_grouping/" + gib(group_footprint, ""), "one pass",
      s ? std::to_string(workloads::scope_passes(group_footprint, s)) + " passes of " + gib(s)
        : "one pass",
      s && s < group_footprint, [=] {
        return std::make_unique<scoped_trial<workloads::grouping_run>>(pool, group_footprint, s, o);
      });
  if (s && m && m != s) {
    row(footprint, "tlb_sampling/" + gib(footprint, "") + " vs ramp middle", passes(footprint, m),
        passes(footprint, s), m < footprint || s < footprint, [=] {
          return std::make_unique<scoped_trial<workloads::sampling_run>>(pool, footprint, s, o,
                                                                         m < footprint ? m : 0);
        });
    row(group_footprint, "tlb_grouping/" + gib(group_footprint, "") + " vs ramp middle",
        passes(group_footprint, m), passes(group_footprint, s),
        m < group_footprint || s < group_footprint, [=] {
          return std::make_unique<scoped_trial<workloads::grouping_run>>(
              pool, group_footprint, s, o, m < group_footprint ? m : 0);
        });
  }
}

} // namespace

std::shared_ptr<pool_source> shared_pools(const validate_options &o) {
  return std::make_shared<pool_source>(std::max(o.pool_bytes, footprint_of(o)), o.device, o.seed);
}

void release_pools(const std::shared_ptr<pool_source> &pools) {
  if (pools)
    pools->release();
}

std::string pools_note(const std::shared_ptr<pool_source> &pools) {
  return pools ? pools->take_note() : std::string();
}

std::vector<workload> validation_workloads(const alloc::tuning &t, const validate_options &o) {
  if (o.pool_bytes < (1ull << 30))
    throw error("validate: pools must be at least 1 GiB");
  const std::uint64_t footprint = footprint_of(o);
  std::vector<workload> w;
  for (const std::string pool : {"cudamalloc", "vmm"}) {
    getpage_rows(w, t, o, pool, footprint);
    allocator_rows(w, t, o, pool);
    tlb_rows(w, t, o, pool, footprint);
  }
  return w;
}

ab_samples measure_ab(const workload &w, const analysis::sequential_rule &rule,
                      const std::string &command) {
  auto tr = w.make();
  tr->run(false), tr->run(true); // warm-up
  auto seq = analysis::run_sequential([&](bool tuned) { return tr->run(tuned); }, rule);
  const std::string why = tr->verify();
  if (!why.empty())
    throw error(command + ": " + w.name + " on " + w.pool +
                " failed its check after timing: " + why);
  std::string line = seq.line(); // before the samples are moved out
  return {std::move(seq.default_ms), std::move(seq.tuned_ms), std::move(line)};
}

ab_samples measure_ab(const workload &w, int reps, const std::string &command) {
  analysis::sequential_rule fixed; // one look, at `reps`: a fixed design
  fixed.min_reps = fixed.max_reps = reps;
  return measure_ab(w, fixed, command);
}

} // namespace gpuprobe::tune
