#pragma once
// TLB-scoped pool regions on the device: the calling SM's region, from its %smid and the map the
// tuning profile gives (allocators/tuning.hpp). Unscoped (map == nullptr): the whole pool.
#include "allocators/common.cuh"
#include "allocators/tuning.hpp"

namespace gpuprobe::alloc {

struct region_view {
  const std::uint16_t *sm_region = nullptr; // nullptr: not scoped
  std::uint32_t map_size = 0;
  std::uint32_t regions = 1;
  std::uint32_t span = 0; // units per region

  // [lo, lo + n) of the caller's region among `total` units (the whole range when unscoped).
  __device__ void range(std::uint32_t total, std::uint32_t &lo, std::uint32_t &n) const {
    if (!sm_region) {
      lo = 0, n = total;
      return;
    }
    const unsigned sm = detail::sm_id();
    const std::uint32_t r = sm < map_size ? sm_region[sm] : sm % regions;
    lo = r * span, n = span;
  }
};

// Host owner of the SM -> region map of one pool.
class region_map {
public:
  region_map() = default;
  region_map(const tuning &t, std::uint64_t pool_bytes, std::uint64_t unit_bytes)
      : layout_(layout_regions(t, pool_bytes, unit_bytes)) {
    if (layout_.regions <= 1)
      return;
    for (auto r : t.sm_region)
      if (r >= layout_.regions)
        throw std::invalid_argument("tuning: sm_region names a region past `regions`");
    map_ = device_array<std::uint16_t>(t.sm_region.size());
    map_.upload(t.sm_region.data(), t.sm_region.size());
  }
  region_view view() const {
    if (layout_.regions <= 1)
      return {};
    return {map_.get(), std::uint32_t(map_.size()), layout_.regions,
            std::uint32_t(layout_.span_units)};
  }
  const region_layout &layout() const { return layout_; }

private:
  region_layout layout_;
  device_array<std::uint16_t> map_;
};

} // namespace gpuprobe::alloc
