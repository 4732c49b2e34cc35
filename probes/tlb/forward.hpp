#pragma once
// The forward model of a translation level under the tlb probe's cyclic chase: which share of hops
// miss a level of ways x sets entries, each covering `coverage_bytes`, with LRU or random
// replacement and a set index of the tag's low bits (modulo) or of those XOR the next ones. The
// simulated family (simulate.hpp) draws its sweeps from it and the analyzer's whole-sweep fit
// (synthesis.hpp) predicts every stride's curve with it: one model, so what the family scores is
// what the analyzer assumes. Host-only.
#include <cstdint>

namespace gpuprobe::probes::tlb {

enum class replacement { lru, random };

struct cache_level {
  std::uint64_t sets = 1, ways = 16;
  std::uint64_t coverage_bytes = 2ull << 20; // what one entry covers
  double penalty_cycles = 50;
  replacement repl = replacement::lru;
  bool xor_index = false; // set = (tag ^ tag >> log2 sets) mod sets, else tag mod sets
  // An entry filled in sectors of this many bytes (0: whole): a hop to a sector not yet filled
  // misses although its entry's tag is present; with the tag evicted, every sector misses.
  std::uint64_t sector_bytes = 0;
  std::uint64_t entries() const { return sets * ways; }
  double reach_bytes() const { return double(entries()) * double(coverage_bytes); }
};

// "lru" or "random"; a level's set index: "fully associative" (one set), "xor" or "modulo".
const char *replacement_name(replacement r);
const char *index_name(const cache_level &L);

// The share of hops of a cyclic chase (`hops` hops `stride` bytes apart, a lap repeated) that
// miss `L`: with a stride below the coverage only a tag's (or a sector's) first hop can miss; a set holding more
// tags than ways misses every visit under LRU, and under random replacement the fixed point of
// h = (1 - 1/W)^((n - 1)(1 - h)).
double miss_share(const cache_level &L, std::uint64_t stride, std::uint64_t hops);

// The tags a cyclic chase at `stride` touches when `L` first misses (by miss_share), searched up
// to 64 x its entries; 0 where it never misses there.
std::uint64_t first_miss_tags(const cache_level &L, std::uint64_t stride);

} // namespace gpuprobe::probes::tlb
