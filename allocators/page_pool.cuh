#pragma once
// The pages themselves: T pages of `page_bytes` each (0: ids only), on the device: cudaMalloc'd
// and owned, or the caller's memory (`memory`, e.g. a VMM range), which must outlive the pool.
#include "allocators/common.cuh"

namespace gpuprobe::alloc {

struct pool_config {
  page_t pages = 1u << 23;
  std::uint32_t page_bytes = 256;
  unsigned long long seed = 1;
  unsigned max_random_steps = 1u << 16; // then a linear scan decides "out of pages" exactly
  char *memory = nullptr;               // pages * page_bytes bytes of the caller's (not owned)
};

class page_pool {
public:
  explicit page_pool(const pool_config &c)
      : cfg_(c), data_(c.memory ? 0 : std::size_t(c.pages) * c.page_bytes) {
    if (c.pages == 0 || c.pages == invalid_page)
      throw std::invalid_argument("page_pool: pages must be in [1, 2^32 - 1)");
  }
  const pool_config &config() const { return cfg_; }
  char *data() const { return cfg_.memory ? cfg_.memory : data_.get(); }

private:
  pool_config cfg_;
  device_array<char> data_;
};

// Device view of the pages (part of every handle).
struct pages_view {
  char *data;
  std::uint32_t page_bytes;
  __device__ char *page_ptr(page_t p) const { return data + std::size_t(p) * page_bytes; }
};

} // namespace gpuprobe::alloc
