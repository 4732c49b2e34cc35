#pragma once
// Single-thread dependent pointer chase over a strided chain, timed per hop with clock64.
// Loads use ld.global.cg (cache in L2 only), so every hop needs an address translation and
// the L1 data cache never answers (the 2017 tool's chase hit L1 on Hopper).
#include "common/device_memory.hpp"
#include "common/non_copyable.hpp"

#include <cstdint>
#include <vector>

namespace gpuprobe::probes {

struct chase_stats {
  std::uint64_t stride_bytes = 0, footprint_bytes = 0, hops = 0;
  std::uint32_t samples = 0;
  double median = 0, p10 = 0, p90 = 0, mean = 0;
  int smid = -1; // SM the chasing thread ran on
};

class pointer_chase : private non_copyable {
public:
  // samples: timed hops per point (kept in shared memory, at most max_samples()).
  pointer_chase(device_pool &pool, std::uint32_t samples);
  ~pointer_chase();

  static constexpr std::uint32_t max_samples() { return 8192; }

  // Writes the chain hop h -> h+1 for every hop that fits in limit_bytes (0: the whole pool).
  void prepare_stride(std::uint64_t stride, std::uint64_t limit_bytes = 0);
  // Closes the chain after `hops` hops (last -> first), walks it once to warm the TLB and L2,
  // then times `samples` hops. Returns per-hop statistics. warm_threads > 1: that many threads
  // of the chasing block read the lap's words instead, in rising order (the L2-capacity control,
  // whose 128-byte laps are most of its time; not a TLB sweep, whose order of pages matters).
  chase_stats measure(std::uint64_t hops, unsigned warm_threads = 1);
  // The raw per-hop cycles of the last measure().
  const std::vector<std::uint32_t> &last_samples() const { return host_lat_; }

private:
  device_pool &pool_;
  std::uint32_t samples_;
  std::uint64_t stride_ = 0, max_hops_ = 0;
  std::uint32_t *d_lat_ = nullptr;
  unsigned long long *d_sink_ = nullptr;
  std::vector<std::uint32_t> host_lat_;
};

} // namespace gpuprobe::probes
