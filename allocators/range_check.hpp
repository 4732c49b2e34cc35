#pragma once
// The check that malloc tests and benchmarks apply to one launch's allocations (host-only).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpuprobe::alloc {

// Of the allocations [begin, end): those not 16-byte aligned, plus those reaching outside
// [lo, lo + bytes) (bytes 0: not checked), plus those overlapping the one before in address order.
inline std::uint64_t count_bad_ranges(std::vector<std::pair<std::uintptr_t, std::uintptr_t>> r,
                                      std::uintptr_t lo, std::uint64_t bytes) {
  std::uint64_t bad = 0;
  for (const auto &[a, b] : r) {
    bad += a % 16 != 0;
    if (bytes)
      bad += a < lo || b > lo + bytes;
  }
  std::sort(r.begin(), r.end());
  for (std::size_t i = 1; i < r.size(); ++i)
    bad += r[i].first < r[i - 1].second;
  return bad;
}

} // namespace gpuprobe::alloc
