#pragma once
// `gpuprobe run` on one GPU: characterize, tune, validate and report as child processes into one
// folder, kept or run again by the resume rule, then the summary. Errors are gpuprobe::error.
#include <string>

namespace gpuprobe::pipeline {

struct run_run_options {
  int device = 0;
  std::string out; // the results folder ("": results/<gpu>-<uuid8>)
  unsigned long long seed = 0;
  bool quick = false;
  bool allow_busy = false;       // characterize's --allow-busy
  double busy_wait_seconds = 60; // characterize's --busy-wait
  bool verbose = false;  // every stage's output on stdout too (it always goes to DIR/run.log)
  bool map_late = false; // characterize's --map-late
};

void run_pipeline(const run_run_options &o);

} // namespace gpuprobe::pipeline
