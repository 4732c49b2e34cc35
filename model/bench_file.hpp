#pragma once
// gpuprobe-bench's output (Google Benchmark JSON: a "context" with gpuprobe's keys — gpu, gpu_uuid,
// sm_count, driver, runtime, gpuprobe_commit, gpuprobe_run_grid — and "benchmarks", one case each
// with its counters) read typed, once: the report's TAS/WAS and peers parts and the run's bench
// stage take it instead of looking keys up. A case's field of the wrong type (a string where a
// time goes, an error flag that is a number) is a gpuprobe::error naming it and the file.
// Host-only.
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::model {

struct bench_case {
  std::string name; // "BM_peers/rw_malloc/size:16/threads:16384/state:empty/..."
  std::string time_unit = "ms";
  double real_time = 0; // in time_unit
  bool error_occurred = false;
  std::string error_message;
  std::map<std::string, double> numbers; // every other number: the counters (TAS, free_ms, ...)

  double real_time_ms() const;
  std::optional<double> number(const std::string &key) const;
  double number_or(const std::string &key, double fallback) const;
};

struct bench_file {
  std::map<std::string, std::string> context; // strings as written, numbers as their JSON text
  std::vector<bench_case> cases;
  std::string context_or(const std::string &key, const std::string &fallback) const;
};

// `where` names the file in an error. No "benchmarks" list: an error.
bench_file bench_file_from_json(const nlohmann::json &doc, const std::string &where);

} // namespace gpuprobe::model
