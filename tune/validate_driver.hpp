#pragma once
// `gpuprobe validate` on one GPU: tuning.json -> validation.json (gpuprobe.validation/1), default
// against tuned allocators with statistics (tune/validate_driver.cpp). Errors are gpuprobe::error.
#include "common/run_options.hpp"

#include <string>
#include <vector>

namespace gpuprobe::tune {

// out: validation.json to write (its folder exists: the caller checked).
struct validate_run_options : gpu_run_options {
  std::string tuning;           // tuning.json of gpuprobe tune
  int reps = 15;                // at least 10 (the caller checked)
  double pool_gib = 8;          // at least 8 (the caller checked)
  double tlb_footprint_gib = 0; // 0: all free memory but 6 GiB
  bool ablation = true;
  bool sequential = true;        // stop a workload once its answer is known (false: --reps each)
  std::vector<std::string> only; // workload name prefixes
};

void run_validate(const validate_run_options &o);

} // namespace gpuprobe::tune
