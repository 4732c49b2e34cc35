#pragma once
// `gpuprobe run` on one GPU: characterize, tune, validate, bench and report into one folder, kept
// or run again by the resume rule, then the summary. characterize, bench and report are child
// processes; tune and validate run inside this one (run_here). Errors are gpuprobe::error.
#include "common/run_options.hpp"
#include "pipeline/subprocess.hpp"

#include <string>
#include <vector>

namespace gpuprobe::pipeline {

// out: the results folder ("": results/<gpu>-<uuid8>).
struct run_run_options : gpu_run_options {
  bool allow_busy = false;       // characterize's --allow-busy
  double busy_wait_seconds = 60; // characterize's --busy-wait
  bool verbose = false;  // every stage's output on stdout too (it always goes to DIR/run.log)
  bool map_late = false; // characterize's --map-late
  // Runs `gpuprobe ARGS...` inside this process (cli::run_here): tune and validate then run in
  // the run's process, one after the other, and validate takes the TLB-sized pool tune made last
  // instead of making its own (device_memory.hpp's pool_keeper). Unset, or
  // GPUPROBE_STAGES=children: each is a child process, as before.
  run_here_fn run_here;
};

void run_pipeline(const run_run_options &o);

} // namespace gpuprobe::pipeline
