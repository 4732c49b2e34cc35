#pragma once
// What tune/*.cu share: the get-a-page-and-write-it kernel, and the checks run
// after timing.
#include "allocators/common.cuh"
#include "common/cuda_check.cuh"
#include "common/timing.cuh"

#include <algorithm>
#include <string>
#include <vector>

namespace gpuprobe::tune {

// The first 16 bytes of page q after a write with `tag`.
__host__ __device__ inline uint4 page_stamp(alloc::page_t q, unsigned tag, unsigned k) {
  return make_uint4(q, tag, k, q ^ tag);
}

// Every thread takes one page; then the warp writes each of its lanes' pages in turn, 16-byte
// stores coalesced over the page (how a kernel fills the page it got). n: a multiple of the block.
template <class H>
__global__ void get_and_write(H h, alloc::page_t *out, unsigned page_bytes, unsigned tag) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const alloc::page_t p = h.get_page();
  out[t] = p;
  const unsigned lane = threadIdx.x & 31u;
  for (int j = 0; j < 32; ++j) {
    const alloc::page_t q = __shfl_sync(0xffffffffu, p, j);
    if (q == alloc::invalid_page)
      continue;
    uint4 *dst = reinterpret_cast<uint4 *>(h.page_ptr(q));
    for (unsigned k = lane; k < page_bytes / 16; k += 32)
      dst[k] = page_stamp(q, tag, k);
  }
}

// `launches` consecutive launches of `threads` threads (a multiple of 256) that take a page and
// write it; launch l's page ids land at out + l * threads.
template <class H>
void get_and_write_launches(const H &h, alloc::page_t *out, unsigned threads, unsigned launches,
                            unsigned page_bytes, unsigned tag) {
  for (unsigned l = 0; l < launches; ++l)
    get_and_write<<<threads / alloc::k_block, alloc::k_block>>>(h, out + std::size_t(l) * threads,
                                                                page_bytes, tag);
}

// The pages of one or more launches: every thread got one, none twice, all below `pages`; and
// (data != nullptr) a sample of them carries the stamp of `tag`.
inline std::string check_pages(const alloc::device_array<alloc::page_t> &out, std::size_t n,
                               std::uint64_t pages, const char *data = nullptr,
                               unsigned page_bytes = 0, unsigned tag = 0) {
  std::vector<alloc::page_t> ids(n);
  out.download(ids.data(), n);
  if (data)
    for (std::size_t i = 0; i < n; i += std::max<std::size_t>(1, n / 256)) {
      if (ids[i] == alloc::invalid_page)
        continue;
      uint4 got;
      GPUPROBE_CUDA_CHECK(cudaMemcpy(&got, data + std::size_t(ids[i]) * page_bytes, sizeof got,
                                     cudaMemcpyDeviceToHost));
      const uint4 want = page_stamp(ids[i], tag, 0);
      if (got.x != want.x || got.y != want.y || got.z != want.z || got.w != want.w)
        return "page " + std::to_string(ids[i]) + " does not hold what its thread wrote";
    }
  const auto bad = std::count(ids.begin(), ids.end(), alloc::invalid_page);
  if (bad)
    return std::to_string(bad) + " threads got no page";
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end())
    return "a page was handed out twice";
  if (ids.back() >= pages)
    return "a page id past the pool";
  return "";
}

} // namespace gpuprobe::tune
