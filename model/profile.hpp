#pragma once
// profile.json (gpuprobe.profile/2, characterize; also raw/tlb_profile.json, `analyze tlb`) as one
// typed value: the TLB levels and candidates with their structure and sharing, the stages that
// made it. Analysis writes it, tune and the fleet read it, the report draws it: all through
// profile_from_json / to_json, the one place that spells its keys. What no stage after
// characterize reads (a level's evidence, the cross-check, the atomics fits) is kept as
// `detail` and written back as read, so a file round-trips byte for byte. Host-only.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::model {

// Which SMs share one TLB level (sharing stage, probes::analyze_sharing).
struct level_sharing {
  std::string scope = "not measured"; // private, groups, global, inconclusive, not measured
  // SM ids per group; absent where the sharing was not measured
  std::optional<std::vector<std::vector<int>>> groups;
  std::optional<std::string> reason;
  std::optional<std::string> source; // "raw/<file>": the matrix the answer was read from
  nlohmann::json detail = nlohmann::json::object(); // pairs, thresholds, notes, structure, ...
  bool has_groups() const { return scope == "groups" && groups && !groups->empty(); }
};

// What the tlb-conflict stage found for a level (level_structure::conflict, kept as written),
// read typed for those who show it: the minimal conflict sets' sizes and the ways they give, and
// whether that agrees with the ramp; else why none was found; and the set-index finding.
struct level_conflict {
  std::vector<int> set_sizes;
  std::optional<double> ways;      // absent: no conflict set found (`why` says why)
  std::optional<bool> agrees;      // W from the sets equals the ramp's (absent: not compared)
  std::optional<double> ramp_ways; // the ramp's W it was compared with
  bool resolved = true;            // false: the minimal sets differ in size
  std::string why;
  std::optional<std::string> set_index; // set_index.finding, where the stage pinned or tried it
};
// Throws gpuprobe::error naming the key of a value of the wrong kind.
level_conflict level_conflict_from_json(const nlohmann::json &j);

// A set-associative level's structure under the cyclic chase (probes/tlb/structure.hpp): where
// misses begin (entries = sets x ways) and where every hop misses.
struct level_structure {
  bool resolved = false;
  std::string shape; // "step" (fully associative) or "ramp"; "" when not resolved
  std::optional<double> entries, full_miss_entries, ways, sets;
  std::optional<double> midpoint_reach_bytes; // where the median curve is half way up
  std::optional<double> before_cycles, after_cycles, residual_cycles; // the fit's ends and error
  std::optional<int> ramp_points;         // measured points inside the ramp
  std::optional<std::string> why;         // not resolved: why
  std::optional<nlohmann::json> conflict; // the conflict sets (tlb-conflict stage), as written
  nlohmann::json detail = nlohmann::json::object(); // per stride, fit entries, slope, noise
  bool fully_associative() const { return resolved && sets && *sets == 1; }
};

// A level's per-SM pass (the tlb-per-sm stage, probes/per_sm/): each SM alone walks a footprint
// the level holds whole and one past where every hop misses it, at a stride of the level's
// coverage, on the alias range (translation alone). Per SM, in `sms` order: the hit's cycles per
// hop and the miss penalty (the miss's less the hit's), each the median of the reps.
struct level_per_sm {
  std::vector<int> sms;
  std::vector<double> hit_cycles, penalty_cycles;
  std::optional<double> noise_cycles; // rep to rep, one SM's penalty: the median |difference|
  std::optional<std::vector<int>> apart_sms;        // SMs whose penalty lies apart from the others'
  nlohmann::json detail = nlohmann::json::object(); // source, footprints, spreads, the bar
};

// What one entry of a level covers: tlb-coverage's verdict on it, as the profile keeps it.
struct level_coverage {
  std::optional<std::string> finding;               // the verdict in words
  std::optional<double> coverage_bytes;             // what one entry covers, as tested
  std::optional<std::string> fill;                  // how an entry fills: "whole", "in parts", ...
  std::optional<std::string> source;                // the raw file it came from
  nlohmann::json detail = nlohmann::json::object(); // the verdict's parts (tag, contrasts, ...)
};

struct tlb_level {
  double coverage_bytes = 0, reach_bytes = 0; // reach = entries x coverage: tune's region unit
  // Absent only in a profile written by hand (tune needs no more than reach and coverage); every
  // profile gpuprobe writes has them.
  std::optional<double> entries, miss_penalty_cycles;
  std::optional<double> ways, sets, full_miss_bytes; // with a resolved structure
  std::optional<std::string>
      coverage_bound;                       // exact, upper, lower, unknown (probes::coverage_bound)
  std::optional<double> confidence;         // 0..1, of the step detector
  std::optional<level_structure> structure; // absent in profiles before the structure
  std::optional<level_sharing> sharing;     // absent before the sharing stage ran
  std::optional<level_coverage> coverage;   // absent before the tlb-coverage stage ran
  std::optional<level_per_sm> per_sm;       // absent before the tlb-per-sm stage ran
  nlohmann::json detail = nlohmann::json::object(); // evidence, snr, penalty rule, ...
  std::string sharing_scope() const { return sharing ? sharing->scope : "?"; }
  // What one entry covers, in words ("" before tlb-coverage ran).
  std::string coverage_finding() const {
    return coverage && coverage->finding ? *coverage->finding : "";
  }
};

// tlb-sampling's verdict on one level, as the cross-check keeps it.
struct sampling_check {
  std::optional<std::string> verdict;
  std::optional<double> ratio;                      // above / below, where it was measured
  nlohmann::json detail = nlohmann::json::object(); // footprints, speeds, noise, L2 shares
};
// characterize's cross-check of one level (analysis::cross_check), matched to the real-memory
// chase's levels and to tlb-sampling's by label. It holds what the checks found, not the level:
// the level is the profile's, found by the label (the file writes its reach beside, in `detail`,
// for a reader of the block alone).
struct level_check {
  std::string level;                         // "L1", "C1"
  std::string real_memory;                   // "agrees: ...", "not seen in real memory", ...
  std::optional<std::string> miss_served_by; // "on chip (...)", "memory (...)"
  std::optional<sampling_check> sampling;
  nlohmann::json detail = nlohmann::json::object();
};
// The real-memory chase: an L2 hit and a memory access, in cycles per hop, with their source.
struct memory_access_check {
  std::optional<double> l2_hit_cycles, memory_cycles;
  std::optional<std::string> source;
  nlohmann::json detail = nlohmann::json::object(); // the extra cycles, as written
  // A memory access beyond an L2 hit (0 without both).
  double extra_cycles() const {
    return l2_hit_cycles && memory_cycles ? *memory_cycles - *l2_hit_cycles : 0;
  }
};
// The near/far L2 split of the real-memory chase's hops (p10 vs p90).
struct l2_split_check {
  std::optional<double> split_cycles, p10_cycles, p90_cycles;
  nlohmann::json detail = nlohmann::json::object(); // points, footprints
};
// tlb-sampling's verdict of one level as the cross-check keeps it (its "verdict" and "ratio"
// typed, the rest as written).
sampling_check sampling_check_from_json(const nlohmann::json &j);
nlohmann::json to_json(const sampling_check &s);

struct tlb_cross_check {
  std::string method;
  std::vector<level_check> levels;
  std::optional<memory_access_check> memory_access;
  std::optional<l2_split_check> l2_split;
  nlohmann::json detail = nlohmann::json::object();
  // The check of the level labelled `label` ("L2"), or nullptr.
  const level_check *find(const std::string &label) const;
};

struct tlb_hierarchy {
  std::vector<tlb_level> levels, candidates;
  std::optional<double> searched_up_to_bytes;       // the largest footprint measured
  std::optional<tlb_cross_check> cross_check;       // characterize's checks per level
  nlohmann::json detail = nlohmann::json::object(); // notes, inputs, cache effects, ...
};

// One numbering everywhere (CLI, stage files, tune, report, bench): levels L1, L2, ... and
// candidates C1, C2, ..., from 1, innermost first; `index` is the position in the profile's list.
std::string level_label(bool candidate, std::size_t index);
// f(level, candidate, label) over a profile's levels, then its candidates, in that numbering.
template <class F> void for_each_level(const tlb_hierarchy &tlb, F &&f) {
  for (const bool candidate : {false, true}) {
    const auto &list = candidate ? tlb.candidates : tlb.levels;
    for (std::size_t i = 0; i < list.size(); ++i)
      f(list[i], candidate, level_label(candidate, i));
  }
}

// One stage of characterize as the profile records it (pipeline::stage_runner).
struct stage_record {
  std::string name, file, status; // status: "ran", "kept", "reanalyzed"
  std::optional<double> seconds;  // absent: a kept stage whose time was not recorded
  std::optional<std::string> rerun_because;
};

struct profile {
  std::string schema;                               // "gpuprobe.profile/2"
  nlohmann::json device = nlohmann::json::object(); // common/device_info.hpp's block
  nlohmann::json meta = nlohmann::json::object();   // run_metadata: tool, commit, argv
  tlb_hierarchy tlb;
  std::optional<std::vector<stage_record>> stages;  // characterize's profile only
  nlohmann::json detail = nlohmann::json::object(); // atomics, conditions, quick, wall time
  std::string gpu_uuid() const { return device.value("uuid", ""); }
  std::string gpu_name() const { return device.value("name", ""); }
  // Provenance as `gpuprobe compare` lists it ("-" where the file lacks it).
  std::string device_text(const char *key) const;  // driver_release, driver_version, ...
  std::string commit() const;                      // meta.git_commit
  std::string meta_text(const char *key) const;    // meta's created_utc, version, ... ("-")
  std::optional<double> sm_clock_mhz_seen() const; // the SM clock the run saw, where recorded
  std::optional<long long> seed() const;           // meta.seed, where recorded
  bool quick() const;                              // a --quick characterize
  std::string mode() const { return quick() ? "quick" : "full"; }
  bool throttled() const; // conditions.throttled
  bool busy() const;      // conditions.busy: other processes seen
};

// Throws gpuprobe::error in one line naming `source`: another schema or a newer version (refused),
// a missing or mistyped key.
profile profile_from_json(const nlohmann::json &doc, const std::string &source);
profile read_profile(const std::string &path);
nlohmann::json to_json(const profile &p);

level_sharing level_sharing_from_json(const nlohmann::json &j);
level_coverage level_coverage_from_json(const nlohmann::json &j);
nlohmann::json to_json(const level_coverage &c);
// Refuses a group naming an SM id no GPU has (model::impossible_value): the reader's check, for a
// level_sharing made in process from a matrix read.
void check_sm_ids(const level_sharing &s);
nlohmann::json to_json(const level_sharing &s);
level_per_sm level_per_sm_from_json(const nlohmann::json &j); // throws impossible_value
nlohmann::json to_json(const level_per_sm &s);
stage_record stage_record_from_json(const nlohmann::json &j);

// What characterize writes of its own run beside the findings (pipeline/characterize_driver.cpp),
// read typed from the profile document it finds in the folder: the conditions the run saw, its
// mode and wall time, its stages, and who measured it (a reanalysis keeps the first measurement's
// meta and counts itself). Missing parts read as empty; a part of another kind throws
// gpuprobe::error naming it and `where`.
struct run_record {
  nlohmann::json conditions = nlohmann::json::object();
  std::optional<bool> quick;
  std::optional<double> wall_seconds;
  std::vector<stage_record> stages;
  nlohmann::json measured_by = nlohmann::json::object(); // reanalyzed.measured_by, else meta
  int reanalyzed_times = 0;
};
run_record run_record_from_json(const nlohmann::json &profile_doc, const std::string &where);
// The parts of a run's conditions (pipeline/gpu_conditions.hpp, characterize's clock record) that
// characterize reads back: nvidia-smi's peak SM clock, the throttle verdict, the other processes
// seen. A part of another kind throws gpuprobe::error naming it.
struct run_conditions {
  std::optional<double> sm_clock_mhz_max;
  bool throttled = false;
  std::vector<std::string> busy;
};
run_conditions run_conditions_from_json(const nlohmann::json &conditions);
nlohmann::json to_json(const stage_record &s);
nlohmann::json to_json(const level_structure &s);
tlb_level tlb_level_from_json(const nlohmann::json &j);
nlohmann::json to_json(const tlb_level &L);
// What a level's numbers must be for any GPU (the reader's refusals, for a level built in process):
// positive, finite, a coverage of a power of two bytes, a reach of entries x coverage, entries of
// ways x sets. Else impossible_value.
void check_tlb_level(const tlb_level &L);
// A hierarchy's `list` ("levels", "candidates") of n entries holds no more than a GPU has
// (k_max_tlb_levels), else impossible_value.
void check_level_count(const char *list, std::size_t n);
nlohmann::json to_json(const level_check &c);
tlb_cross_check tlb_cross_check_from_json(const nlohmann::json &j);
nlohmann::json to_json(const tlb_cross_check &c);
tlb_hierarchy tlb_hierarchy_from_json(const nlohmann::json &j);
nlohmann::json to_json(const tlb_hierarchy &h);

} // namespace gpuprobe::model
