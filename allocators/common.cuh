#pragma once
// Pieces every page allocator shares: page ids, the per-thread random stream, optional step
// counting (compiled out when off) and a small owning device buffer.
#include "common/non_copyable.hpp"
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpuprobe::alloc {

using page_t = std::uint32_t;
constexpr page_t invalid_page = 0xffffffffu;

// Threads per block of every allocator, workload, bench and tune kernel, and the blocks that
// give `threads` threads.
constexpr unsigned k_block = 256;
inline unsigned blocks_for(unsigned long long threads) {
  return unsigned((threads + k_block - 1) / k_block);
}

// Step counting: get_page(stats) adds one per page (RW) or bitmap word (RW-BM, CoRW) examined,
// a word found locked included. no_steps compiles to nothing.
struct no_steps {
  __device__ void add(unsigned = 1) {}
};
struct count_steps {
  unsigned steps = 0;
  __device__ void add(unsigned k = 1) { steps += k; }
};

// A thread's random stream: splitmix64 seeded from the handle's seed, the global thread index
// and the SM clock (so repeated launches differ), stepped with xorshift64*.
struct rng64 {
  unsigned long long s;
  __device__ explicit rng64(unsigned long long seed) {
    unsigned long long z = seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    s = (z ^ (z >> 31)) | 1ull;
  }
  __device__ unsigned long long next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545f4914f6cdd1dull;
  }
  // Uniform in [0, n) for n < 2^32 (multiply-shift, no division).
  __device__ std::uint32_t below(std::uint32_t n) {
    return std::uint32_t(((next() >> 32) * n) >> 32);
  }
};

__device__ inline unsigned long long thread_seed(unsigned long long seed) {
  const unsigned long long gtid = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
  return seed ^ (gtid * 0xd1342543de82ef95ull) ^ (clock64() << 17);
}

namespace detail {
__device__ inline unsigned lane_id() {
  unsigned l;
  asm("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}
__device__ inline unsigned sm_id() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); // volatile: a warp's SM is read where it runs
  return s;
}
// Exclusive prefix sum of v (< 2^nbits) over the lanes of `mask`, by ballots: works for any mask.
__device__ inline unsigned ballot_scan(unsigned mask, unsigned v, unsigned lt, unsigned nbits = 7) {
  unsigned s = 0;
  for (unsigned b = 0; b < nbits; ++b)
    s += __popc(__ballot_sync(mask, (v >> b) & 1u) & lt) << b;
  return s;
}
} // namespace detail

inline void cuda_or_throw(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// The current device's SM count (`who` names the caller in the error).
inline std::uint32_t current_sm_count(const char *who) {
  int d = 0, n = 0;
  cuda_or_throw(cudaGetDevice(&d), (std::string(who) + ": cudaGetDevice").c_str());
  cuda_or_throw(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d),
                (std::string(who) + ": the SM count").c_str());
  return std::uint32_t(n);
}

// Owning device array (RAII, move-only).
template <class T> class device_array : private non_copyable {
public:
  device_array() = default;
  explicit device_array(std::size_t n) : n_(n) {
    if (n)
      cuda_or_throw(cudaMalloc(&p_, n * sizeof(T)), "cudaMalloc");
  }
  ~device_array() {
    if (p_)
      (void)cudaFree(p_);
  }
  device_array(device_array &&o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  device_array &operator=(device_array &&o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  T *get() const { return p_; }
  std::size_t size() const { return n_; }
  void upload(const T *src, std::size_t n) {
    cuda_or_throw(cudaMemcpy(p_, src, n * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  void download(T *dst, std::size_t n) const {
    cuda_or_throw(cudaMemcpy(dst, p_, n * sizeof(T), cudaMemcpyDeviceToHost), "download");
  }
  void zero() { cuda_or_throw(cudaMemset(p_, 0, n_ * sizeof(T)), "memset"); }

private:
  T *p_ = nullptr;
  std::size_t n_ = 0;
};

} // namespace gpuprobe::alloc
