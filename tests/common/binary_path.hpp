#pragma once
// Where the gpuprobe binary is: $GPUPROBE_BIN, else beside the test's build folder (so a build
// folder copied to another path still works), else the path CMake compiled in.
#include <cstdlib>
#include <filesystem>
#include <string>

namespace gpuprobe::test {

inline std::string gpuprobe_binary() {
  if (const char *env = std::getenv("GPUPROBE_BIN"))
    return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path().parent_path() / "gpuprobe";
    if (std::filesystem::exists(beside))
      return beside.string();
  }
  return GPUPROBE_BINARY;
}

} // namespace gpuprobe::test
