#pragma once
// `gpuprobe tlb-conflict`: a level's ways measured a second way, by conflict sets on the alias
// range. For each level of a profile and each of a few windows of consecutive pages:
//   1. the fewest pages of the window whose cyclic walk misses at all (N0): one set holds W + 1;
//   2. a page x that misses there, and by group testing (remove a group; does x still miss?) the
//      pages of the window that share x's set: with x, a minimal set whose pages evict each other
//      (Vila et al., S&P 2019, reduce an eviction set the same way). Its size is W + 1.
// The walk stays long while groups are removed, so inner levels keep missing and only this
// level's set decides. Planning and JSON (result.cpp) and the search (search.cpp) are host code,
// tested with a simulated TLB; run_conflict needs a GPU (driver.cpp).
#include "common/device_info.hpp"
#include "common/envelope.hpp"
#include "model/profile.hpp"
#include "probes/level_target.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct conflict_options {
  int windows = 4;                // conflict sets per level (windows start `window_step` apart)
  std::uint32_t window_step = 97; // pages between windows' starts
  int max_scan = 64;              // pages past the level's entries searched for N0
  int max_tests = 600;            // group tests per target, at most
  int max_ways = 64;              // a set found larger than 2x this is not one set
  int predict_windows = 2;        // fresh windows where a pinned set index is checked
  int repeat_walks = 0;     // a fully associative level: walks of E and E + 1 pages from windows 0
                            // and 97, before and after its search
  int home_offsets = 0;     // a fully associative level: those walks at this many offsets k x 4 KiB
                            // inside the chunk (each offset's word has its own L2 home)
  bool group_walks = false; // a set-associative level: walks of some pages of each 512 MiB group
                            // of the range over fewer and more groups than a full walk touches
  // Group testing: where a group held a partner and its first half held none, its second half is
  // split without a test of its own (it must hold the partner). On an H100 the same sets, onsets
  // and predictions as testing it in 3 of 3 runs, L2 in 14 % fewer walks.
  bool infer_halves = true;
  // The onset scan starts E / this below the entries E (against E / 64, on an H100: the same
  // onsets, sets and predictions in 3 of 3 runs, L3 in 20 walks a window, not 68; tlb-conflict
  // 4.1-4.3 -> 2.6-2.8 s).
  int onset_start_share = 256;
  // Group testing by Hwang's generalized binary splitting (groups of about n / W pages, each
  // that holds a partner halved down to it, a first half without one inferred) instead of
  // quarters halved down to single pages (where infer_halves applies). On an H100 the same
  // onsets, sets and predictions in 3 of 3 runs, L2's walks 151-210 -> 119-187 a window, L1's
  // 50 -> 22.
  bool generalized_split = true;
  int timed_laps = 3; // timed laps a walk (the kernel's samples: at least 2048 hops)
  std::uint64_t seed = 1;
};

// One level of the profile to test ("skipped" says why not).
struct conflict_target : level_target {
  std::uint64_t coverage_bytes() const { return std::uint64_t(tested.coverage_bytes); }
  std::uint64_t entries() const { return std::uint64_t(std::llround(tested.entries.value_or(0))); }
  // The structure fit's rise (mean cycles per hop), 0 without a structure.
  double penalty_cycles() const;
  double miss_fraction = 0.5; // a hop missed past hit + this x the penalty
};
std::vector<conflict_target> plan_conflict(const model::tlb_hierarchy &tlb);
// Bytes of alias range the targets need (the last window's last page).
std::uint64_t conflict_range_bytes(const std::vector<conflict_target> &t,
                                   const conflict_options &o);

// Pages start, start + 1, ..., start + n - 1: a window of consecutive pages.
std::vector<std::uint32_t> pages_from(std::uint32_t start, std::uint32_t n);
// The search's step below a level's entries (E / 64, at least 2), and the window it calibrates the
// hit on: E - 2 steps from `start` (at least 2 pages), well below the capacity, past inner levels.
std::uint32_t calibration_step(const conflict_target &t);
std::vector<std::uint32_t> hit_calibration_pages(const conflict_target &t, std::uint32_t start);

// The mean cycles of each position's hop in a cyclic walk over `pages` (page indices).
using walk_fn = std::function<std::vector<double>(const std::vector<std::uint32_t> &pages)>;

// A hit's cost differs position to position: on H100, in walks of L1's 16 pages, by up to +5.5
// cycles at one position in four, by the word's L2 home, past half of L1's
// 10-cycle penalty. A fully associative LRU level's walk of E + 1 pages misses at every position
// and its walk of E - 1 pages at none: miss_fraction puts the threshold midway between the
// latter's dearest hop and the former's cheapest (two walks each), as a fraction of the penalty;
// 0.5 where they overlap or the midpoint lies outside 0.25-1 of the penalty. `hit`: the median of a
// walk of E / 2 pages; hit_max, miss_min: those hops over it.
double miss_fraction(const walk_fn &walk, const conflict_target &t, double &hit, double &hit_max,
                     double &miss_min);

struct conflict_set {
  std::uint32_t window_start = 0;
  std::uint32_t onset_pages = 0;      // N0: the fewest consecutive pages whose walk misses
  double hit_cycles = 0;              // a hop's cost before misses begin (this walk's calibration)
  std::vector<std::uint32_t> missing; // pages missing at N0
  std::uint32_t target = 0;           // x
  std::vector<std::uint32_t> members; // x and the pages that share its set, ascending
  std::vector<std::uint32_t> dropped; // group-tested pages whose removal did not let x hit again
  // "group testing", or "onset union" where no page missed in two walks (a replacement that is
  // not LRU: at the onset the one overflowing set's pages miss in turns): the pages that missed
  // in any of several walks of N0, which all lie in that set.
  std::string method;
  int tests = 0;
  std::string failed; // "" when found
};

// Finds one conflict set in the window starting at `start` (throws nothing: `failed` says why).
conflict_set find_conflict_set(const walk_fn &walk, std::uint32_t start, const conflict_target &t,
                               const conflict_options &o);

// A pinned set index checked by prediction: in a window whose alignment no
// set was found in, the function names the pages that share a missing page x's set; removing
// each of them alone, and all of them, must let x hit, and removing as many other pages must not.
struct set_prediction {
  std::uint32_t window_start = 0, onset_pages = 0, target = 0;
  std::vector<std::uint32_t> predicted; // the window's pages the function puts in x's set (not x)
  bool hit_without_predicted = false, missed_without_others = false;
  std::size_t partners_confirmed = 0; // predicted pages whose removal alone lets x hit
  // Where no page missed in two walks: the onset's union of missing pages, and whether it lies in
  // at most two of the function's sets, each of at most W + 1 pages of the window, all of them
  // but one in the union.
  std::vector<std::uint32_t> onset_union;
  bool union_in_predicted_sets = false; // the rule above held
  std::size_t union_sets = 0;
  std::string method; // "removal" or "onset union"
  std::string failed; // "" when the walks were made
  bool held() const {
    if (!failed.empty())
      return false;
    if (method == "onset union")
      return union_in_predicted_sets;
    return hit_without_predicted && missed_without_others && partners_confirmed == predicted.size();
  }
};
// `masks`: the index functions over page numbers (probes::set_index_bits); `page_base`: the
// page number of page 0 of the range (va_base / page).
// `by_union`: check by the onset's union even where a page misses in two walks (the level's own
// sets were onset unions: a set one page short of W + 1 overflows, so removing one partner need
// not let x hit, and the removal check would fail a right function).
set_prediction predict_set(const walk_fn &walk, std::uint32_t start, const conflict_target &t,
                           const conflict_options &o, const std::vector<std::uint64_t> &masks,
                           std::uint64_t page_base, bool by_union = false);
// The fresh windows' starts: past every window a set was searched in, on another alignment.
std::uint32_t prediction_start(const conflict_options &o, int i);

struct conflict_level_result {
  conflict_target target;
  std::uint64_t va_base = 0; // the pool's virtual address (page p sits at va_base + p x page)
  std::vector<conflict_set> sets;
  std::vector<set_prediction> predictions; // where the sets pinned the index
  // A fully associative level: miss_fraction's calibration (hops over the hit, cycles).
  double hit_max_cycles = 0, miss_min_cycles = 0;
  // repeat_walks: "before"/"after" the search, start, pages, and how many of the walks had a
  // page whose mean cost passed hit + half the penalty.
  struct repeat {
    std::string when;
    std::uint32_t start = 0, pages = 0;
    int walks = 0, missed = 0;
    double hit_cycles = 0, worst_excess_cycles = 0; // the largest position mean over the hit
  };
  std::vector<repeat> repeats;
  // home_offsets: at one offset inside the chunk, the SM the walk ran on, the hit, and how many
  // walks of E and E + 1 pages had a page past hit + half the penalty.
  struct home_walk {
    std::uint64_t offset = 0;
    int smid = -1;
    double hit_cycles = 0;
    int walks = 0, missed_e_minus_1 = 0, missed_e = 0, missed_e1 = 0;
    double fraction = 0.5; // miss_fraction calibrated at this offset
    int calibrated_missed_e = 0, calibrated_missed_e1 = 0; // at that threshold
    std::vector<double> excess_e; // one walk of E pages: each position's mean over the hit
  };
  std::vector<home_walk> homes;
  // group_walks: `per_group` pages of each of `groups` 512 MiB groups; the most pages any set of
  // the pinned index holds (0: not pinned) and the most pages that missed in one walk.
  struct group_walk {
    std::uint32_t per_group = 0, groups = 0;
    std::size_t most_in_a_set = 0;
    int walks = 0;
    std::size_t most_missing = 0;
    double hit_cycles = 0;
  };
  std::vector<group_walk> group_walks;
  // The first onset-union window's onset walk begun at other pages of the window: the pages that
  // missed in any of its walks (a page that never misses: its place in the walk, or the page?).
  struct rotation {
    std::uint32_t window_start = 0, pages = 0, first = 0;
    std::vector<std::uint32_t> missing;
  };
  std::vector<rotation> rotations;
  double seconds = 0;
};

struct conflict_result : result_envelope {
  std::string profile;
  conflict_options options; // how the sets were searched (written as "search")
  std::uint64_t range_bytes = 0;
  std::vector<conflict_level_result> levels;
  double wall_seconds = 0;
};

// Issue 45 item 5's diagnoses (diagnose.cpp): the walks at offsets inside the chunk, and the
// group walks (masks: the pinned index functions over page numbers, may be empty).
class list_chase;
void walk_homes(list_chase &chase, const conflict_target &t, const conflict_options &o,
                conflict_level_result &l);
void walk_groups(const walk_fn &walk, const conflict_target &t, const conflict_options &o,
                 const std::vector<std::uint64_t> &masks, std::uint64_t page_base,
                 std::uint32_t range_pages, conflict_level_result &l);
void walk_rotations(const walk_fn &walk, const conflict_target &t, const conflict_options &o,
                    conflict_level_result &l);
// The pages of a group walk: the first `per_group` of each of `groups` groups of `group_pages`.
std::vector<std::uint32_t> group_pages_of(std::uint32_t group_pages, std::uint32_t per_group,
                                          std::uint32_t groups);

conflict_result run_conflict(const conflict_options &o, const model::tlb_hierarchy &tlb,
                             const std::string &profile_path, const device_info &dev);

nlohmann::json to_json(const conflict_result &r);

} // namespace gpuprobe::probes
