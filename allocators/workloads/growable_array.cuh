#pragma once
// Growable-array workload (GGArray paper, Meneses et al.): a GGArray is one LFVector per thread
// block; an LFVector is a list of buckets of B0 * 2^k elements (k = 0, 1, ...), so it grows
// without moving data. A block's threads append with one atomicAdd on the vector's size; the
// first thread to need bucket k allocates it (others wait on the pointer). Buckets come from a
// malloc-shaped allocator handle (rw_malloc, cuda_malloc). Compared with a static array sized
// for the final count and a VMM array whose mapping the host grows before each insert round.
// Elements are 32-bit; the value inserted is the global insert index (checked by a sum).
#include "allocators/common.cuh"

namespace gpuprobe::workloads {

namespace detail {
constexpr unsigned lfv_max_buckets = 32;
constexpr std::uint32_t lfv_b0 = 256;         // elements in bucket 0
constexpr unsigned long long lfv_pending = 1; // bucket pointer while its allocation runs
constexpr unsigned long long lfv_failed = 2;  // bucket pointer when it found no memory

__host__ __device__ inline unsigned lfv_bucket(std::uint64_t i) { // bucket of element i
  unsigned k = 0;
  while (i >= (std::uint64_t(lfv_b0) << k))
    i -= std::uint64_t(lfv_b0) << k, ++k;
  return k;
}
__host__ __device__ inline std::uint64_t lfv_first(unsigned k) {
  return std::uint64_t(lfv_b0) * ((1ull << k) - 1);
}
} // namespace detail

struct lf_vector {
  unsigned long long size;
  char *bucket[detail::lfv_max_buckets];
  unsigned long long failed; // elements that found no memory
};

template <class H> __device__ std::uint32_t *lfv_slot(H h, lf_vector *v, std::uint64_t i) {
  const unsigned k = detail::lfv_bucket(i);
  auto *b = reinterpret_cast<unsigned long long *>(&v->bucket[k]);
  unsigned long long p = atomicAdd(b, 0ull);
  if (!p && atomicCAS(b, 0ull, detail::lfv_pending) == 0ull) { // this thread allocates bucket k
    p = reinterpret_cast<unsigned long long>(h.malloc(std::size_t(detail::lfv_b0) * 4u << k));
    if (!p)
      p = detail::lfv_failed;
    atomicExch(b, p);
  }
  while (p <= detail::lfv_pending) {
    __nanosleep(100);
    p = atomicAdd(b, 0ull);
  }
  if (p == detail::lfv_failed)
    return nullptr;
  return reinterpret_cast<std::uint32_t *>(p) + (i - detail::lfv_first(k));
}

// Each thread appends one value: vector blockIdx.x % vectors.
template <class H>
__global__ void gg_insert(H h, lf_vector *vecs, unsigned vectors, unsigned n, std::uint64_t base) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  lf_vector *v = &vecs[blockIdx.x % vectors];
  const std::uint64_t i = atomicAdd(&v->size, 1ull);
  std::uint32_t *s = lfv_slot(h, v, i);
  if (s)
    *s = std::uint32_t(base + t);
  else
    atomicAdd(&v->failed, 1ull);
}
// f(element) for every element a vector holds: block b walks vectors b, b + grid, ...; buckets
// that found no memory hold nothing.
template <class F> __device__ void lfv_for_each(lf_vector *vecs, unsigned vectors, F f) {
  for (unsigned vi = blockIdx.x; vi < vectors; vi += gridDim.x) {
    const lf_vector *v = &vecs[vi];
    for (unsigned k = 0; detail::lfv_first(k) < v->size; ++k) {
      if (reinterpret_cast<unsigned long long>(v->bucket[k]) <= detail::lfv_failed)
        continue;
      auto *b = reinterpret_cast<std::uint32_t *>(v->bucket[k]);
      const std::uint64_t cap = std::uint64_t(detail::lfv_b0) << k,
                          left = v->size - detail::lfv_first(k), m = cap < left ? cap : left;
      for (std::uint64_t j = threadIdx.x; j < m; j += blockDim.x)
        f(b[j]);
    }
  }
}
// Read-modify-write of every element (x = 2x + 1).
template <int = 0> // a template: the header can be in several files of one binary (no ODR clash)
__global__ void gg_read_write(lf_vector *vecs, unsigned vectors) {
  lfv_for_each(vecs, vectors, [](std::uint32_t &x) { x = 2 * x + 1; });
}
template <int = 0>
__global__ void gg_sum(lf_vector *vecs, unsigned vectors, unsigned long long *acc) {
  unsigned long long s = 0;
  lfv_for_each(vecs, vectors, [&s](std::uint32_t &x) { s += x; });
  atomicAdd(acc, s);
}
template <class H> __global__ void gg_release(H h, lf_vector *vecs, unsigned vectors) {
  const unsigned vi = blockIdx.x * blockDim.x + threadIdx.x;
  if (vi >= vectors)
    return;
  for (unsigned k = 0; k < detail::lfv_max_buckets; ++k) {
    char *b = vecs[vi].bucket[k];
    if (reinterpret_cast<unsigned long long>(b) > detail::lfv_failed)
      h.free(b);
  }
}

// Flat arrays (static, VMM): one global size counter.
template <int = 0>
__global__ void flat_insert(std::uint32_t *a, unsigned long long *size, unsigned n,
                            std::uint64_t base) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n)
    a[atomicAdd(size, 1ull)] = std::uint32_t(base + t);
}
template <int = 0> __global__ void flat_read_write(std::uint32_t *a, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * 1ull * blockDim.x)
    a[i] = 2 * a[i] + 1;
}
template <int = 0>
__global__ void flat_sum(const std::uint32_t *a, std::uint64_t n, unsigned long long *acc) {
  unsigned long long s = 0;
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * 1ull * blockDim.x)
    s += a[i];
  atomicAdd(acc, s);
}

// Bytes of buckets a GGArray of `sizes` holds (host: memory used).
inline std::uint64_t gg_bucket_bytes(std::uint64_t elements) {
  std::uint64_t bytes = 0;
  for (unsigned k = 0; detail::lfv_first(k) < elements; ++k)
    bytes += std::uint64_t(detail::lfv_b0) * 4 << k;
  return bytes;
}

// The sums a correct array holds after inserting 0..n-1 (then after one read_write pass).
inline unsigned long long expected_insert_sum(std::uint64_t n) {
  unsigned long long s = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    s += std::uint32_t(i);
  return s;
}
inline unsigned long long expected_rw_sum(std::uint64_t n) {
  unsigned long long s = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    s += std::uint32_t(2 * std::uint32_t(i) + 1);
  return s;
}

} // namespace gpuprobe::workloads
