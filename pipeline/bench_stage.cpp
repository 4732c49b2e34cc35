#include "pipeline/bench_stage.hpp"

#include "common/build_info.hpp"
#include "common/json_io.hpp"

#include <filesystem>

namespace gpuprobe::pipeline {

namespace fs = std::filesystem;

std::string bench_filter() {
  // Google Benchmark's names go on with "/iterations:10/manual_time".
  return "^BM_getpage/(rw|rw_bm32|rw_bm64|corw32|corw64|crw)/threads:(4096|65536|1048576)/"
         "free_permille:(500|5)/";
}

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

namespace {

nlohmann::json read_bench(const std::string &dir) {
  const fs::path f = fs::path(dir) / k_bench_file;
  std::error_code ec;
  if (!fs::is_regular_file(f, ec))
    return nullptr;
  try {
    return read_json_file(f.string());
  } catch (const std::exception &) {
    return nullptr;
  }
}

} // namespace

std::string bench_kept(const std::string &dir, const std::string &uuid) {
  const auto doc = read_bench(dir);
  if (!doc.is_object() || !doc.contains("context") || !doc["context"].is_object() ||
      !doc.contains("benchmarks"))
    return "";
  const auto &ctx = doc["context"];
  const auto text = [&](const char *k) {
    return ctx.contains(k) && ctx[k].is_string() ? ctx[k].get<std::string>() : std::string();
  };
  if (text("gpu_uuid") != uuid || text("gpuprobe_commit") != git_commit() ||
      text("gpuprobe_run_grid") != bench_filter())
    return "";
  return "made on this GPU by this commit with this grid";
}

std::string bench_summary(const std::string &dir) {
  const auto doc = read_bench(dir);
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    return std::string("no ") + k_bench_file;
  std::size_t cases = 0, failed = 0;
  for (const auto &b : doc["benchmarks"]) {
    ++cases;
    failed += b.is_object() && b.value("error_occurred", false);
  }
  return "BM_getpage: " + std::to_string(cases) + " cases, " + std::to_string(failed) +
         " failed -> " + k_bench_file;
}

} // namespace gpuprobe::pipeline
