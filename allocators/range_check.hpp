#pragma once
// The check that malloc tests and benchmarks apply to one launch's allocations (host-only).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpuprobe::alloc {

using byte_range = std::pair<std::uintptr_t, std::uintptr_t>; // [begin, end)

// Appends [p[i], p[i] + size(i)) for every non-null p[i]; returns how many were null.
template <class P, class Size>
std::uint64_t append_ranges(std::vector<byte_range> &r, const std::vector<P *> &p, Size size) {
  std::uint64_t nulls = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i])
      r.emplace_back(reinterpret_cast<std::uintptr_t>(p[i]),
                     reinterpret_cast<std::uintptr_t>(p[i]) + size(i));
    else
      ++nulls;
  }
  return nulls;
}

// Of the allocations [begin, end): those not 16-byte aligned, plus those reaching outside
// [lo, lo + bytes) (bytes 0: not checked), plus those overlapping the one before in address order.
inline std::uint64_t count_bad_ranges(std::vector<byte_range> r, std::uintptr_t lo,
                                      std::uint64_t bytes) {
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
