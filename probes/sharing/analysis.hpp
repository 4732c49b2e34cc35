#pragma once
// Which SMs share a TLB level, from a victim x disruptor latency matrix.
//
// Cell (i, k): cycles per hop SM i sees when re-walking its pages after SM k walked a disjoint
// set. The diagonal (k = i) is the positive control: the victim evicts itself. A baseline (no
// disruptor) is the unshared latency; the 2017 tool has none, so a row's median stands in.
// Every threshold comes from the matrix itself: cells are normalised per row to
// x = (cell - ref) / (diagonal - ref), so 0 looks like "not shared" and 1 like the diagonal, and
// the split between the two clusters is Otsu's on x.
#include "model/profile.hpp"
#include "probes/sharing/driver.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct sharing_matrix {
  std::string source; // file it came from
  std::string format; // "cuda-gpu-tlb" | "gpuprobe"
  std::string device_name;
  nlohmann::json device;                   // gpuprobe's device block (null for 2017 files)
  std::vector<int> sm_ids;                 // labels of rows and columns
  std::vector<std::vector<double>> cycles; // [victim][disruptor], cycles per hop
  std::vector<double> baseline;            // per victim, no disruptor; empty when absent
  nlohmann::json params;                   // level, page size, entries... (gpuprobe only)
};

// The 2017 cuda-gpu-tlb `TLBsharing-<strideKB>-<hops>.txt` format. Throws gpuprobe::error with
// file:line on malformed input.
sharing_matrix parse_tlbsharing_txt(const std::string &text, const std::string &source);
// gpuprobe's `tlb-sharing` result (gpuprobe.result/2, probe "tlb-sharing").
sharing_matrix parse_sharing_result(const nlohmann::json &doc, const std::string &source);
// Reads a file of either format (by content).
sharing_matrix load_sharing_input(const std::string &path);

struct sharing_analysis_options {
  double l1_hit_max_cycles = 100; // below: every access was an L1 hit (TLB never exercised)
  double l2_min_cycles = 200;     // any access reaching L2 costs at least this since Kepler
  double control_sigmas = 6;      // the diagonal must stand this many noise sigmas above ref
  double separation_sigmas = 8;   // two clusters of x must be this far apart to be two
  double clique_fraction = 0.9;   // a group's pairs that must be shared
  double global_fraction = 0.95;  // shared pairs (of all) for "global"
};

// Which SMs share a level: each its own, groups of SMs, all of them, or the data cannot say.
enum class sharing_scope { private_, groups, global, inconclusive };
std::string to_string(sharing_scope s);

struct sharing_analysis {
  sharing_scope scope = sharing_scope::inconclusive;
  std::vector<std::vector<int>> groups; // SM ids, groups of 2 or more
  std::string reason;                   // one sentence: why this scope
  std::string structure;                // relation to TPC/GPC ids, when groups exist
  double control_cycles = 0;            // median over rows of diagonal - ref
  double noise_cycles = 0;              // robust sigma of unshared cells, each about its row
  double threshold_x = 0.5;             // split on normalised x
  double threshold_cycles = 0;          // the same, in cycles above ref (median row)
  bool has_baseline = false;
  int shared_pairs = 0, asymmetric_pairs = 0, pairs = 0;
  std::vector<std::string> notes;
};

sharing_analysis analyze_sharing(const sharing_matrix &m, const sharing_analysis_options &opt = {});
// The answer as the profile holds a level's sharing (model/profile.hpp; its keys: to_json).
model::level_sharing sharing_model(const sharing_analysis &a);

// The probe's own matrix (mean cycles, baselines) as the analysis reads it.
sharing_matrix matrix_of(const probes::sharing_result &r, const std::string &source);
// The same, refused in one line where the matrix is not square over its SM ids (a result read from
// a file; `gpuprobe tlb-sharing`'s own, just measured).
sharing_matrix square_matrix_of(const probes::sharing_result &r, const std::string &source);

// tlb-sharing's sample (sharing_options::sample_sms, driver.hpp): SMs spread over the GPU, each
// against each. It answers for every SM only when the level is global there (every pair of SMs of
// different GPCs shares); a private or grouped sample says nothing of the SMs between the
// sampled ones, so those are measured.
bool sample_is_global(const probes::sharing_result &r);
// "" when the sample is global, else its scope and the analysis's reason (what the sample's log
// line and result say).
std::string sample_not_global(const probes::sharing_result &r);

// How groups relate to SM-id structure (consecutive TPC pairs, interleaved ids, sizes).
std::string describe_structure(const std::vector<std::vector<int>> &groups, int sm_count);

// Groups in one order whatever the analysis gave (members sorted, then groups): equal maps are
// equal vectors, and group k is the same group on every unit that has it.
std::vector<std::vector<int>> canonical_groups(std::vector<std::vector<int>> groups);
// "18 x 6 + 6 x 4": how many groups of each size, largest first.
std::string group_sizes(const std::vector<std::vector<int>> &groups);

// The profile's `sharing` block.
nlohmann::json to_json(const sharing_analysis &a);

} // namespace gpuprobe::probes
