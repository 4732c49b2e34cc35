#pragma once
// Decisions of `gpuprobe tune` that follow from measurements alone (host-only, testable): each
// returns its choice, the reason in one sentence, and the numbers behind it.
#include "allocators/tuning.hpp"
#include "model/profile.hpp"
#include "model/tuning.hpp"
#include "model/validation.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::tune {

// TLB-scoped pool regions. The translations that matter are those of the pages a kernel uses
// after get_page, so a pool is cut into regions of one TLB reach each (aligned to the level's
// page size), and each SM group sharing that level gets its own region. From the profile's
// largest level (or candidate) whose sharing analysis found groups; otherwise one region, and
// the reason says why.
struct region_decision {
  int regions = 1;
  double max_region_bytes =
      0; // the level's reach in whole pages; a pool of P bytes uses regions of
         // min(this, P / regions) rounded down to coverage_bytes (0: the whole pool)
  double coverage_bytes = 0;
  std::vector<int> sm_region; // SM id -> region (empty: every SM in region 0)
  std::string level;          // "L1", "C2" (model::level_label) used, or ""
  std::string reason;
  nlohmann::json per_level = nlohmann::json::array(); // decide_regions_measured: one per level
  model::tuning_decision decision() const; // tuning.json's block: the reason and the numbers
};

// What regions each level of the profile (and its largest candidate) would cut: per-SM regions
// for a private level (SM s -> region s), per-group regions for a level shared by SM groups; a
// level shared by every SM, one whose sharing was not measured, and one whose reach a pool of
// `largest_pool_bytes` cannot exceed have none (`skip` says why). `pool_bytes`: the pool to
// measure the option on, the smallest of {`small_pool_bytes`, `largest_pool_bytes`} that
// exceeds the reach (regions apply only to pools larger than it).
struct region_option {
  std::string level;       // "L1" (model::level_label)
  model::tlb_level tested; // the profile's level or candidate: its reach, page and sharing
  double pool_bytes = 0;
  region_decision regions;
  std::string skip; // "" when it can be measured
  double reach_bytes() const { return tested.reach_bytes; }
  std::string scope() const { return tested.sharing ? tested.sharing->scope : "not measured"; }
};
std::vector<region_option> region_options(const model::tlb_hierarchy &tlb, int sm_count,
                                          double small_pool_bytes, double largest_pool_bytes);

// One option measured: get_page + write at 50 % free on its pool, one region (ms_one) vs the
// option's regions (ms_scoped), medians of interleaved repetitions.
struct region_measurement {
  std::string level;
  double ms_one = 0, ms_scoped = 0;
};
// The option whose regions take at most (1 - tie) of one region's time, the fastest such; else
// one region. per_level holds every option with its numbers or its skip reason.
region_decision decide_regions_measured(const std::vector<region_option> &options,
                                        const std::vector<region_measurement> &measured,
                                        double tie = 0.03);

// Bitmap word size from a measurement of RW-BM/CoRW with 32- and 64-bit words at several free
// fractions: the size whose geometric-mean time is lower, unless the two are within `tie`
// (relative), when 32 is kept (the smaller LockMap). Theorems 1-2's TAS beside each point.
struct word_point {
  double free_fraction = 0;
  double ms32 = 0, ms64 = 0;   // medians
  double tas32 = 0, tas64 = 0; // Theorem 1 (Eq. 5) for w = 32, 64
  std::string allocator = "";  // rw_bm | corw
  double was32 = 0, was64 = 0; // Theorem 2 (Eq. 6) bounds
  double pages = 0, free_pages = 0, threads = 0;
};
// A workload measured with each word size (e.g. the hash join: an empty pool filling up).
struct word_workload {
  std::string name;
  double ms32 = 0, ms64 = 0; // medians
};
struct word_decision {
  int word_bits = 32;
  double geomean_ratio = 1; // ms64 / ms32 over the get_page points
  std::string reason;
  // Where the chosen size is more than `tie` slower than the other: a get_page point or a
  // workload, with its numbers ("corw at 100 % free (an empty pool): 64-bit 1.071x").
  std::vector<std::string> tradeoffs;
  std::vector<word_workload> workloads;
  // tuning.json's block: the reason and the numbers (the points measured).
  model::tuning_decision decision(const std::vector<word_point> &points) const;
};
// The choice follows the get_page points' geometric mean; the workloads only add trade-offs.
word_decision decide_word_size(const std::vector<word_point> &points, double tie = 0.03,
                               const std::vector<word_workload> &workloads = {});

// The scope of TLB-scoped kernels (sampling, grouping: every SM walks the same scope), in bytes
// (0: one pass), as tune measures it (decide_tlb_scope_measured, below: the one rule; the bench
// reads it from tuning.json).
struct scope_decision {
  std::uint64_t bytes = 0;
  std::string level; // "L1", "C2" (model::level_label) or "", "L2 x0.875" for a fraction
  // The same level's former capacity (the middle of its ramp, in whole pages), which the scope
  // was the earlier rule: validate compares the two. 0 when the level has no ramp middle above it.
  std::uint64_t midpoint_bytes = 0;
  std::string reason;
  nlohmann::json measurements = nlohmann::json::array(); // tune's: scope, pool, ms
  model::tuning_decision decision() const; // tuning.json's block: the reason and the numbers
};

// tune measures the scope instead: every level's and candidate's reach (where its misses begin,
// in whole pages of it, largest first) is a possible scope, and so are 15/16, 7/8, 13/16, 3/4,
// 5/8 and 1/2 of the reach of each level that reaches at least an eighth of `footprint` (0: every
// level; an H200 sampling 133 GiB ran fastest at 3/4 of the 64 GiB where misses begin):
// random access fills a set-associative level's sets unevenly, so the best scope may lie below
// its capacity. Sampling over a footprint that exceeds them is timed with each and with one pass
// (a small level's scope multiplies the passes; a low-confidence candidate may be real). The
// largest scope within `tie` of the fastest (geometric mean over the pools) wins: a flat bottom
// then gives the same scope every run; within `tie` of one pass, one pass is kept.
// A view over the level it is a fraction of: its bytes and ramp middle are the level's.
struct scope_option {
  std::string label;       // "L1", "C2" (model::level_label)
  model::tlb_level tested; // the profile's level or candidate: its reach, page and structure
  double fraction = 1;     // of the level's reach
  // fraction x reach, in whole pages of the level (2 MiB where its page is not known)
  std::uint64_t bytes() const;
  std::string name() const; // "L2", "L2 x0.875"
  // The level's ramp middle in whole pages, where it lies above its reach (0: none above).
  std::uint64_t midpoint_bytes() const;
};
std::vector<scope_option> scope_options(const model::tlb_hierarchy &tlb,
                                        std::uint64_t footprint = 0);
struct scope_point {
  std::uint64_t scope_bytes = 0; // 0: one pass
  std::string pool;
  double ms = 0; // median
};
scope_decision decide_tlb_scope_measured(const std::vector<scope_option> &options,
                                         const std::vector<scope_point> &points,
                                         std::uint64_t footprint, double tie = 0.03);

// CRW cluster placement from measured times of each candidate start ("thread" = RW paper
// Alg. 5, the default) at several free fractions: the lowest geometric mean, unless it is within
// `tie` of the default's, when the default is kept.
struct crw_point {
  std::string start;
  double free_fraction = 0;
  double ms = 0; // median
};
struct crw_decision {
  std::string start = "thread";
  double geomean_ratio = 1; // chosen / thread
  std::string reason;
  // tuning.json's block: the reason and the numbers (the points measured).
  model::tuning_decision decision(const std::vector<crw_point> &points) const;
};
// CRW's placements tie within 5 % of the per-thread start. Over the 53 committed runs of H100
// units (tests/fixtures/crw_placements.json, written by dev/calibrate_compare.py), where
// validate found no gain, the best other start read 0.970-1.017 of thread: the 3 % band tune
// used before let noise choose warp once (a quick run, 0.970).
inline constexpr double crw_tie = 0.05;
crw_decision decide_crw_placement(const std::vector<crw_point> &points, double tie = crw_tie);

// The footprint of the TLB-scoped kernels (tune's scope, validate's sampling and grouping) on a
// GPU with `free_bytes` free: all of it but 6 GiB (the grouping input and the context), in whole
// GiB, at least 1 GiB; `quick` a quarter of that. No model's numbers: an 80 GB and a 141 GB GPU
// each get their own.
std::uint64_t tlb_footprint_for(std::uint64_t free_bytes, bool quick);

// A region decision as the allocators take it (one region and no map where it has none).
alloc::tuning region_tuning(const region_decision &r);

// What the decisions mean to the allocators: tuning.json's "allocator" block is
// alloc::allocator_block_json of this (allocators/load_tuning.hpp writes and reads it).
alloc::tuning allocator_tuning(const word_decision &w, const region_decision &r,
                               const crw_decision &c, const scope_decision &s);

// The decisions a CoRW configuration of `bits`-bit words and `regions` regions differs in from
// validate's default (32-bit words, one region), as its rows record them.
std::vector<model::decision_change> words_regions_changes(int bits, unsigned regions);

} // namespace gpuprobe::tune
