#pragma once
// TLB curves as the analyzer sees them, read from gpuprobe results or from the
// cuda-gpu-tlb CSV format (TLB-Test-<fromMB>-<toMB>-<strideFromKB>-<strideToKB>.csv).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct tlb_curve {
  std::string source; // file the curve came from
  double stride_bytes = 0;
  std::vector<double> footprint_bytes; // strictly increasing
  std::vector<double> cycles;          // per-hop latency (median for gpuprobe results)
  bool median = false; // cycles are per-point medians (gpuprobe), not means (2017 CSV)
  // Per-point means (a level's ramp is linear in the mean, not the median): gpuprobe results
  // record both; the 2017 CSV's cycles are means already. Empty when the input has none.
  std::vector<double> mean_cycles = {};
  // The sweep measured this stride again and its repeat still disagreed beyond the noise.
  bool disturbed = false;
};

struct tlb_dataset {
  std::string device_name; // "unknown" when the input does not say
  nlohmann::json device;   // gpuprobe device block, or null
  long long l2_bytes = 0;  // 0 = unknown
  std::string alloc;       // cudamalloc | vmm | managed | "" (CSV)
  std::vector<tlb_curve> curves;
  int sm = -1; // the SM every point of a gpuprobe sweep ran on (-1: mixed, or not recorded)
  std::vector<std::string> sources;
  std::vector<std::string> notes;
};

// Parses one cuda-gpu-tlb CSV text. Throws gpuprobe::error naming file and line on bad input.
void parse_cuda_gpu_tlb_csv(const std::string &text, const std::string &source, tlb_dataset &out);

// Appends the curves of a gpuprobe.result/2 TLB result (probe "tlb").
void parse_gpuprobe_tlb_result(const nlohmann::json &doc, const std::string &source,
                               tlb_dataset &out);
// The same from the typed result (`gpuprobe tlb`'s own, just measured), named `source`.
struct tlb_result;
void add_tlb_result(const tlb_result &r, const std::string &source, tlb_dataset &out);

// Sorts a curve by footprint and drops repeated footprints (keeps the first).
void finish_curve(tlb_curve &c);

// Reads every file (gpuprobe JSON or cuda-gpu-tlb CSV, told apart by content) into one dataset:
// several files are one GPU. Throws gpuprobe::error on a missing or malformed file, and on
// gpuprobe results of two GPUs (naming both) unless `allow_mixed`.
tlb_dataset load_tlb_inputs(const std::vector<std::string> &paths, bool allow_mixed = false);
// The same over inputs some of which the caller has parsed already (the report's scan): a
// document given is read as it is, a null one from its file.
struct tlb_input {
  std::string path;
  const nlohmann::json *doc = nullptr;
};
tlb_dataset load_tlb_inputs(const std::vector<tlb_input> &inputs, bool allow_mixed = false);

} // namespace gpuprobe::probes
