#pragma once
// `gpuprobe compare A B`: two results folders — two runs of one unit, two units, two
// drivers or two builds — finding by finding. Structure (entries, ways, sets, page, what one entry
// covers, sharing scope and SM groups) reads SAME or DIFFERENT; a miss penalty DIFFERENT only past
// its threshold (below); a tuning decision SAME or CHANGED; a validation row's tuned time FASTER,
// SLOWER or SAME by a bootstrap interval of the ratio of medians; provenance (model, unit,
// driver, runtime, commit, mode, conditions) is listed, and where the two runs used another
// analysis version or mode that is said first: a difference may then be the method's.
// Host-only.
#include "analysis/significance.hpp"
#include "findings/fleet.hpp"
#include "model/fleet.hpp"
#include "model/run_folder.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::findings {

// What repeated full runs of one unit show for a validation row's tuned median, from the pairs'
// |B/A - 1| (the larger of the two orientations): `within`, the largest difference between runs
// at one value; a row that takes one of two values from run to run (the pairs fall in two tight
// groups, the upper at least 2.5 x and 2 points past the lower, each of 2 pairs or more) also has
// `step`, the range of the jump between its values; `rms`, the root mean square of the pairs at one
// value (their scale, where `within` is only their largest). A rule on the pairs alone:
// spread_of_pairs.
struct validation_spread {
  double within = 0;
  double rms = 0;
  std::optional<std::pair<double, double>> step;
  std::size_t pairs = 0;
};
// By GPU model ("": every model) and row ("workload on pool").
using spread_table = std::map<std::pair<std::string, std::string>, validation_spread>;

struct compare_thresholds {
  // A penalty differs where |B - A| passes both the larger of `penalty_rel` x A and
  // `penalty_abs_cycles`, and the two runs' stated intervals do not overlap (where both state
  // one). Calibrated on the committed repeat runs of one unit (docs/compare.md): the largest
  // difference seen there was 1.0 cycle at L3 (0.25 %), 0.1 at L2, 0 at L1.
  double penalty_rel = analysis::k_penalty_rel;
  double penalty_abs_cycles = analysis::k_penalty_abs_cycles;
  // A validation row's tuned time: FASTER / SLOWER where the 95 % bootstrap interval of
  // median(B) / median(A) lies wholly past the row's bar: with `calibrated`, the larger of
  // `time_floor` and the largest difference repeated full runs of one unit show for that row on
  // that GPU model (spread_for: `within`); a row they never measured, and every row when not
  // `calibrated` (compare --time-rel), `time_rel`. A row that takes two values from run to run
  // and differs by about its step (0.8 x to 1.25 x its range) is said, not counted.
  double time_rel = 0.03;
  double time_floor = 0.01;
  double tail_sigmas = 3.5;
  bool calibrated = true;
  // The spreads that gate validation times: the committed ones (measured_validation_spread)
  // where null; another table to judge a unit by the others' repeats alone (a held-out test).
  const spread_table *spreads = nullptr;
  int bootstrap = 2000;
  unsigned seed = 1;
  // A finding both runs' modes measure but whose value one of them lacks (null, missing or
  // unreadable) reads MISSING and counts as a difference; with `allow_missing` it is a NOTE.
  bool allow_missing = false;
};

validation_spread spread_of_pairs(std::vector<double> pairs);

// The committed runs' spread by GPU model and row ("workload on pool"): the model's own pairs,
// and under model "" every model's pooled (dev/calibrate_compare.py writes the pairs,
// findings/validation_spread.inc).
const spread_table &measured_validation_spread();
// The spread compare uses for `row` on `model` in `table` (null: the committed one): the model's,
// else every model's, else none.
const validation_spread *spread_for(const std::string &model, const std::string &row,
                                    const spread_table *table = nullptr);
// A table of spreads from pairs: model -> row -> each pair's |B/A - 1| (the fixture's layout).
spread_table
spread_table_of(const std::map<std::string, std::map<std::string, std::vector<double>>> &pairs);
// The bar of one validation row on `model` (compare_thresholds' rule).
double validation_bar(const std::string &model, const std::string &row,
                      const compare_thresholds &t = {});

// The penalty bar (analysis/significance.hpp) at `t`'s thresholds.
double penalty_bar(double a, double b, const compare_thresholds &t);

struct compare_finding {
  std::string area;    // provenance, structure, penalty, tuning, validation
  std::string item;    // "L2 ways", "word_size", "hash_join/4M on vmm"
  std::string a, b;    // the two values, in words
  std::string verdict; // SAME, DIFFERENT, CHANGED, FASTER, SLOWER, ONLY IN A, ONLY IN B, MISSING,
                       // NOTE
  std::string why;     // the rule that gave the verdict, with its numbers
};

struct compare_result {
  std::string a_dir, b_dir;
  bool method_differs = false; // another analysis commit or mode: said before every finding
  std::string method_note;
  // Both profiles were derived again from their raw measurements by this build (--reanalyze):
  // the analysis is one; the measuring builds are still listed (provenance).
  bool reanalyzed = false;
  std::vector<compare_finding> findings;
  // Findings that fail a gate (DIFFERENT, CHANGED, SLOWER, FASTER, ONLY IN A/B, MISSING): 0 =
  // same.
  int differences() const;
  // Findings whose value one run lacks (MISSING; with allow_missing those are NOTEs, counted
  // here all the same).
  int missing() const;
  // Findings judged: every one outside provenance (SAME, NOTE and those that fail a gate).
  int compared() const;
};

// `reanalyzed`: both profiles were derived again by this build (compare --reanalyze), so the
// analysis commits are one and only a difference of mode is a method's.
compare_result compare_runs(const model::run_folder &a, const model::run_folder &b,
                            const compare_thresholds &t = {}, bool reanalyzed = false);

// One unit against a fleet's baseline (`--baseline fleet.json`): each figure the fleet keeps for
// the unit's model (findings::read_unit's numbers) against the median of the model's other units
// (the unit itself left out where the fleet holds it), by the fleet's own outlier rule:
// DIFFERENT where |x - median| / max(MAD, 1 % of the median) passes 3.5; with fewer than three
// other units, NOTE (no spread to judge by).
compare_result compare_to_fleet(const model::fleet_unit &unit, const model::fleet &fleet,
                                const fleet_rule &rule = {});

// gpuprobe.compare/1
nlohmann::json to_json(const compare_result &r, const compare_thresholds &t);
// The Markdown for a PR or a ticket: provenance, then every finding that differs, then the count
// of those that do not.
std::string to_markdown(const compare_result &r);
// The same for a terminal: plain text (no Markdown escapes or tables), data made safe for a
// terminal line (control characters shown escaped).
std::string to_text(const compare_result &r);
// The one line compare always prints: "gpuprobe compare: SAME (0 finding(s) differ, of 54)".
std::string verdict_line(const compare_result &r, bool allow_missing);

} // namespace gpuprobe::findings
