#pragma once
// `gpuprobe validate`'s results: per workload the medians, the 95 % bootstrap confidence interval
// of the ratio tuned / default, a Mann-Whitney U p-value Holm-corrected across the measured
// workloads, and the verdict. Host-only.
#include "model/validation.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::analysis {

struct workload_samples : model::compared_workload {
  std::vector<double> default_ms, tuned_ms;
  // The decisions the two configurations differ in.
  std::vector<model::decision_change> changes = {};
};

// The "workloads" of validation.json, in the input order. Throws gpuprobe::error when a
// measured workload has fewer than 2 samples on either side.
std::vector<model::validation_row> validation_rows(const std::vector<workload_samples> &w,
                                                   double alpha = 0.05, std::uint64_t seed = 1);

// One line per verdict kind, e.g. "2 faster, 14 no significant difference, 0 slower, 2 not tuned".
std::string verdict_summary(const std::vector<model::validation_row> &rows);

// The trade-offs of the tuning: every workload validate finds slower, charged to each decision
// its row's typed `changes` name ("word_size": 32- vs 64-bit; "regions": one vs N regions;
// "crw_placement"; "tlb_scope": one pass vs passes), each with its numbers and one line:
// [{decision, workload, pool, ratio, ci_low, ci_high, line}]. A row without `changes` (a file
// before them) is charged to nothing.
std::vector<model::tradeoff> tradeoffs(const std::vector<model::validation_row> &rows);

} // namespace gpuprobe::analysis
