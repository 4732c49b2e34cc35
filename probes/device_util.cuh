#pragma once
// Small device helpers the probes share: L2-only loads, clock and timer reads, %smid.
#include "common/cuda_check.cuh"
#include "common/error.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace gpuprobe::probes {

// L2-only load (no L1 allocation): every hop goes through address translation to L2.
__device__ __forceinline__ unsigned long long load_cg(const char *base, unsigned long long off) {
  unsigned long long v;
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(base + off));
  return v;
}

// "memory" clobber: no memory access is moved across the clock read.
__device__ __forceinline__ unsigned long long clock_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

__device__ __forceinline__ unsigned smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// Waits until state[0] reaches `want`; false (and the error flag state[1] set, with `round` in
// state[2]) past the deadline or when another block failed. The blocks of a one-block-per-SM
// launch take turns on it.
__device__ __forceinline__ bool wait_for_phase(unsigned *state, unsigned want,
                                               unsigned long long deadline, int round) {
  volatile unsigned *v = state; // volatile: re-read the flags from memory on every poll
  while (v[0] < want) {
    if (v[1])
      return false;
    if (globaltimer_ns() > deadline) {
      if (atomicCAS(&state[1], 0u, 1u) == 0u)
        state[2] = unsigned(round);
      return false;
    }
    __nanosleep(1000);
  }
  return true;
}

// The dynamic shared memory a block asks for so that no SM can hold two (past half an SM's, and
// at least `at_least`), for a cooperative launch of one block per SM, which is refused unless all
// blocks are resident at once. Throws gpuprobe::error, naming `probe`, where the device cannot.
inline std::size_t one_block_per_sm_shared_bytes(std::size_t at_least, const std::string &probe) {
  int dev = 0, coop = 0, smem_sm = 0, smem_optin = 0;
  GPUPROBE_CUDA_CHECK(cudaGetDevice(&dev));
  GPUPROBE_CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  GPUPROBE_CUDA_CHECK(
      cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  GPUPROBE_CUDA_CHECK(
      cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (!coop)
    throw error(probe + ": the device does not support cooperative launches (needed to place "
                        "one block per SM)");
  const std::size_t bytes = std::max<std::size_t>(at_least, std::size_t(smem_sm) / 2 + 4096);
  if (bytes > std::size_t(smem_optin))
    throw error(probe + ": cannot ask for more than half an SM's shared memory in one block");
  return bytes;
}

// One cooperative launch of `kernel` (one block of 32 threads per SM, `smem` bytes each, its one
// argument struct at `args`), waited for; `state` receives the 4 turn-taking words at `d_state`
// ([0] phase, [1] error, [2] who failed) for the caller's watchdog check.
inline void launch_one_block_per_sm(const void *kernel, void *args, int sm_count, std::size_t smem,
                                    const unsigned *d_state, unsigned (&state)[4]) {
  void *params[] = {args};
  GPUPROBE_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(unsigned(sm_count)), dim3(32),
                                                  params, smem, nullptr));
  GPUPROBE_CUDA_CHECK_LAUNCH();
  GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
  GPUPROBE_CUDA_CHECK(cudaMemcpy(state, d_state, sizeof state, cudaMemcpyDeviceToHost));
}

} // namespace gpuprobe::probes
