#pragma once
// The alias range a per-level probe walks (tlb-conflict, tlb-per-sm): one physical chunk at every
// 2 MiB slot, only the slots its walks touch mapped (or kept from an earlier stage), announced on
// stderr as it is made.
#include "common/device_memory.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace gpuprobe::probes {

// `bytes` of alias range on `device` for `walks`, and one line on stderr: "[PROBE] 384.00 GiB
// alias range mapped in 1.2 s" ("kept from an earlier stage" where one held it).
std::unique_ptr<device_pool> map_alias_range(const char *probe, std::uint64_t bytes,
                                             std::vector<alias_walk> walks, int device,
                                             std::uint64_t seed);

} // namespace gpuprobe::probes
