#pragma once
// A tuning profile as the allocators take it at construction (`gpuprobe tune` writes it as
// tuning.json; allocators/load_tuning.hpp reads that file). A default-constructed `tuning` is the
// untuned allocator: 32-bit words, one region, CRW's per-thread start. Host-only, no dependencies.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuprobe::alloc {

// Where CRW starts a new cluster of pages (RW paper Alg. 5 is `thread`):
//   thread   each thread's next page is the one after its last; a used one sends it to a random
//   page warp     the lanes of a warp start on one random 32-page block (one bitmap word) at page
//            block + lane, and step by 32: a warp's pages stay contiguous
//   warp_vm  as warp, but a warp's walk never leaves its VM page (crossing one draws a new block)
enum class crw_start : std::uint8_t { thread = 0, warp = 1, warp_vm = 2 };
inline const char *to_string(crw_start s) {
  return s == crw_start::thread ? "thread" : s == crw_start::warp ? "warp" : "warp_vm";
}
inline crw_start parse_crw_start(const std::string &s) {
  if (s == "thread")
    return crw_start::thread;
  if (s == "warp")
    return crw_start::warp;
  if (s == "warp_vm")
    return crw_start::warp_vm;
  throw std::invalid_argument("unknown CRW start '" + s + "' (thread, warp, warp_vm)");
}

struct tuning {
  // RW-BM / CoRW bitmap word: the Word type is a template parameter, chosen with with_word().
  int word_bits = 32;
  // TLB-scoped regions: SM s draws its pages from region sm_region[s] first (the exhaustive
  // fallback still sees the whole pool). One region, or an empty map: no scoping.
  unsigned regions = 1;
  std::uint64_t max_region_bytes =
      0; // the shared TLB level's reach (0: no limit but pool / regions)
  std::uint64_t region_align_bytes =
      0; // the level's (VM) page size regions are aligned to (0: 2 MiB)
  std::vector<std::uint16_t> sm_region; // by %smid
  // CRW cluster placement, and the VM page size warp_vm keeps a walk inside.
  crw_start crw = crw_start::thread;
  std::uint64_t vm_page_bytes = 2u << 20;
  // TLB-scoped kernels (sampling, grouping): the scope of one pass in bytes (0: one pass).
  std::uint64_t tlb_scope_bytes = 0;
  std::uint64_t tlb_scope_midpoint_bytes = 0; // the level's former capacity (validate compares)
  // The GPU (UUID) whose SM groups made sm_region; "" when not recorded (bind_to_gpu).
  std::string measured_on;

  bool scoped() const { return regions > 1 && !sm_region.empty(); }
};

// SM slices (an experiment for rw_malloc, docs/rw-malloc.md): the pool cut into `slices` equal
// regions, SM s drawing its random regions from slice s % slices, so the blocks one SM hands out
// lie near each other. Not a measured TLB scope: no reach, 2 MiB alignment. slices <= 1: none.
inline tuning sm_slices(unsigned slices, unsigned sms) {
  tuning t;
  if (slices <= 1 || sms == 0)
    return t;
  t.regions = slices;
  t.sm_region.resize(sms);
  for (unsigned s = 0; s < sms; ++s)
    t.sm_region[s] = std::uint16_t(s % slices);
  return t;
}

// Calls f(Word{}) with Word = std::uint32_t or unsigned long long as t.word_bits says:
//   with_word(t, [&](auto w) { corw<decltype(w)> pool(cfg, t); ... });
template <class F> decltype(auto) with_word(const tuning &t, F &&f) {
  if (t.word_bits == 64)
    return f(0ull);
  if (t.word_bits != 32)
    throw std::invalid_argument("tuning: word_bits must be 32 or 64");
  return f(std::uint32_t{0});
}

// The regions of a pool: `regions` regions of `span` units (of unit_bytes each) from the start of
// the pool; regions == 1 means no scoping. A pool that fits the level's reach (pool <=
// max_region_bytes) is not scoped: every SM group's TLB already covers all of it, and regions
// would only crowd each group onto a slice. Otherwise a region is min(max_region_bytes, pool /
// regions) rounded down to the alignment and then to whole units; a pool too small for one
// aligned region per SM group is not scoped either.
struct region_layout {
  unsigned regions = 1;
  std::uint64_t span_units = 0;
};
inline region_layout layout_regions(const tuning &t, std::uint64_t pool_bytes,
                                    std::uint64_t unit_bytes) {
  if (!t.scoped() || unit_bytes == 0)
    return {};
  if (t.max_region_bytes && pool_bytes <= t.max_region_bytes)
    return {};
  const std::uint64_t align = t.region_align_bytes ? t.region_align_bytes : (2u << 20);
  std::uint64_t bytes = pool_bytes / t.regions;
  if (t.max_region_bytes && t.max_region_bytes < bytes)
    bytes = t.max_region_bytes;
  bytes = bytes / align * align;
  const std::uint64_t span = bytes / unit_bytes;
  if (span == 0 || span > 0xffffffffull)
    return {};
  return {t.regions, span};
}

} // namespace gpuprobe::alloc
