#pragma once
// `gpuprobe characterize` on one GPU: the stages planned by pipeline/stage_plan (plan_stages and
// sharing_stages), run (or kept) by pipeline::stage_runner as child processes, then
// DIR/profile.json assembled and the hierarchy printed. With `reanalyze`, no GPU: the analyses
// run again over DIR/raw. Errors are gpuprobe::error (one line).
#include <string>

namespace gpuprobe::pipeline {

struct characterize_run_options {
  int device = 0;
  std::string out; // the results folder ("": results/<gpu>-<uuid8>)
  unsigned long long seed = 0;
  bool quick = false;
  bool reanalyze = false; // no GPU: analysis stages again over the measurements in DIR/raw
  // Measure beside other processes on the GPU: every finding is then marked "disturbed" with
  // the processes seen. Without it a busy GPU is waited for (up to busy_wait_seconds) before
  // each measuring stage, a stage during which one appeared is measured again once, and a GPU
  // that stays busy ends the run with one line.
  bool allow_busy = false;
  double busy_wait_seconds = 60;
};

void run_characterize(const characterize_run_options &o);

} // namespace gpuprobe::pipeline
