#pragma once
// `gpuprobe characterize` on one GPU: the stages planned by pipeline/stage_plan (plan_stages and
// sharing_stages), run (or kept) by pipeline::stage_runner inside this process (run_here), or as
// child processes, then DIR/profile.json assembled and the hierarchy printed. With `reanalyze`, no
// GPU: the analyses run again over DIR/raw. Errors are gpuprobe::error (one line).
#include "common/run_options.hpp"
#include "pipeline/subprocess.hpp"

#include <string>
#include <vector>

namespace gpuprobe::pipeline {

// out: the results folder ("": results/<gpu>-<uuid8>).
struct characterize_run_options : gpu_run_options {
  bool reanalyze = false; // no GPU: analysis stages again over the measurements in DIR/raw
  // Measure beside other processes on the GPU: every finding is then marked "disturbed" with
  // the processes seen. Without it a busy GPU is waited for (up to busy_wait_seconds) before
  // each measuring stage, a stage during which one appeared is measured again once, and a GPU
  // that stays busy ends the run with one line.
  bool allow_busy = false;
  double busy_wait_seconds = 60;
  // The stages that map no alias range (tlb_real, atomics) first: a GPU of a node maps its range
  // while its neighbour sweeps (pipeline::order_stages; run --devices --map-late gives it to every
  // second GPU). The levels, penalties and sharing are the same; the real-memory chase then runs
  // before any alias range exists, and its memory's placement, and the L1 verdict of its
  // cross-check, differ (docs/fleet.md). The stages' files and their resume do not depend on it.
  bool map_late = false;
  // Runs `gpuprobe ARGS...` inside this process (cli::run_here), returning its exit status: the
  // stages then share one CUDA context and map the alias range once (device_memory.hpp's
  // alias_keeper), instead of one child process each. Unset, or GPUPROBE_STAGES=children in the
  // environment: each stage is a child process, (docs/characterize.md).
  run_here_fn run_here;
};

// Whether the stages run inside the characterize process: `run_here` given and GPUPROBE_STAGES
// not "children" (any other value than "children" or "here" is refused in one line).
bool stages_in_process(const characterize_run_options &o);

void run_characterize(const characterize_run_options &o);

} // namespace gpuprobe::pipeline
