#pragma once
// CUDA error checking: GPUPROBE_CUDA_CHECK throws gpuprobe::error with file and line;
// GPUPROBE_CUDA_CHECK_NOTHROW only reports (for destructors).
#include "common/error.hpp"

#include <cstdio>
#include <cuda_runtime.h>
#include <string>

namespace gpuprobe::detail {
inline void cuda_check(cudaError_t e, const char *expr, const char *file, int line) {
  if (e == cudaSuccess)
    return;
  throw gpuprobe::error(std::string("CUDA error ") + cudaGetErrorName(e) + " (" +
                        cudaGetErrorString(e) + ") in " + expr + " at " + file + ":" +
                        std::to_string(line));
}
} // namespace gpuprobe::detail

#define GPUPROBE_CUDA_CHECK(expr) ::gpuprobe::detail::cuda_check((expr), #expr, __FILE__, __LINE__)
#define GPUPROBE_CUDA_CHECK_NOTHROW(expr)                                                          \
  do {                                                                                             \
    cudaError_t gpuprobe_e_ = (expr);                                                              \
    if (gpuprobe_e_ != cudaSuccess)                                                                \
      std::fprintf(stderr, "gpuprobe: %s failed: %s\n", #expr, cudaGetErrorString(gpuprobe_e_));   \
  } while (0)
// After a kernel launch: the launch error, then (when sync) the execution error.
#define GPUPROBE_CUDA_CHECK_LAUNCH() GPUPROBE_CUDA_CHECK(cudaGetLastError())
