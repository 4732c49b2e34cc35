#pragma once
// GPU tests skip cleanly where no CUDA device exists (the CI machine).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace gpuprobe::test {

inline bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define GPUPROBE_REQUIRE_GPU() \
  if (!::gpuprobe::test::have_gpu()) GTEST_SKIP() << "no CUDA device"

// Runs a shell command, returns its stdout (and the exit code through `rc`).
inline std::string shell(const std::string& cmd, int* rc = nullptr) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  if (rc) *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace gpuprobe::test
