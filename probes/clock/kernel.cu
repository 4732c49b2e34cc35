// The SM clock under load: warp 0's first lane samples the SM's cycle counter against the
// global nanosecond timer while the block's other warps keep the SM busy with FMAs.
#include "common/cuda_check.cuh"
#include "common/non_copyable.hpp"
#include "probes/clock/kernel.hpp"
#include "probes/device_util.cuh"

namespace gpuprobe::probes {

namespace {

__global__ void __launch_bounds__(1024)
    clock_kernel(unsigned long long duration_ns, int per_block, long long *ns, long long *cycles,
                 int *sm, float *sink) {
  const unsigned long long start = globaltimer_ns();
  if (threadIdx.x == 0) {
    sm[blockIdx.x] = int(smid());
    const unsigned long long step = duration_ns / unsigned(per_block > 1 ? per_block - 1 : 1);
    for (int k = 0; k < per_block; ++k) {
      while (globaltimer_ns() - start < k * step) {
      }
      const long long c = (long long)clock_now();
      ns[blockIdx.x * per_block + k] = (long long)globaltimer_ns();
      cycles[blockIdx.x * per_block + k] = c;
    }
  } else if (threadIdx.x >= 32) { // whole warps: no divergence within the sampler's warp
    float a = float(threadIdx.x), b = 1.0001f;
    while (globaltimer_ns() - start < duration_ns)
      for (int i = 0; i < 256; ++i)
        a = fmaf(a, b, 1e-7f);
    if (a == 12345.678f) // never true in practice: the store keeps the FMAs from being dropped
      sink[0] = a;
  }
}

// One device allocation of `n` T, freed on every path out.
template <class T> struct device_vector : private non_copyable {
  T *p = nullptr;
  explicit device_vector(std::size_t n) { GPUPROBE_CUDA_CHECK(cudaMalloc(&p, n * sizeof(T))); }
  ~device_vector() { GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(p)); }
  std::vector<T> to_host(std::size_t n) const {
    std::vector<T> h(n);
    GPUPROBE_CUDA_CHECK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

} // namespace

clock_samples sample_sm_clock(int device, int blocks, int threads, double seconds, int per_block) {
  GPUPROBE_CUDA_CHECK(cudaSetDevice(device));
  clock_samples s;
  s.blocks = blocks;
  s.per_block = per_block;
  const std::size_t n = std::size_t(blocks) * std::size_t(per_block);
  device_vector<long long> ns(n), cycles(n);
  device_vector<int> sm{std::size_t(blocks)};
  device_vector<float> sink(1);
  clock_kernel<<<blocks, threads>>>((unsigned long long)(seconds * 1e9), per_block, ns.p, cycles.p,
                                    sm.p, sink.p);
  GPUPROBE_CUDA_CHECK_LAUNCH();
  GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
  s.ns = ns.to_host(n);
  s.cycles = cycles.to_host(n);
  s.sm = sm.to_host(std::size_t(blocks));
  return s;
}

} // namespace gpuprobe::probes
