#pragma once
// Hash-join workload (RW paper §VI, after the GPU radix hash join it cites): R (build, keys
// 0..n-1) and S (probe, n keys drawn uniformly from R's) are radix-partitioned on a hash of the
// key (histogram, exclusive scan, scatter); one block per partition builds a shared-memory hash
// table of its R part and probes its S part, one S tuple per thread. A thread that finds a match
// writes the result tuple (R payload, S payload) into its current output page and asks
// `get_page` for a page when it has none or the page is full ("DO", the direct-output buffer of
// the original code, is the `bump` allocator: one atomicAdd). Every S tuple matches once, so the
// output is n tuples; `verify` finds them all in the pool afterwards (count and checksum).
#include "allocators/common.cuh"
#include "allocators/hash.hpp"

#include <cub/device/device_scan.cuh>

#include <vector>

namespace gpuprobe::workloads {

using alloc::cuda_or_throw;

namespace detail {
constexpr unsigned join_block = 1024; // threads per probe block
constexpr unsigned join_table = 4096; // shared-memory slots per partition (R part <= 2048)
constexpr std::uint32_t no_key = 0xffffffffu;

template <int = 0> // a template: the header can be in several files of one binary (no ODR clash)
__global__ void make_relations(unsigned n, std::uint32_t *rk, std::uint32_t *rp, std::uint32_t *sk,
                               std::uint32_t *sp) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    rk[i] = i;
    rp[i] = std::uint32_t(alloc::mix64(i)) | 1u;
    sk[i] = std::uint32_t(alloc::mix64(i ^ 0xabcdefull) % n);
    sp[i] = std::uint32_t(alloc::mix64(i + 0x1234567ull)) | 1u;
  }
}
__device__ inline unsigned part_of(std::uint32_t key, unsigned mask) {
  return unsigned(alloc::mix64(key ^ 0x5555ull) >> 20) & mask;
}
template <int = 0>
__global__ void histogram(unsigned n, const std::uint32_t *k, unsigned mask, unsigned *count) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&count[part_of(k[i], mask)], 1u);
}
template <int = 0>
__global__ void scatter(unsigned n, const std::uint32_t *k, const std::uint32_t *p, unsigned mask,
                        unsigned *cursor, std::uint32_t *ko, std::uint32_t *po) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const unsigned at = atomicAdd(&cursor[part_of(k[i], mask)], 1u);
    ko[at] = k[i];
    po[at] = p[i];
  }
}

template <class H>
__global__ void __launch_bounds__(join_block)
    probe(H h, const unsigned *r_off, const std::uint32_t *rk, const std::uint32_t *rp,
          const unsigned *s_off, const std::uint32_t *sk, const std::uint32_t *sp,
          unsigned slots_per_page, unsigned long long *status) {
  __shared__ std::uint32_t tk[join_table], tp[join_table];
  const unsigned b = blockIdx.x;
  for (unsigned i = threadIdx.x; i < join_table; i += blockDim.x)
    tk[i] = no_key;
  __syncthreads();
  const unsigned r0 = r_off[b], r1 = r_off[b + 1];
  if (r1 - r0 > join_table / 2) {
    if (threadIdx.x == 0)
      atomicAdd(&status[1], 1ull); // partition too large for the table
    return;
  }
  for (unsigned i = r0 + threadIdx.x; i < r1; i += blockDim.x) {
    unsigned slot = unsigned(alloc::mix64(rk[i])) & (join_table - 1);
    while (atomicCAS(&tk[slot], no_key, rk[i]) != no_key)
      slot = (slot + 1) & (join_table - 1);
    tp[slot] = rp[i];
  }
  __syncthreads();
  std::uint64_t *page = nullptr; // this thread's current output page
  unsigned used = 0;
  for (unsigned i = s_off[b] + threadIdx.x; i < s_off[b + 1]; i += blockDim.x) {
    const std::uint32_t key = sk[i];
    unsigned slot = unsigned(alloc::mix64(key)) & (join_table - 1);
    while (tk[slot] != key && tk[slot] != no_key)
      slot = (slot + 1) & (join_table - 1);
    if (tk[slot] != key)
      continue;
    if (!page || used == slots_per_page) {
      const alloc::page_t pg = h.get_page();
      if (pg == alloc::invalid_page) {
        atomicAdd(&status[0], 1ull); // out of pages: the tuple is lost (reported)
        continue;
      }
      page = reinterpret_cast<std::uint64_t *>(h.page_ptr(pg));
      used = 0;
    }
    page[used++] = (std::uint64_t(tp[slot]) << 32) | sp[i];
  }
}

// Every non-zero 8-byte slot of the pool is a result tuple: count and checksum.
template <int = 0>
__global__ void scan_pool(const std::uint64_t *pool, std::uint64_t words, unsigned long long *acc) {
  unsigned long long c = 0, sum = 0;
  for (std::uint64_t i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < words;
       i += gridDim.x * 1ull * blockDim.x) {
    const std::uint64_t v = __ldcs(&pool[i]);
    if (v)
      ++c, sum += alloc::mix64(v);
  }
  atomicAdd(&acc[0], c);
  atomicAdd(&acc[1], sum);
}
// The checksum the join must produce: S tuple i matches R tuple sk[i].
template <int = 0>
__global__ void expected_sum(unsigned n, const std::uint32_t *rp, const std::uint32_t *sk,
                             const std::uint32_t *sp, unsigned long long *acc) {
  unsigned long long sum = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    sum += alloc::mix64((std::uint64_t(rp[sk[i]]) << 32) | sp[i]);
  atomicAdd(&acc[0], sum);
}
} // namespace detail

// R, S and their partitioned copies on the device.
class hash_join {
public:
  explicit hash_join(unsigned n)
      : n_(n), bits_(radix_bits(n)), parts_(1u << bits_), rk_(n), rp_(n), sk_(n), sp_(n), rk2_(n),
        rp2_(n), sk2_(n), sp2_(n), r_off_(parts_ + 1), s_off_(parts_ + 1), cursor_(parts_ + 1),
        acc_(2) {
    if (n == 0 || n > (1u << 31))
      throw std::invalid_argument("hash_join: tuples must be in [1, 2^31]");
    detail::make_relations<<<1024, alloc::k_block>>>(n, rk_.get(), rp_.get(), sk_.get(), sp_.get());
    cuda_or_throw(cudaGetLastError(), "make_relations");
    std::size_t tmp = 0;
    cuda_or_throw(
        cub::DeviceScan::ExclusiveSum(nullptr, tmp, cursor_.get(), r_off_.get(), parts_ + 1),
        "scan size");
    scan_tmp_ = alloc::device_array<char>(tmp);
  }
  unsigned tuples() const { return n_; }
  unsigned partitions() const { return parts_; }

  // The whole join: partition R and S, then probe, writing results through `h`'s pages.
  template <class H> void run(H h, unsigned page_bytes) {
    partition(rk_.get(), rp_.get(), rk2_.get(), rp2_.get(), r_off_.get());
    partition(sk_.get(), sp_.get(), sk2_.get(), sp2_.get(), s_off_.get());
    cuda_or_throw(cudaMemsetAsync(acc_.get(), 0, 2 * sizeof(unsigned long long)), "memset");
    detail::probe<<<parts_, detail::join_block>>>(h, r_off_.get(), rk2_.get(), rp2_.get(),
                                                  s_off_.get(), sk2_.get(), sp2_.get(),
                                                  page_bytes / 8, acc_.get());
    cuda_or_throw(cudaGetLastError(), "probe");
  }

  // After run(): "" when the pool holds exactly the n result tuples, else what is wrong.
  std::string verify(const char *pool, std::uint64_t pool_bytes) {
    unsigned long long status[2];
    acc_.download(status, 2);
    if (status[1])
      return std::to_string(status[1]) + " partitions overflowed the shared-memory table";
    if (status[0])
      return std::to_string(status[0]) + " tuples found no page (pool exhausted)";
    alloc::device_array<unsigned long long> got(2), want(1);
    got.zero();
    want.zero();
    detail::scan_pool<<<1024, alloc::k_block>>>(reinterpret_cast<const std::uint64_t *>(pool),
                                                pool_bytes / 8, got.get());
    detail::expected_sum<<<1024, alloc::k_block>>>(n_, rp_.get(), sk_.get(), sp_.get(), want.get());
    cuda_or_throw(cudaDeviceSynchronize(), "verify");
    unsigned long long g[2], w = 0;
    got.download(g, 2);
    want.download(&w, 1);
    if (g[0] != n_)
      return "the pool holds " + std::to_string(g[0]) + " result tuples, " + std::to_string(n_) +
             " expected";
    if (g[1] != w)
      return "result checksum differs";
    return "";
  }

private:
  static unsigned radix_bits(unsigned n) { // about 1024 tuples per partition
    unsigned b = 0;
    while ((std::uint64_t(n) >> b) > 1024)
      ++b;
    return b;
  }
  void partition(const std::uint32_t *k, const std::uint32_t *p, std::uint32_t *ko,
                 std::uint32_t *po, unsigned *off) {
    const unsigned mask = parts_ - 1;
    cuda_or_throw(cudaMemsetAsync(cursor_.get(), 0, (parts_ + 1) * sizeof(unsigned)), "memset");
    detail::histogram<<<1024, alloc::k_block>>>(n_, k, mask, cursor_.get());
    std::size_t tmp = scan_tmp_.size();
    cuda_or_throw(
        cub::DeviceScan::ExclusiveSum(scan_tmp_.get(), tmp, cursor_.get(), off, parts_ + 1),
        "scan");
    cuda_or_throw(cudaMemcpyAsync(cursor_.get(), off, (parts_ + 1) * sizeof(unsigned),
                                  cudaMemcpyDeviceToDevice),
                  "copy");
    detail::scatter<<<1024, alloc::k_block>>>(n_, k, p, mask, cursor_.get(), ko, po);
    cuda_or_throw(cudaGetLastError(), "partition");
  }
  unsigned n_, bits_, parts_;
  alloc::device_array<std::uint32_t> rk_, rp_, sk_, sp_, rk2_, rp2_, sk2_, sp2_;
  alloc::device_array<unsigned> r_off_, s_off_, cursor_;
  alloc::device_array<unsigned long long> acc_;
  alloc::device_array<char> scan_tmp_;
};

} // namespace gpuprobe::workloads
