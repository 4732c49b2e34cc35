#pragma once
// Baseline: CUDA's device-side malloc/free of page-sized blocks. The heap limit is set to hold
// every page (plus the allocator's overhead) before any kernel calls malloc: the 8 MB default
// heap returns nullptr quickly, which measures nothing.
#include "allocators/page_pool.cuh"

namespace gpuprobe::alloc {

struct cuda_malloc_handle {
  std::uint32_t page_bytes;
  template <class Steps>
  __device__ char* get_page(Steps& st) const {
    st.add();
    return static_cast<char*>(malloc(page_bytes));
  }
  __device__ char* get_page() const { return static_cast<char*>(malloc(page_bytes)); }
  __device__ void free_page(char* p) const { free(p); }
};

class cuda_malloc {
 public:
  using handle_type = cuda_malloc_handle;
  // heap_factor: heap bytes per page byte requested (the allocator needs headroom).
  explicit cuda_malloc(const pool_config& c = {}, double heap_factor = 1.5) : cfg_(c) {
    const auto bytes = static_cast<std::size_t>(double(c.pages) * c.page_bytes * heap_factor);
    cuda_or_throw(cudaDeviceSetLimit(cudaLimitMallocHeapSize, bytes), "cudaDeviceSetLimit(MallocHeapSize)");
    std::size_t got = 0;
    cuda_or_throw(cudaDeviceGetLimit(&got, cudaLimitMallocHeapSize), "cudaDeviceGetLimit");
    if (got < bytes) throw std::runtime_error("cuda_malloc: the heap limit did not take (a malloc kernel ran before?)");
  }
  handle_type handle() const { return {cfg_.page_bytes}; }
  const pool_config& config() const { return cfg_; }

 private:
  pool_config cfg_;
};

}  // namespace gpuprobe::alloc
