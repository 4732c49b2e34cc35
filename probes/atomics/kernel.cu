// Atomic-contention kernels: one timed atomic per thread, per variant.
#include "common/cuda_check.cuh"
#include "common/stats.hpp"
#include "common/timing.cuh"
#include "probes/atomics/kernel.hpp"
#include "probes/device_util.cuh"

#include <algorithm>
#include <type_traits>

namespace gpuprobe::probes {

namespace {

constexpr unsigned k_block = 256;
constexpr unsigned k_line_words32 = 32; // 128-byte line / 4 bytes

// Inline PTX: nvcc's warp aggregation works on atomicAdd calls, not on an asm statement.
__device__ __forceinline__ unsigned atom_add(unsigned *p, unsigned v) {
  unsigned old;
  asm volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
__device__ __forceinline__ unsigned long long atom_add(unsigned long long *p,
                                                       unsigned long long v) {
  unsigned long long old;
  asm volatile("atom.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  return old;
}

// Tags name the kernels in SASS (the gpu test looks them up by these names).
// `zero` is a kernel argument that is always 0: `tid & zero` makes the address per-lane as far as
// nvcc and ptxas can tell, so neither can merge a warp's atomics into one (ptxas does merge an
// asm atom.global.add on a provably uniform address: seen in sm_90 SASS as VOTEU.ANY + POPC).
struct same_unaggregated {
  template <class T> __device__ static T apply(T *p, unsigned tid, unsigned zero) {
    return atom_add(p + (tid & zero), T(1));
  }
};
struct distinct_lines {
  template <class T> __device__ static T apply(T *p, unsigned tid, unsigned) {
    return atom_add(p + std::size_t(tid) * (128 / sizeof(T)), T(1));
  }
};
struct cas_loop {
  template <class T> __device__ static T apply(T *p, unsigned, unsigned) {
    T old = *reinterpret_cast<volatile T *>(p), assumed;
    do {
      assumed = old;
      old = atomicCAS(p, assumed, T(assumed + 1));
    } while (old != assumed);
    return old;
  }
};
struct compiler_aggregated {
  template <class T> __device__ static T apply(T *p, unsigned, unsigned) {
    return atomicAdd(p, T(1));
  }
};

template <class Op, class T>
__global__ void __launch_bounds__(k_block)
    atomics_kernel(T *target, unsigned n, unsigned zero, unsigned *lat, unsigned long long *sink) {
  __shared__ unsigned s_dep[k_block];
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n)
    return;
  const unsigned long long t0 = clock_now();
  const T old = Op::apply(target, tid, zero);
  s_dep[threadIdx.x] = unsigned(old);
  // Guarded sink and exit on the result: the second clock read is control-dependent on the
  // atomic's value, so it cannot be issued before the atomic returns (a store alone did not
  // hold it back: sm_90 timed 109 cycles for an L2 atomic).
  if (old == T(~T(0))) {
    sink[0] = old;
    return;
  }
  const unsigned long long t1 = clock_now();
  lat[tid] = unsigned(t1 - t0);
}

template <class Op, class T>
void launch(void *target, unsigned n, unsigned *lat, unsigned long long *sink) {
  atomics_kernel<Op, T><<<(n + k_block - 1) / k_block, std::min(n, k_block)>>>(
      static_cast<T *>(target), n, 0u, lat, sink);
}

void launch_variant(atomic_variant v, void *target, unsigned n, unsigned *lat,
                    unsigned long long *sink) {
  using u32 = unsigned;
  using u64 = unsigned long long;
  switch (v) {
  case atomic_variant::same_u32:
    return launch<same_unaggregated, u32>(target, n, lat, sink);
  case atomic_variant::same_u64:
    return launch<same_unaggregated, u64>(target, n, lat, sink);
  case atomic_variant::distinct_u32:
    return launch<distinct_lines, u32>(target, n, lat, sink);
  case atomic_variant::distinct_u64:
    return launch<distinct_lines, u64>(target, n, lat, sink);
  case atomic_variant::cas_u32:
    return launch<cas_loop, u32>(target, n, lat, sink);
  case atomic_variant::cas_u64:
    return launch<cas_loop, u64>(target, n, lat, sink);
  case atomic_variant::aggregated_u32:
    return launch<compiler_aggregated, u32>(target, n, lat, sink);
  case atomic_variant::aggregated_u64:
    return launch<compiler_aggregated, u64>(target, n, lat, sink);
  }
}

bool is_distinct(atomic_variant v) {
  return v == atomic_variant::distinct_u32 || v == atomic_variant::distinct_u64;
}

} // namespace

atomics_probe::atomics_probe(std::uint64_t max_threads) : max_threads_(max_threads) {
  if (max_threads == 0 || max_threads > (1ull << 31))
    throw error("atomics: thread count out of range");
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_target_, max_threads * 128));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_lat_, max_threads * sizeof(unsigned)));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_sink_, sizeof(unsigned long long)));
  host_lat_.resize(max_threads);
}

atomics_probe::~atomics_probe() {
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_target_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_lat_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_sink_));
}

atomic_point atomics_probe::measure(atomic_variant v, std::uint64_t threads,
                                    std::uint64_t min_samples) {
  if (threads == 0 || threads > max_threads_)
    throw error("atomics: thread count out of range");
  const unsigned n = unsigned(threads);
  const int launches = int(std::max<std::uint64_t>(1, (min_samples + threads - 1) / threads));
  const std::size_t target_bytes = is_distinct(v) ? std::size_t(n) * 128 : 128;
  event_timer timer;
  // Warm-up launch (module load, first-touch of the lines), also the correctness check.
  GPUPROBE_CUDA_CHECK(cudaMemset(d_target_, 0, target_bytes));
  launch_variant(v, d_target_, n, d_lat_, d_sink_);
  GPUPROBE_CUDA_CHECK_LAUNCH();
  GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
  atomic_point p;
  p.threads = threads;
  p.launches = launches;
  if (is_distinct(v)) { // every line counted once
    std::vector<unsigned> lines(target_bytes / 4);
    GPUPROBE_CUDA_CHECK(cudaMemcpy(lines.data(), d_target_, target_bytes, cudaMemcpyDeviceToHost));
    for (unsigned t = 0; t < n; ++t)
      p.counter_delta += lines[std::size_t(t) * k_line_words32];
  } else {
    unsigned long long c = 0;
    GPUPROBE_CUDA_CHECK(cudaMemcpy(&c, d_target_, bits_of(v) / 8, cudaMemcpyDeviceToHost));
    p.counter_delta = c;
  }
  if (p.counter_delta != threads)
    throw error("atomics " + to_string(v) + ": " + std::to_string(threads) + " threads added " +
                std::to_string(p.counter_delta) + ": an atomic was lost");

  std::vector<double> lat;
  lat.reserve(std::size_t(launches) * n);
  double total_ms = 0, warp_max_sum = 0;
  std::uint64_t warps = 0;
  for (int l = 0; l < launches; ++l) {
    total_ms += timer.ms([&] { launch_variant(v, d_target_, n, d_lat_, d_sink_); });
    GPUPROBE_CUDA_CHECK(
        cudaMemcpy(host_lat_.data(), d_lat_, sizeof(unsigned) * n, cudaMemcpyDeviceToHost));
    for (unsigned t = 0; t < n; ++t)
      lat.push_back(host_lat_[t]);
    for (unsigned w = 0; w + 32 <= n; w += 32, ++warps)
      warp_max_sum += *std::max_element(host_lat_.begin() + w, host_lat_.begin() + w + 32);
  }
  p.samples = lat.size();
  double sum = 0;
  for (double x : lat)
    sum += x;
  p.mean_cycles = sum / double(lat.size());
  p.median_cycles = quantile(lat, 0.5);
  p.p99_cycles = quantile(lat, 0.99);
  p.warp_max_mean_cycles = warps ? warp_max_sum / double(warps) : 0;
  p.ops_per_s = double(threads) * launches / (total_ms * 1e-3);
  return p;
}

} // namespace gpuprobe::probes
