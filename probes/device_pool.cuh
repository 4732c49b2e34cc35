#pragma once
// Device memory for the probes, in three flavours (`--alloc`):
//   cudamalloc  one cudaMalloc; the driver chooses the page size (and may coalesce pages).
//   vmm         CUDA VMM: physical chunks of the driver's minimum granularity mapped at shuffled
//               virtual positions, so no two virtually adjacent chunks are physically adjacent
//               and large-page coalescing cannot hide TLB misses.
//   managed     cudaMallocManaged, advised to and prefetched onto the device.
// The driver API is reached through cudaGetDriverEntryPointByVersion, so the binary does not
// link libcuda and loads on machines without a driver.
#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::probes {

enum class alloc_kind { cudamalloc, vmm, managed };
alloc_kind parse_alloc_kind(const std::string& s);  // throws gpuprobe::error
const char* to_string(alloc_kind k);

class device_pool {
 public:
  device_pool(alloc_kind kind, std::size_t bytes, int device, std::uint64_t seed);
  ~device_pool();
  device_pool(const device_pool&) = delete;
  device_pool& operator=(const device_pool&) = delete;

  char* data() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  alloc_kind kind() const { return kind_; }
  // Physical granularity the pool was built from; 0 when the driver decides (unknown).
  std::size_t granularity() const { return granularity_; }

  // The VMM minimum granularity of `device` (0 if the driver API is unavailable).
  static std::size_t vmm_granularity(int device);

 private:
  alloc_kind kind_;
  std::size_t bytes_ = 0;
  std::size_t granularity_ = 0;
  char* ptr_ = nullptr;
  std::vector<unsigned long long> handles_;  // vmm physical chunks
};

}  // namespace gpuprobe::probes
