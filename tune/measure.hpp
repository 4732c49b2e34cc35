#pragma once
// The GPU side of `gpuprobe tune` and `gpuprobe validate` (tune/*.cu), callable from host code.
// Every measurement is checked after timing (pages unique and written, checksums) and throws
// gpuprobe::error when a check fails.
#include "allocators/tuning.hpp"
#include "analysis/sequential.hpp"
#include "model/validation.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpuprobe::tune {

// ---- tune ----

// get_page of RW-BM or CoRW ("rw_bm" / "corw") with 32- and 64-bit words, interleaved, from an
// ids-only pool at `free_fraction` (2^23 pages, more when the free pages would not exceed the
// threads by a quarter).
struct word_sample {
  std::string allocator;
  double free_fraction = 0;
  std::uint64_t pages = 0, free_pages = 0, threads = 0;
  std::vector<double> ms32, ms64;
};
word_sample measure_word_size(const std::string &allocator, double free_fraction, unsigned threads,
                              int reps, std::uint64_t seed);

// CRW with each cluster placement, interleaved: `launches` consecutive launches of `threads`
// threads, each taking a page and writing it (1 KiB pages, 8 GiB pool at `free_fraction`); the
// time of the whole sequence.
struct crw_sample {
  alloc::crw_start start = alloc::crw_start::thread;
  double free_fraction = 0;
  std::vector<double> ms;
};
std::vector<crw_sample> measure_crw_placements(double free_fraction, unsigned threads,
                                               unsigned launches, int reps, std::uint64_t seed);

// TLB-scoped sampling over `footprint` bytes on a cudaMalloc and a scattered-VMM array, with
// each scope (0 = one pass), interleaved; each scope's sums are checked.
struct scope_sample {
  std::uint64_t scope_bytes = 0;
  std::string pool;
  std::vector<double> ms;
};
std::vector<scope_sample> measure_tlb_scopes(const std::vector<std::uint64_t> &scopes,
                                             std::uint64_t footprint, int reps, int device,
                                             std::uint64_t seed);

// The footprint of the TLB-scoped kernels on `device`: tlb_footprint_for (tune/decisions.hpp) of
// its free memory (all but 6 GiB; quick: a quarter).
std::uint64_t default_tlb_footprint(bool quick, int device);

// ---- validate ----

// One workload on one pool: run(false) is one timed repetition of the default configuration,
// run(true) of the tuned one (ms; untimed preparation inside); verify() after timing.
class trial {
public:
  virtual ~trial() = default;
  virtual double run(bool tuned) = 0;
  virtual std::string verify() = 0; // "" when both configurations' last results check out
};

struct workload {
  std::string name;                            // e.g. getpage_write/free:1%
  std::string pool;                            // cudamalloc | vmm
  std::string config_default, config_tuned;    // what each runs, in words
  std::vector<model::decision_change> changes; // the decisions the configurations differ in
  std::function<std::unique_ptr<trial>()> make;
  std::uint64_t pool_bytes = 0; // the memory its trial takes (validate runs the larger ones last)
  // False: the tuning changes nothing here (not measured).
  bool differs() const { return !changes.empty(); }
};

class pool_source; // validate_workloads.cu: the TLB-sized pool, shared by its workloads in turn
struct validate_options {
  std::uint64_t pool_bytes = 8ull << 30; // get_page / rw_malloc / hash join pools
  std::uint64_t tlb_footprint = 0;       // TLB-scoped kernels (0: most of the free memory)
  bool quick = false;                    // fewer free fractions, smaller TLB footprints
  int device = 0;
  std::uint64_t seed = 1;
  // Where the workloads take their memory from (shared_pools: the TLB-sized pool of a kind is
  // mapped once and held from one such workload to the next, and handed to a pool_keeper when
  // released). Null: each trial maps its own.
  std::shared_ptr<pool_source> pools;
};
std::shared_ptr<pool_source> shared_pools(const validate_options &o);
// Whether a workload's pool of `bytes` is served by a TLB-sized pool of `pool_bytes` (the shared
// one, or one kept from the stage before): at most its size and within 10 % below it.
inline bool served_by_tlb_pool(std::uint64_t bytes, std::uint64_t pool_bytes) {
  return bytes <= pool_bytes && double(bytes) >= 0.9 * double(pool_bytes);
}
// The held TLB-sized pool let go (to a pool_keeper's shelf if one lives, else freed), before
// something that does not take its memory from `pools` allocates.
void release_pools(const std::shared_ptr<pool_source> &pools);
// A line on the pool the last workload took, once (a pool kept from the stage before), or "".
std::string pools_note(const std::shared_ptr<pool_source> &pools);
// The order validate runs `workloads` in (indices into it): each pool kind's rows in turn, in the
// order the kinds first appear, and within a kind the smaller pools first, else as listed. Given a
// kept pool (kind name and bytes: one kept from the stage before, pool_keeper), the rows of that
// kind whose pool it holds (within 10 % below its bytes) go first.
std::vector<std::size_t> run_order(const std::vector<workload> &workloads,
                                   const std::string &kept_pool = "", std::uint64_t kept_bytes = 0);
std::vector<workload> validation_workloads(const alloc::tuning &t, const validate_options &o);

// A workload's two configurations, `reps` repetitions each in ABBA order (drifts cancel) after one
// warm-up each, then verify(): throws "<command>: <name> on <pool> failed its check after timing".
struct ab_samples {
  std::vector<double> default_ms, tuned_ms;
  std::string stopped; // the sequential rule's reason, e.g. "differs after 10 of 15 pairs"
};
ab_samples measure_ab(const workload &w, int reps, const std::string &command);
// The same, stopping by `rule` (analysis/sequential.hpp) once the answer is known.
ab_samples measure_ab(const workload &w, const analysis::sequential_rule &rule,
                      const std::string &command);

} // namespace gpuprobe::tune
