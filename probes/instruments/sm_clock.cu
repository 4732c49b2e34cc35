// The SM clock's kernel: clock64 against %globaltimer over ~20 ms.
#include "common/cuda_check.cuh"
#include "probes/device_util.cuh"
#include "probes/instruments/sm_clock.hpp"

namespace gpuprobe::probes {

namespace {

__global__ void clock_rate_kernel(unsigned long long spin_ns, double *mhz) {
  const unsigned long long g0 = globaltimer_ns();
  const unsigned long long c0 = clock64();
  unsigned long long g1;
  do {
    g1 = globaltimer_ns();
  } while (g1 - g0 < spin_ns);
  const unsigned long long c1 = clock64();
  *mhz = double(c1 - c0) / double(g1 - g0) * 1e3;
}

} // namespace

double measure_sm_clock_mhz() {
  double *d = nullptr;
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d, sizeof(double)));
  clock_rate_kernel<<<1, 1>>>(20'000'000ull, d);
  GPUPROBE_CUDA_CHECK_LAUNCH();
  double mhz = 0;
  GPUPROBE_CUDA_CHECK(cudaMemcpy(&mhz, d, sizeof mhz, cudaMemcpyDeviceToHost));
  GPUPROBE_CUDA_CHECK(cudaFree(d));
  return mhz;
}

} // namespace gpuprobe::probes
