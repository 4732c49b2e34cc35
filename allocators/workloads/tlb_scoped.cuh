#pragma once
// TLB-conscious access (TLB paper §5, Fig. 8): a kernel's random accesses are restricted to a
// "TLB scope" [lo, hi) no larger than a TLB level's reach, and the kernel runs once per scope
// (passes = ceil(footprint / scope)); accesses outside the scope are skipped, so the memory
// traffic is the same as one pass and the extra cost is recomputation and launches.
//  - sampling: every thread reads `reads` random 8-byte elements of the data and sums them.
//  - grouping: a hash table of (key, count) slots, linear probing; every input value adds one
//    to its key's count (the TLB paper's hash-based grouping); a value belongs to the scope of
//    its home slot.
// One pass = the scope covers the whole footprint. Both produce checksums that must not depend
// on the number of passes.
#include "allocators/common.cuh"
#include "allocators/hash.hpp"

namespace gpuprobe::workloads {

// data[i] = mix(i): what a sample reads is known.
__global__ void scoped_fill(std::uint64_t* data, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n; i += gridDim.x * 1ull * blockDim.x) data[i] = alloc::mix64(i);
}

// One pass over elements [lo, hi): out[t] += the thread's reads that fall inside.
__global__ void scoped_sample(const std::uint64_t* data, std::uint64_t n, unsigned reads, std::uint64_t lo, std::uint64_t hi,
                              unsigned long long* out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint64_t s = alloc::mix64(t + 1) | 1, sum = 0;
  for (unsigned k = 0; k < reads; ++k) {
    s ^= s >> 12, s ^= s << 25, s ^= s >> 27;  // xorshift64: the same draws in every pass
    const std::uint64_t i = ((s * 0x2545f4914f6cdd1dull) >> 11) % n;
    if (i >= lo && i < hi) sum += data[i];
  }
  out[t] += sum;
}

struct group_slot {
  unsigned long long key;  // value + 1; 0 = empty
  unsigned long long count;
};

__global__ void scoped_values(std::uint32_t* v, std::uint64_t n, std::uint32_t groups) {
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n; i += gridDim.x * 1ull * blockDim.x)
    v[i] = std::uint32_t(alloc::mix64(i ^ 0x77ull) % groups);
}

// One pass: the values whose home slot lies in [lo, hi) are counted.
__global__ void scoped_group(const std::uint32_t* v, std::uint64_t n, group_slot* table, std::uint64_t slots, std::uint64_t lo,
                             std::uint64_t hi) {
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n; i += gridDim.x * 1ull * blockDim.x) {
    const unsigned long long key = v[i] + 1ull;
    std::uint64_t s = alloc::mix64(key) % slots;
    if (s < lo || s >= hi) continue;
    for (;;) {
      const unsigned long long k = atomicCAS(&table[s].key, 0ull, key);
      if (k == 0ull || k == key) {
        atomicAdd(&table[s].count, 1ull);
        break;
      }
      s = s + 1 == slots ? 0 : s + 1;
    }
  }
}

// Placement-independent checksum of a table: (occupied slots, total count, sum of mix(key) * count).
__global__ void group_checksum(const group_slot* table, std::uint64_t slots, unsigned long long* acc) {
  unsigned long long occ = 0, total = 0, sum = 0;
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < slots; i += gridDim.x * 1ull * blockDim.x) {
    const group_slot g = table[i];
    if (g.key) ++occ, total += g.count, sum += alloc::mix64(g.key) * g.count;
  }
  atomicAdd(&acc[0], occ);
  atomicAdd(&acc[1], total);
  atomicAdd(&acc[2], sum);
}

// Passes of a scope over a footprint: [lo, hi) ranges in elements of `elem_bytes`.
inline std::uint64_t scope_passes(std::uint64_t footprint_bytes, std::uint64_t scope_bytes) {
  if (scope_bytes == 0 || scope_bytes >= footprint_bytes) return 1;
  return (footprint_bytes + scope_bytes - 1) / scope_bytes;
}

}  // namespace gpuprobe::workloads
