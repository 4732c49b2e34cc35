#pragma once
// Turns TLB curves into levels by the TLB paper's rule (Karnagel et al. 2017, §3):
// for a level of E entries and page size P, a stride s misses first at footprint E*max(s, P):
// strides below P share one boundary (with a penalty smaller by s/P), strides above P miss
// later, after E hops. A step whose hop count is the same for every stride and whose touched
// cache lines reach the L2 size is an L2-capacity effect, not a TLB level.
#include "common/defaults.hpp"
#include "common/steps.hpp"
#include "model/profile.hpp"
#include "probes/tlb/data.hpp"
#include "probes/tlb/structure.hpp"
#include "probes/tlb/synthesis.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct tlb_step { // one rise on one stride's curve
  double stride_bytes = 0;
  std::string source;
  step s;
  bool plateau = false; // found between long plateaus (detect_plateau_steps), snr in their SEs
  double hops() const { return s.x_lo / stride_bytes; }
};

// How tightly the strides tested pin a level's page size.
enum class coverage_bound {
  exact,
  upper /* page <= coverage_bytes */,
  lower /* page >= coverage_bytes */,
  unknown
};
std::string to_string(coverage_bound b);

// The levels' one numbering and the walk over them live with the profile's model.
using model::for_each_level;
using model::level_label;

// How far the sweep went, for a line: "searched up to 256 GiB", or "search limit not recorded"
// where the profile holds none (never "up to 0 B").
std::string searched_words(const model::tlb_hierarchy &tlb);
// A count for a line: "2048", or "—" where the profile holds none (never 0).
std::string count_or_dash(const std::optional<double> &v);

// A penalty against its spread over SMs (the tlb-per-sm stage): "over 132 SMs median 123.8, 89.4
// (SM 94) to 165.7 (SM 17); the headline is SM 124's (158.6 here)"; "" where that stage did not
// run.
std::string penalty_spread_words(const model::tlb_level &level);

// One level of a profile in one line, as characterize and run print it:
// "L2  2163 x 32 MiB = 67.59 GiB, +95 cycles, sharing: groups" (`label` includes any suffix).
std::string level_line(const std::string &label, const model::tlb_level &level);
// "entries 2046-2050, ways 7.9-8.1, sets 255-257, miss_penalty_cycles 94.1-96.5 cycles" from the
// level's `intervals`; "" where the profile has none (written before them).
std::string interval_words(const model::tlb_level &level);
// "8 ways x 256 sets", "fully associative", "structure not resolved", or "" (an older profile).
std::string structure_words(const model::tlb_level &level);
// Where the conflict sets and the ramp disagree on a level's ways ("agrees": false), the two
// methods' answers in words ("the ramp says 8 ways, the conflict sets 15"); "" where they agree or
// only one was measured.
std::string methods_disagree(const model::tlb_level &level);
// Marks a level whose methods disagree: `methods_disagree` in its detail, and its confidence
// halved (the profile, the summary and the terminal line show both). Returns whether it did.
bool mark_disagreement(model::tlb_level &level);
// One line on the level's structure: the shape, its ends and fit (or why it is not resolved),
// and what the conflict sets found.
std::string structure_detail(const model::tlb_level &level);

// The level's structure over the strides at or above its page (each stride's mean curve fitted
// alone; they must agree).
struct tlb_level_structure {
  structure_fit fit;               // the agreed one (the smallest stride's when resolved)
  std::vector<double> fit_strides; // the strides fitted, in order
  std::vector<structure_fit> per_stride;
  int agreeing = 0;            // strides whose resolved fit gives the same sets and ways
  double midpoint_entries = 0; // where the median curve crosses half the rise (before)
};

// The evidence of one level (the analysis's working record; a level crosses stages as
// model::tlb_level). A level is three findings, each with its own evidence (docs/analyze-tlb.md):
//  - existence (`confidence`, `existence`): a rise far above the noise that more than one stride
//    shows at the same place (several strides after the same hop count, or a smaller stride at
//    the same footprint); a small one is a candidate, named so;
//  - the page (`bound`, `penalty_rule`, `coverage_note`): exact, an upper or a lower bound; the s/P
//    penalty rule bears on this finding only;
//  - the structure (`structure`): ways and sets, or "not resolved" and why; never removes a level.
struct level_evidence {
  // Where misses begin: S x W when the structure is resolved; else the ramp's fitted onset
  // (± entries_se) where the fit found one, else the step detector's boundary.
  double entries = 0;
  double entries_se = 0; // two standard errors of `entries` when it is a fitted onset
  std::string existence; // why it is a level, or why only a candidate
  std::string coverage_note; // what the strides below the page say of it ("" = nothing to add)
  std::string disturbed; // strides of its evidence whose repeat disagreed ("" = none)
  double coverage_bytes = 0;
  coverage_bound bound = coverage_bound::unknown;
  double reach_bytes = 0;
  double miss_penalty_cycles = 0;
  double confidence = 0; // existence, 0..1: z on a scale where level_z reads min_confidence
  double snr = 0;        // median step / noise of the strides behind the level
  double z = 0; // the level test's statistic: the strides' rises in noise sigmas, Stouffer-summed
  int z_strides = 0;             // the strides summed into z
  double penalty_rule = 1;       // share of strides below the page whose step is s/P of the penalty
  std::vector<tlb_step> scaling; // strides >= page: boundary after `entries` hops
  std::vector<tlb_step> flat;    // strides < page: boundary at `reach_bytes`
  tlb_level_structure structure;
  // The level in the model of the whole sweep (synthesis.hpp), where the model ran.
  std::optional<fitted_level> model;
  double full_miss_bytes() const; // where every hop misses (reach_bytes when not resolved)
};

struct tlb_analysis_options {
  // The rises that may seed a level: single points this many noise sigmas up (the level test
  // below decides which become levels; null sweeps of real noise form almost no seed at 4.5).
  step_options steps = {defaults::tlb_seed_snr};
  double count_tolerance = 0.12;           // hop counts of one level agree within this fraction
  double reach_tolerance = 0.15;           // boundaries of strides below the page agree within this
  double min_entries = 8;                  // fewer hops than this measure L2 bank/set effects
  double min_confidence = 0.65;            // confidence at z = level_z (the scale of `confidence`)
  double level_z = defaults::level_test_z; // the level test: z at or above it is a level
  double confirm_snr = 3.0;    // a weaker rise may confirm a level's boundary below the page
  double line_bytes = 128;     // L2 line, for the cache-capacity test
  structure_options structure; // the ramp's fit
  int plateau_points = 10;     // mean curves: rises between plateaus of this many points...
  double plateau_snr = 8;      // ...this many standard errors of their medians apart
  // A stride whose curve rose earlier, at the level's penalty, is the level seen through fewer of
  // its sets, never evidence against it (the "inconsistent" rule's exception; off only in the
  // test that shows what the exception is for).
  bool earlier_rise_is_the_level = true;
  // Analysis by synthesis: the proposed levels are fitted as one model of every stride's curve;
  // it chooses their structure, page and penalty, adds a level where the proposals leave a
  // misfit and drops one the others explain. Unset: on for an aliased sweep (translation alone,
  // what the model holds), off for a sweep of real memory or the 2017 tool's CSVs, whose data
  // caches the model has no part for (`analyze tlb --model` / `--no-model` set it).
  std::optional<bool> synthesize;
  synthesis_options synthesis;
};

struct tlb_evidence {
  std::vector<level_evidence> levels;        // first level outward
  std::vector<level_evidence> cache_effects; // steps explained by L2 capacity
  // Rises explained as another level seen at larger strides: after the same hop count, or, where
  // the strides put every hop into a few of its sets, after fewer, at that level's penalty.
  std::vector<level_evidence> set_conflicts;
  std::vector<level_evidence> candidates; // "small" (z below level_z) or "inconsistent" rises
  std::vector<tlb_step> unexplained;      // rises that form no level
  double searched_up_to_bytes = 0;
  int sm = -1; // the SM the sweep ran on: each level's penalty is that SM's (-1: not recorded)
  std::vector<std::string> notes;
};

// The levels of `data` with the evidence behind each finding: the analysis's working record, which
// its tests and `to_json` read. Every stage after it reads the hierarchy (analyze_tlb).
tlb_evidence find_tlb_levels(const tlb_dataset &data, const tlb_analysis_options &opt = {});

// The profile's "tlb" block: levels, searched_up_to_bytes, notes, cache effects.
nlohmann::json to_json(const tlb_evidence &a);

// The hierarchy every stage after the analysis reads (model::tlb_hierarchy, model/profile.hpp),
// built in process: the same value a stage reads back from the file to_json(a) writes (a test
// holds it on the simulated family), and refused alike (impossible_value).
model::tlb_hierarchy hierarchy_of(const tlb_evidence &a);

// hierarchy_of(find_tlb_levels(data, opt)).
model::tlb_hierarchy analyze_tlb(const tlb_dataset &data, const tlb_analysis_options &opt = {});

} // namespace gpuprobe::probes
