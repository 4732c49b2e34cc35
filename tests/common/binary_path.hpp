#pragma once
// Where the gpuprobe (and gpuprobe-bench) binary is: $GPUPROBE_BIN ($GPUPROBE_BENCH_BIN), else
// beside the test's build folder (so a build folder copied to another path still works), else the
// path CMake compiled in ("" for gpuprobe-bench where Google Benchmark was not found).
#include <cstdlib>
#include <filesystem>
#include <string>

namespace gpuprobe::test {

inline std::string binary_beside(const char *env_name, const char *name, const char *built) {
  if (const char *env = std::getenv(env_name))
    return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path().parent_path() / name;
    if (std::filesystem::exists(beside))
      return beside.string();
  }
  return built;
}

inline std::string gpuprobe_binary() {
  return binary_beside("GPUPROBE_BIN", "gpuprobe", GPUPROBE_BINARY);
}

#ifdef GPUPROBE_BENCH
inline std::string bench_binary() {
  return binary_beside("GPUPROBE_BENCH_BIN", "gpuprobe-bench", GPUPROBE_BENCH);
}
#else
inline std::string bench_binary() {
  return binary_beside("GPUPROBE_BENCH_BIN", "gpuprobe-bench", "");
}
#endif

} // namespace gpuprobe::test
