#pragma once
// Small device helpers the probes share: L2-only loads, clock and timer reads, %smid.
#include <cstdint>

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

} // namespace gpuprobe::probes
