#include "common/cuda_check.cuh"
#include "common/device_info.hpp"
#include "common/gpu_uuid.hpp"

#include <filesystem>

namespace gpuprobe {

namespace {
__global__ void probe_kernel_image(int *out) { *out = 1; } // exists only to test for a kernel image
} // namespace

std::vector<device_identity> list_devices() {
  int count = 0;
  std::vector<device_identity> out;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return out;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    GPUPROBE_CUDA_CHECK(cudaGetDeviceProperties(&p, i)); // properties only: no context
    out.push_back({i, p.name, format_gpu_uuid(p.uuid.bytes)});
  }
  return out;
}

device_info query_device(int ordinal) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  // CUDA says "driver version is insufficient" where no driver is loaded at all: say which.
  const bool no_driver = e == cudaErrorInsufficientDriver &&
                         !std::filesystem::exists("/proc/driver/nvidia/version");
  if (e != cudaSuccess || count == 0)
    throw error(std::string("no CUDA device available (") +
                (e == cudaSuccess ? "0 devices"
                 : no_driver      ? "no NVIDIA driver is loaded on this machine"
                 : e == cudaErrorInsufficientDriver
                     ? "the NVIDIA driver is older than this build's CUDA runtime: update it"
                     : cudaGetErrorString(e)) +
                "); without one, `report`, `fleet`, `analyze`, `theory` and `characterize "
                "--reanalyze` work, on your results or the committed runs in reports/examples "
                "(e.g. gpuprobe report --input reports/examples/runs/nvidia-h200-bc72dbee --out "
                "h200-report)");
  if (ordinal < 0 || ordinal >= count)
    throw error("unknown device id " + std::to_string(ordinal) + ": this machine has " +
                std::to_string(count) + " CUDA device(s), ids 0.." + std::to_string(count - 1));
  GPUPROBE_CUDA_CHECK(cudaSetDevice(ordinal));
  cudaDeviceProp p{};
  GPUPROBE_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
  cudaFuncAttributes fa{};
  if (cudaFuncGetAttributes(&fa, probe_kernel_image) != cudaSuccess) {
    (void)cudaGetLastError();
    throw error("this gpuprobe build has no code for " + std::string(p.name) + " (sm_" +
                std::to_string(p.major) + std::to_string(p.minor) +
                "); rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(p.major) +
                std::to_string(p.minor));
  }
  device_info d;
  d.ordinal = ordinal;
  d.name = p.name;
  d.uuid = format_gpu_uuid(p.uuid.bytes);
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  // CUDA 13 removed cudaDeviceProp::clockRate: ask the attribute instead.
  GPUPROBE_CUDA_CHECK(cudaDeviceGetAttribute(&d.sm_clock_khz_peak, cudaDevAttrClockRate, ordinal));
  GPUPROBE_CUDA_CHECK(
      cudaDeviceGetAttribute(&d.mem_clock_khz_peak, cudaDevAttrMemoryClockRate, ordinal));
  d.l2_bytes = p.l2CacheSize;
  size_t free_b = 0, total_b = 0;
  GPUPROBE_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  d.memory_bytes = static_cast<long long>(total_b);
  d.memory_free_bytes_at_start = static_cast<long long>(free_b);
  GPUPROBE_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  GPUPROBE_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  if (std::FILE *f =
          std::fopen("/proc/driver/nvidia/version", "r")) { // Linux: the module's release
    char buf[512] = {};
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    d.driver_release = parse_driver_release(std::string(buf, n));
  }
  return d;
}

void release_own_context() {
  // cudaDeviceReset destroys the calling process's primary context only (not a GPU reset).
  GPUPROBE_CUDA_CHECK(cudaDeviceReset());
}

} // namespace gpuprobe
