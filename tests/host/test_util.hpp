#pragma once
// Helpers for host tests: synthetic TLB curves, fixture paths, running the CLI.
#include "common/non_copyable.hpp"
#include "model/profile.hpp"
#include "probes/tlb/data.hpp"
#include "probes/tlb/levels.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace gpuprobe::test {

// The TLB analysis by the rise detectors alone: the tests of their own rules. On an aliased sweep
// analyze tlb also fits the whole-sweep model by default (tlb_synthesis_test.cpp tests that).
inline probes::tlb_analysis_options detectors_only() {
  probes::tlb_analysis_options o;
  o.synthesize = false;
  return o;
}

inline std::string fixture(const std::string &rel) {
  return std::string(GPUPROBE_FIXTURES_DIR) + "/cuda-gpu-tlb/" + rel;
}

struct sim_level {
  double entries;
  double coverage_bytes;
  double penalty; // cycles per miss for strides >= page
};

// Latency the paper's model predicts for a single-thread strided chase:
// a stride s misses level L beyond footprint entries * max(s, page) with penalty * min(1, s/page).
inline double sim_latency(const std::vector<sim_level> &levels, double base, double stride,
                          double footprint) {
  double t = base;
  for (const auto &L : levels)
    if (footprint > L.entries * std::max(stride, L.coverage_bytes) + 0.5)
      t += L.penalty * std::min(1.0, stride / L.coverage_bytes);
  return t;
}

// One curve per stride with `ppo` points per octave from min to max footprint, Gaussian noise
// of `sigma`, integer rounding like the 2017 tool, and every `drop`-th point missing (0: none).
inline probes::tlb_dataset sim_dataset(const std::vector<sim_level> &levels, double base,
                                       const std::vector<double> &strides, double min_fp,
                                       double max_fp, int ppo, double sigma, unsigned seed,
                                       int drop = 0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  probes::tlb_dataset d;
  d.device_name = "simulated";
  for (double s : strides) {
    probes::tlb_curve c;
    c.source = "sim";
    c.stride_bytes = s;
    int k = 0;
    for (double h = std::max(1.0, std::ceil(min_fp / s)); h * s <= max_fp;
         h = std::max(h + 1, std::round(h * std::pow(2.0, 1.0 / ppo)))) {
      if (drop && ++k % drop == 0)
        continue;
      c.footprint_bytes.push_back(h * s);
      c.cycles.push_back(std::round(sim_latency(levels, base, s, h * s) + noise(rng)));
    }
    d.curves.push_back(c);
  }
  return d;
}

// A file's bytes ("" where it cannot be read).
std::string read_all(const std::string &path);

struct run_result {
  int exit_code = -1;
  std::string out, err;
};

// `gpuprobe report` in a test draws with a stand-in plotter (tests/tools/stub_plot.py: a valid
// 1 x 1 image a figure, no matplotlib) where the command names no --plot-script: most report
// tests check the page, and matplotlib costs 2-8 s a report. A test of the images themselves, or
// of what plot.py refuses, holds a `real_figures` for its duration.
std::string stub_plot_script();
struct real_figures : private non_copyable {
  real_figures();
  ~real_figures();
};

// Runs the gpuprobe binary with `args` (a shell-quoted string) and captures its output.
run_result run_gpuprobe(const std::string &args);
run_result run_binary(const std::string &binary, const std::string &args);
// Runs the gpuprobe binary with `args` as they are (no shell reads them), in `dir` ("": here).
run_result run_gpuprobe_argv(const std::vector<std::string> &args, const std::string &dir = "");

// The committed run folders with a profile: the curated examples' runs (reports/examples/runs)
// and the older runs kept for the tests (tests/fixtures/runs), in that order; and the first by a
// folder's name.
std::vector<std::filesystem::path> committed_run_folders();
std::string committed_run(const std::string &name);
// A document without what differs between two runs of one command: its times ("created_utc",
// "seconds", "wall_seconds" at any depth).
nlohmann::json without_times(nlohmann::json j);
// Every committed file of gpuprobe's outputs: under reports/examples and the fixtures' runs,
// fleet units, peer harness folders, rw_malloc rounds and repeats.
std::vector<std::filesystem::directory_entry> committed_result_files();

// Every committed real TLB sweep of the tests' fixtures, one dataset a sweep named by its path
// under the source tree: the fixture runs' (alias and real-memory sweeps, first, by folder), the
// fixtures' gpuprobe results, and the 2017 tool's CSVs of the K80, the P100 and the H100 (one
// dataset a GPU), these sorted by name.
struct named_sweep {
  std::string name;
  probes::tlb_dataset data;
};
std::vector<named_sweep> committed_real_sweeps();

std::string temp_path(const std::string &name);
bool file_exists(const std::string &path);
// A child process that holds `dir`'s write lock (gpuprobe::folder_lock, "characterize") until it
// is killed; returns its PID once it holds the lock.
int hold_folder_lock_in_child(const std::string &dir);

// Writes `text` to temp_path(name) and returns that path.
std::string write_temp(const std::string &name, const std::string &text);

// A failed run: non-zero exit, exactly one line "gpuprobe: error: ..." on stderr containing
// `needle`, and no output file at `out_path`.
inline void expect_one_line_error(const run_result &r, const std::string &out_path,
                                  const std::string &needle = "") {
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("gpuprobe: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_FALSE(file_exists(out_path)) << out_path;
}

// The TLB block of a profile written by hand for a test (a level may give only its reach and
// page: the decisions read no more).
inline model::tlb_hierarchy tlb_of(const nlohmann::json &profile) {
  return model::tlb_hierarchy_from_json(profile.value("tlb", nlohmann::json::object()));
}

} // namespace gpuprobe::test
