#pragma once
// `gpuprobe tune` on one GPU: profile.json -> tuning.json (gpuprobe.tuning/2). Regions follow from
// the profile; the bitmap word size, CRW's cluster placement and the TLB scope (among the
// profile's levels and candidates) are measured here. Each decision records its reason and the
// numbers behind it. Errors are gpuprobe::error (one line).
#include "common/run_options.hpp"

#include <string>

namespace gpuprobe::tune {

// out: tuning.json to write (its folder exists: the caller checked).
struct tune_run_options : gpu_run_options {
  std::string profile; // profile.json of gpuprobe characterize
  int reps = 12;       // at least 3 (the caller checked)
};

void run_tune(const tune_run_options &o);

} // namespace gpuprobe::tune
