#include "pipeline/bench_stage.hpp"

#include "common/build_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "model/bench_file.hpp"

#include <algorithm>
#include <optional>

#include <filesystem>

namespace gpuprobe::pipeline {

namespace fs = std::filesystem;

std::string bench_filter() {
  // Google Benchmark's names go on with "/iterations:10/manual_time".
  return "^BM_getpage/(rw|rw_bm32|rw_bm64|corw32|corw64|crw)/threads:(4096|65536|1048576)/"
         "free_permille:(500|5)/";
}

bool bench_first(bool quick, bool map_late) { return map_late && !quick; }

bench_plan plan_bench(const std::string &bench, bool quick, const std::string &uuid) {
  bench_plan p;
  if (quick) {
    p.skip = "left out under --quick (the TAS/WAS grid: gpuprobe run without --quick)";
    return p;
  }
  std::error_code ec;
  if (bench.empty() || !fs::is_regular_file(bench, ec)) {
    p.skip = "left out: gpuprobe-bench is not built beside gpuprobe (Google Benchmark was not "
             "installed when it was built; scripts/setup.sh installs it)";
    return p;
  }
  p.out = std::string(k_bench_file) + ".tmp";
  p.argv = {bench, "--benchmark_filter=" + bench_filter(), "--benchmark_out=" + p.out,
            "--benchmark_out_format=json",
            "--benchmark_context=gpuprobe_run_grid=" + bench_filter()};
  p.env = {"CUDA_VISIBLE_DEVICES=" + uuid};
  return p;
}

std::string run_bench_plan(const std::string &dir, const bench_plan &plan,
                           const std::string &resume, stage_display *display) {
  const fs::path out = fs::path(dir) / plan.out;
  std::error_code ec;
  fs::create_directories(out.parent_path(), ec); // Google Benchmark writes into an existing one
  if (ec)
    return "cannot make " + out.parent_path().string() + ": " + ec.message();
  try {
    run_program_stage_in(dir, "bench", plan.argv, plan.env, resume, display);
  } catch (const interrupted &) {
    throw;
  } catch (const error &e) { // the grid adds figures: its failure leaves the rest of the run
    fs::remove(out, ec);
    return std::string("failed: ") + e.what();
  }
  fs::rename(out, fs::path(dir) / k_bench_file, ec);
  if (ec)
    return "wrote no " + plan.out + " (" + ec.message() + ")";
  return "";
}

namespace {

// The bench stage's file, typed; none when it is missing, unreadable or malformed (the stage runs
// again).
std::optional<model::bench_file> read_bench(const std::string &dir) {
  const fs::path f = fs::path(dir) / k_bench_file;
  std::error_code ec;
  if (!fs::is_regular_file(f, ec))
    return std::nullopt;
  try {
    return model::bench_file_from_json(read_json_file(f.string()), f.string());
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

} // namespace

std::string bench_kept(const std::string &dir, const std::string &uuid) {
  const auto bench = read_bench(dir);
  if (!bench || bench->context_or("gpu_uuid", "") != uuid ||
      bench->context_or("gpuprobe_commit", "") != git_commit() ||
      bench->context_or("gpuprobe_run_grid", "") != bench_filter())
    return "";
  return "made on this GPU by this commit with this grid";
}

std::string bench_summary(const std::string &dir) {
  const auto bench = read_bench(dir);
  if (!bench)
    return std::string("no ") + k_bench_file;
  const auto failed = std::count_if(bench->cases.begin(), bench->cases.end(),
                                    [](const model::bench_case &b) { return b.error_occurred; });
  return "BM_getpage: " + std::to_string(bench->cases.size()) + " cases, " +
         std::to_string(failed) + " failed -> " + k_bench_file;
}

} // namespace gpuprobe::pipeline
