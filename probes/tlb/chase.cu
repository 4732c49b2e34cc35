// TLB probe kernel: one thread chases a chain of 64-bit byte offsets through the pool.
#include "common/cuda_check.cuh"
#include "common/stats.hpp"
#include "probes/device_util.cuh"
#include "probes/tlb/chase.hpp"

#include <algorithm>

namespace gpuprobe::probes {

namespace {

__global__ void chain_init_kernel(char *base, unsigned long long stride, unsigned long long hops) {
  for (unsigned long long h = blockIdx.x * 1ull * blockDim.x + threadIdx.x; h < hops;
       h += 1ull * gridDim.x * blockDim.x)
    *reinterpret_cast<unsigned long long *>(base + h * stride) = ((h + 1) % hops) * stride;
}

// Alias pools: every slot maps the same physical chunk, so the chain cannot hold absolute
// offsets. Every word holds the stride (the delta to the next hop) and the walk wraps modulo
// the footprint; the loaded value still feeds the next address, so the chase stays dependent.
__global__ void fill_kernel(unsigned long long *p, unsigned long long words, unsigned long long v) {
  for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < words;
       i += 1ull * gridDim.x * blockDim.x)
    p[i] = v;
}

// One hop: the chain's absolute offset, or (Delta, alias pools) the offset plus the word read,
// modulo the footprint. A template, so each chase times exactly its own instructions.
template <bool Delta>
__device__ __forceinline__ unsigned long long next_hop(const char *base, unsigned long long off,
                                                       unsigned long long footprint) {
  if constexpr (Delta) {
    off += load_cg(base, off);
    return off >= footprint ? off - footprint : off;
  } else {
    return load_cg(base, off);
  }
}

// warm_stride == 0: thread 0 walks `warm_hops` hops first (one lap: the TLB and L2 hold what a
// cyclic walk leaves). Otherwise the whole block reads the lap's words, word h at h x warm_stride,
// in rising waves of blockDim.x, from the chasing thread's own SM, and thread 0 then chases from
// the lap's start: the L2 holds what the lap would leave, in a 1/blockDim.x of its time.
template <bool Delta>
__global__ void tlb_chase_kernel(const char *base, unsigned long long footprint,
                                 unsigned long long warm_hops, unsigned long long warm_stride,
                                 unsigned samples, unsigned *lat_out, unsigned long long *sink) {
  extern __shared__ unsigned s_lat[];
  unsigned long long off = 0;
  if (warm_stride) {
    unsigned long long acc = 0;
#pragma unroll 8
    for (unsigned long long h = threadIdx.x; h < warm_hops; h += blockDim.x)
      acc ^= load_cg(base, h * warm_stride); // independent loads: 8 in flight a thread
    if (acc == ~0ull)
      sink[0] = acc; // guarded sink: never true, each load completes before the barrier
    __syncthreads();
    if (threadIdx.x != 0)
      return;
  } else {
    for (unsigned long long h = 0; h < warm_hops; ++h)
      off = next_hop<Delta>(base, off, footprint); // warm pass
  }
  for (unsigned k = 0; k < samples; ++k) {
    const unsigned long long t0 = clock_now();
    off = next_hop<Delta>(base, off, footprint);
    s_lat[k] = static_cast<unsigned>(off); // a store that needs the loaded value: the clock
                                           // read below waits for the load to complete
    const unsigned long long t1 = clock_now();
    s_lat[k] = static_cast<unsigned>(t1 - t0);
  }
  for (unsigned k = 0; k < samples; ++k)
    lat_out[k] = s_lat[k];
  sink[1] = smid();
  if (off == ~0ull)
    sink[0] = off; // guarded sink: never true, keeps the chase alive
}


} // namespace

pointer_chase::pointer_chase(device_pool &pool, std::uint32_t samples)
    : pool_(pool), samples_(std::min(samples, max_samples())) {
  if (samples_ == 0)
    throw error("pointer_chase: samples must be > 0");
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_lat_, sizeof(unsigned) * samples_));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_sink_, 2 * sizeof(unsigned long long)));
  for (const void *k : {reinterpret_cast<const void *>(tlb_chase_kernel<false>),
                        reinterpret_cast<const void *>(tlb_chase_kernel<true>)})
    GPUPROBE_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(sizeof(unsigned) * max_samples())));
  host_lat_.resize(samples_);
}

pointer_chase::~pointer_chase() {
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_lat_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_sink_));
}

void pointer_chase::prepare_stride(std::uint64_t stride, std::uint64_t limit_bytes) {
  if (stride < 8 || stride % 8 != 0)
    throw error("stride must be a positive multiple of 8 bytes");
  stride_ = stride;
  const std::uint64_t bytes =
      limit_bytes ? std::min<std::uint64_t>(limit_bytes, pool_.bytes()) : pool_.bytes();
  max_hops_ = bytes / stride;
  if (max_hops_ < 1)
    throw error("stride larger than the pool");
  if (pool_.kind() == alloc_kind::alias)
    fill_kernel<<<1024, 256>>>(reinterpret_cast<unsigned long long *>(pool_.data()),
                               pool_.alias_bytes() / 8, stride);
  else
    chain_init_kernel<<<1024, 256>>>(pool_.data(), stride, max_hops_);
  GPUPROBE_CUDA_CHECK_LAUNCH();
  GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
}

chase_stats pointer_chase::measure(std::uint64_t hops, unsigned warm_threads) {
  if (hops < 1 || hops > max_hops_)
    throw error("hops out of range for the pool");
  const bool alias = pool_.kind() == alloc_kind::alias;
  char *last = pool_.data() + (hops - 1) * stride_;
  const unsigned long long to_first = 0, to_next = (hops % max_hops_) * stride_;
  const unsigned threads = std::clamp(warm_threads, 1u, 1024u);
  const unsigned long long warm_stride = threads > 1 ? stride_ : 0;
  if (alias) {
    tlb_chase_kernel<true><<<1, threads, sizeof(unsigned) * samples_>>>(
        pool_.data(), hops * stride_, hops, warm_stride, samples_, d_lat_, d_sink_);
  } else {
    GPUPROBE_CUDA_CHECK(cudaMemcpy(last, &to_first, sizeof to_first, cudaMemcpyHostToDevice));
    tlb_chase_kernel<false><<<1, threads, sizeof(unsigned) * samples_>>>(
        pool_.data(), 0, hops, warm_stride, samples_, d_lat_, d_sink_);
  }
  GPUPROBE_CUDA_CHECK_LAUNCH();
  GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned long long sink[2];
  GPUPROBE_CUDA_CHECK(
      cudaMemcpy(host_lat_.data(), d_lat_, sizeof(unsigned) * samples_, cudaMemcpyDeviceToHost));
  GPUPROBE_CUDA_CHECK(cudaMemcpy(sink, d_sink_, sizeof sink, cudaMemcpyDeviceToHost));
  if (!alias && hops < max_hops_) // re-open the chain for the next footprint
    GPUPROBE_CUDA_CHECK(cudaMemcpy(last, &to_next, sizeof to_next, cudaMemcpyHostToDevice));

  chase_stats s;
  s.stride_bytes = stride_;
  s.hops = hops;
  s.footprint_bytes = hops * stride_;
  s.samples = samples_;
  s.smid = int(sink[1]);
  std::vector<double> v(host_lat_.begin(), host_lat_.end());
  s.median = quantile(v, 0.5);
  s.p10 = quantile(v, 0.1);
  s.p90 = quantile(v, 0.9);
  double sum = 0;
  for (double x : v)
    sum += x;
  s.mean = sum / double(v.size());
  return s;
}


} // namespace gpuprobe::probes
