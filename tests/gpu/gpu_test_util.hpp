#pragma once
// GPU tests skip cleanly where no CUDA device exists (the CI machine).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuprobe::test {

inline bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Waits for the device; a kernel's error becomes an exception (the test fails, naming it).
inline void sync_or_throw() {
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("kernel: ") + cudaGetErrorString(e));
}

#define GPUPROBE_REQUIRE_GPU()                                                                     \
  if (!::gpuprobe::test::have_gpu())                                                               \
  GTEST_SKIP() << "no CUDA device"

// Runs a shell command, returns its stdout (and the exit code through `rc`).
inline std::string shell(const std::string &cmd, int *rc = nullptr) {
  std::string out;
  FILE *p = popen(cmd.c_str(), "r");
  if (!p)
    return out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  const int status = pclose(p);
  if (rc)
    *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// SASS of every function in `binary` for the device's architecture: name -> text.
inline std::map<std::string, std::string> sass_by_function(const std::string &binary,
                                                           const std::string &arch) {
  const std::string text = shell("cuobjdump -sass -arch " + arch + " " + binary + " 2>/dev/null");
  std::map<std::string, std::string> out;
  std::string current;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto f = line.find("Function : ");
    if (f != std::string::npos) {
      current = line.substr(f + 11);
      continue;
    }
    if (!current.empty())
      out[current] += line + "\n";
  }
  return out;
}

inline std::vector<std::string> load_opcodes(const std::string &sass) {
  std::vector<std::string> ops;
  std::regex ldg(R"((LDG\.[A-Z0-9_.]+))");
  for (std::sregex_iterator it(sass.begin(), sass.end(), ldg), end; it != end; ++it)
    ops.push_back((*it)[1]);
  return ops;
}

inline std::string device_arch() {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess)
    return "sm_90";
  return "sm_" + std::to_string(p.major) + std::to_string(p.minor);
}

} // namespace gpuprobe::test
