#pragma once
// Baseline: CUDA's device-side malloc/free of page-sized blocks. The heap limit is set to hold
// every page (plus the allocator's overhead) before any kernel calls malloc: the 8 MB default
// heap returns nullptr quickly, which measures nothing.
#include "allocators/page_pool.cuh"

namespace gpuprobe::alloc {

// The device malloc heap after asking for `bytes`: unchanged once a malloc kernel ran, and a
// driver may grant less than asked (an H100 80GB granted 16862 MiB of 32 GiB).
inline std::size_t granted_malloc_heap(std::size_t bytes) {
  std::size_t got = 0;
  cuda_or_throw(cudaDeviceGetLimit(&got, cudaLimitMallocHeapSize), "cudaDeviceGetLimit");
  if (got >= bytes)
    return got;
  if (cudaDeviceSetLimit(cudaLimitMallocHeapSize, bytes) != cudaSuccess)
    (void)cudaGetLastError();
  cuda_or_throw(cudaDeviceGetLimit(&got, cudaLimitMallocHeapSize), "cudaDeviceGetLimit");
  return got;
}
// Raises the device malloc heap to at least `bytes`. The limit can only change before the first
// kernel that calls malloc; after that, or past what the device grants, a larger request is an
// error that says so.
inline void ensure_malloc_heap(std::size_t bytes) {
  const std::size_t got = granted_malloc_heap(bytes);
  if (got < bytes)
    throw std::runtime_error("device malloc heap is " + std::to_string(got >> 20) + " MiB, " +
                             std::to_string(bytes >> 20) +
                             " MiB needed (fixed once a malloc kernel ran: run this case in its "
                             "own process; or more than this device grants)");
}

struct cuda_malloc_handle {
  static constexpr const char *name = "cuda_malloc";
  std::uint32_t page_bytes;
  template <class Steps> __device__ char *get_page(Steps &st) const {
    st.add();
    return static_cast<char *>(malloc(page_bytes));
  }
  __device__ char *get_page() const { return static_cast<char *>(malloc(page_bytes)); }
  __device__ void free_page(char *p) const { free(p); }
  // malloc-style interface (BM_malloc): any size.
  __device__ void *malloc(std::size_t bytes) const { return ::malloc(bytes); }
  __device__ void free(void *p) const { ::free(p); }
};

class cuda_malloc {
public:
  using handle_type = cuda_malloc_handle;
  // heap_factor: heap bytes per page byte requested (the allocator needs headroom).
  explicit cuda_malloc(const pool_config &c = {}, double heap_factor = 1.5) : cfg_(c) {
    ensure_malloc_heap(static_cast<std::size_t>(double(c.pages) * c.page_bytes * heap_factor));
  }
  handle_type handle() const { return {cfg_.page_bytes}; }
  const pool_config &config() const { return cfg_; }

private:
  pool_config cfg_;
};

} // namespace gpuprobe::alloc
