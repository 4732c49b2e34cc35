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

#include <algorithm>
#include <string>
#include <vector>

namespace gpuprobe::workloads {

// data[i] = mix(i): what a sample reads is known.
template <int = 0> // a template: the header can be in several files of one binary (no ODR clash)
__global__ void scoped_fill(std::uint64_t *data, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * 1ull * blockDim.x)
    data[i] = alloc::mix64(i);
}

// One pass over elements [lo, hi): out[t] += the thread's reads that fall inside.
template <int = 0>
__global__ void scoped_sample(const std::uint64_t *data, std::uint64_t n, unsigned reads,
                              std::uint64_t lo, std::uint64_t hi, unsigned long long *out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint64_t s = alloc::mix64(t + 1) | 1, sum = 0;
  for (unsigned k = 0; k < reads; ++k) {
    s ^= s >> 12, s ^= s << 25, s ^= s >> 27; // xorshift64: the same draws in every pass
    const std::uint64_t i = ((s * 0x2545f4914f6cdd1dull) >> 11) % n;
    if (i >= lo && i < hi)
      sum += data[i];
  }
  out[t] += sum;
}

struct group_slot {
  unsigned long long key; // value + 1; 0 = empty
  unsigned long long count;
};

template <int = 0>
__global__ void scoped_values(std::uint32_t *v, std::uint64_t n, std::uint32_t groups) {
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * 1ull * blockDim.x)
    v[i] = std::uint32_t(alloc::mix64(i ^ 0x77ull) % groups);
}

// One pass: the values whose home slot lies in [lo, hi) are counted.
template <int = 0>
__global__ void scoped_group(const std::uint32_t *v, std::uint64_t n, group_slot *table,
                             std::uint64_t slots, std::uint64_t lo, std::uint64_t hi) {
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * 1ull * blockDim.x) {
    const unsigned long long key = v[i] + 1ull;
    std::uint64_t s = alloc::mix64(key) % slots;
    if (s < lo || s >= hi)
      continue;
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

// Placement-independent checksum of a table: (occupied slots, total count, sum of mix(key) *
// count).
template <int = 0>
__global__ void group_checksum(const group_slot *table, std::uint64_t slots,
                               unsigned long long *acc) {
  unsigned long long occ = 0, total = 0, sum = 0;
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < slots;
       i += gridDim.x * 1ull * blockDim.x) {
    const group_slot g = table[i];
    if (g.key)
      ++occ, total += g.count, sum += alloc::mix64(g.key) * g.count;
  }
  atomicAdd(&acc[0], occ);
  atomicAdd(&acc[1], total);
  atomicAdd(&acc[2], sum);
}

// What any correct table holds for values `v`, counted without one: (distinct values, through a
// bit per group set once; the count; the sum of mix(value + 1)) into acc[0..2].
template <int = 0>
__global__ void group_reference(const std::uint32_t *v, std::uint64_t n, std::uint32_t *seen,
                                unsigned long long *acc) {
  unsigned long long distinct = 0, count = 0, sum = 0;
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * 1ull * blockDim.x) {
    const std::uint32_t x = v[i], bit = 1u << (x % 32);
    distinct += !(atomicOr(&seen[x / 32], bit) & bit); // the first to set the bit counts it
    ++count, sum += alloc::mix64(x + 1ull);
  }
  atomicAdd(&acc[0], distinct);
  atomicAdd(&acc[1], count);
  atomicAdd(&acc[2], sum);
}

// Passes of a scope over a footprint: [lo, hi) ranges in elements of `elem_bytes`.
inline std::uint64_t scope_passes(std::uint64_t footprint_bytes, std::uint64_t scope_bytes) {
  if (scope_bytes == 0 || scope_bytes >= footprint_bytes)
    return 1;
  return (footprint_bytes + scope_bytes - 1) / scope_bytes;
}

// Host drivers over the caller's memory (gpuprobe-bench and gpuprobe validate share them):
// reset() (untimed), launch(scope) (every pass; scope 0 = one pass), then verify() -> "" or what
// is wrong.

// Sampling: data[i] = mix(i) over `bytes`; `threads` threads read `reads` elements each.
class sampling_run {
public:
  sampling_run(void *data, std::uint64_t bytes, unsigned threads = 1u << 20, unsigned reads = 256)
      : data_(static_cast<std::uint64_t *>(data)), n_(bytes / 8), threads_(threads), reads_(reads),
        out_(threads) {
    scoped_fill<<<4096, alloc::k_block>>>(data_, n_);
    alloc::cuda_or_throw(cudaDeviceSynchronize(), "sampling fill");
  }
  void reset() {
    alloc::cuda_or_throw(cudaMemsetAsync(out_.get(), 0, threads_ * sizeof(unsigned long long)),
                         "memset");
  }
  void launch(std::uint64_t scope_bytes) {
    const std::uint64_t per = scope_bytes ? std::max<std::uint64_t>(1, scope_bytes / 8) : n_;
    for (std::uint64_t lo = 0; lo < n_; lo += per)
      scoped_sample<<<threads_ / alloc::k_block, alloc::k_block>>>(
          data_, n_, reads_, lo, std::min(n_, lo + per), out_.get());
    alloc::cuda_or_throw(cudaGetLastError(), "scoped_sample");
  }
  // Each sampled thread's sum recomputed on the host (data[i] = mix(i)).
  std::string verify() {
    std::vector<unsigned long long> h(threads_);
    alloc::cuda_or_throw(cudaDeviceSynchronize(), "sampling");
    out_.download(h.data(), threads_);
    for (unsigned t = 0; t < threads_; t += 4099) {
      std::uint64_t s = alloc::mix64(t + 1) | 1, sum = 0;
      for (unsigned k = 0; k < reads_; ++k) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        sum += alloc::mix64(((s * 0x2545f4914f6cdd1dull) >> 11) % n_);
      }
      if (sum != h[t])
        return "thread " + std::to_string(t) + "'s sum differs";
    }
    return "";
  }
  double reads() const { return double(threads_) * reads_; }

private:
  std::uint64_t *data_;
  std::uint64_t n_;
  unsigned threads_, reads_;
  alloc::device_array<unsigned long long> out_;
};

// Grouping: `input` values into a table of `bytes` (slots of 16 B), groups = slots / 2.
class grouping_run {
public:
  grouping_run(void *table, std::uint64_t bytes, std::uint64_t input = 1ull << 28)
      : table_(static_cast<group_slot *>(table)), slots_(bytes / sizeof(group_slot)), input_(input),
        groups_(std::uint32_t(std::min<std::uint64_t>(slots_ / 2, 0xffffffffull))), values_(input),
        acc_(3) {
    scoped_values<<<4096, alloc::k_block>>>(values_.get(), input_, groups_);
    alloc::cuda_or_throw(cudaDeviceSynchronize(), "grouping values");
  }
  void reset() {
    alloc::cuda_or_throw(cudaMemsetAsync(table_, 0, slots_ * sizeof(group_slot)), "memset table");
  }
  void launch(std::uint64_t scope_bytes) {
    const std::uint64_t per =
        scope_bytes ? std::max<std::uint64_t>(1, scope_bytes / sizeof(group_slot)) : slots_;
    for (std::uint64_t lo = 0; lo < slots_; lo += per)
      scoped_group<<<4096, alloc::k_block>>>(values_.get(), input_, table_, slots_, lo,
                                             std::min(slots_, lo + per));
    alloc::cuda_or_throw(cudaGetLastError(), "scoped_group");
  }
  // Occupied slots, total count and a placement-free checksum against the values' own count on
  // the device (group_reference: no table; a sample of groups would not check placement, these
  // do). Counting 2^28 values into 2^31 groups on the host took ~20 s a trial.
  std::string verify() {
    acc_.zero();
    group_checksum<<<4096, alloc::k_block>>>(table_, slots_, acc_.get());
    alloc::cuda_or_throw(cudaDeviceSynchronize(), "checksum");
    unsigned long long got[3];
    acc_.download(got, 3);
    if (!ref_done_) {
      alloc::device_array<std::uint32_t> seen((std::uint64_t(groups_) + 31) / 32);
      seen.zero();
      acc_.zero();
      group_reference<<<4096, alloc::k_block>>>(values_.get(), input_, seen.get(), acc_.get());
      alloc::cuda_or_throw(cudaDeviceSynchronize(), "group reference");
      acc_.download(ref_, 3);
      ref_done_ = true;
    }
    if (got[0] != ref_[0] || got[1] != ref_[1] || got[2] != ref_[2])
      return "group counts differ from the values' own count";
    return "";
  }
  std::uint64_t input() const { return input_; }
  std::uint32_t groups() const { return groups_; }

private:
  group_slot *table_;
  std::uint64_t slots_, input_;
  std::uint32_t groups_;
  alloc::device_array<std::uint32_t> values_;
  alloc::device_array<unsigned long long> acc_;
  unsigned long long ref_[3] = {0, 0, 0};
  bool ref_done_ = false;
};

} // namespace gpuprobe::workloads
