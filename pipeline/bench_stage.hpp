#pragma once
// gpuprobe run's TAS/WAS grid: gpuprobe-bench's BM_getpage for RW, RW-BM, CoRW and CRW at three
// thread counts and two free fractions (36 cases), so that the run's report draws the RW paper's
// measures against their theory (Eqs. 3-6). It runs beside the other stages (same folder, the
// same GPU by its UUID), is kept when made on this GPU by this commit with this grid, and is left
// out, with the reason, under --quick or where gpuprobe-bench was not built. Host-only: the plan
// is tested without a GPU.
#include "common/results_folder.hpp"
#include "pipeline/subprocess.hpp"

#include <string>
#include <vector>

namespace gpuprobe::pipeline {

inline const std::string k_bench_file =
    results_folder::raw_rel(results_folder::raw_file::bench_getpage);

// The cases: ^BM_getpage/(rw|rw_bm32|rw_bm64|corw32|corw64|crw)/threads:(4096|65536|1048576)/
// free_permille:(500|5)/ (Google Benchmark's names go on with "/iterations:10/manual_time").
std::string bench_filter();

struct bench_plan {
  std::string skip;              // why the grid does not run ("" when it runs)
  std::vector<std::string> argv; // gpuprobe-bench and its flags, writing `out`
  std::vector<std::string> env;  // CUDA_VISIBLE_DEVICES=<the GPU's UUID>: bench measures device 0
  std::string out;               // where it writes (k_bench_file + ".tmp": renamed when done)
};
// Whether run's grid goes before characterize: under --map-late in a full run (the grid maps no
// alias range and no TLB-sized pool, so a GPU beside another starts its mapping phases some 7 s
// after its neighbour's), after validate otherwise. It reads nothing of the run and
// only the report reads it, so either place gives the same file.
bool bench_first(bool quick, bool map_late);

// `bench` the gpuprobe-bench binary beside this one ("" or a missing file: not built).
bench_plan plan_bench(const std::string &bench, bool quick, const std::string &uuid);

// Runs the plan in DIR, its folder for `out` made first (raw/ is characterize's; under --map-late
// the grid runs before it), and renames `out` to k_bench_file: "" when it did, else why the
// report goes without TAS/WAS (the partial `out` removed). A stage stopped by a signal throws
// gpuprobe::interrupted as any stage does.
std::string run_bench_plan(const std::string &dir, const bench_plan &plan,
                           const std::string &resume, stage_display *display);

// Why DIR's k_bench_file is kept ("made on this GPU by this commit with this grid"), or "" when
// it must run (missing, unreadable, another GPU, another commit or grid).
std::string bench_kept(const std::string &dir, const std::string &uuid);

// "BM_getpage: 36 cases, 0 failed -> raw/bench_getpage.json" from the file.
std::string bench_summary(const std::string &dir);

} // namespace gpuprobe::pipeline
