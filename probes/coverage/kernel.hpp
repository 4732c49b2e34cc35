#pragma once
// The tlb-coverage probe's kernel: one thread walks groups of slots cyclically, hop i touching slot
// (i / n) * period + offset[i % n] of a slot pool, and sums each offset's ("class") latency and the
// hops past a threshold. The slots are computed in the kernel, not read from a list, and every
// sum lives in shared memory, so the walk touches no page but the pool's own (unless `foreign`
// asks it to, once, before the warm lap: the conflict walk's list read, reproduced).
#include "common/non_copyable.hpp"
#include <cstdint>
#include <vector>

namespace gpuprobe::probes {

struct walk_pattern {
  std::uint32_t period = 1;           // slots per group
  std::vector<std::uint32_t> offsets; // slots touched in each group, in walk order (< period)
  std::uint32_t warm_laps = 1;        // laps before the timed ones (a state that settles slowly)
  std::uint64_t first_slot = 0;       // the walk starts this many slots into the range
};

struct walk_stats {
  std::vector<double> mean_cycles;    // per class (offset)
  std::vector<double> misses_per_lap; // per class: hops above the threshold, per timed lap
  int smid = -1;                      // the SM the walk ran on
  double total_misses_per_lap() const;
};

class pattern_walk : private non_copyable {
public:
  pattern_walk();
  ~pattern_walk();

  static constexpr std::uint32_t max_offsets() { return 64; }

  // p.warm_laps warm laps of `groups` groups, then `laps` timed laps. `base` is a slot pool's range
  // whose touched slots read 0; `foreign`: load one word of a cudaMalloc buffer first (a page
  // outside the pool takes a TLB entry just before the walk, as the conflict probe's list read
  // does).
  walk_stats measure(const char *base, std::uint64_t slot_bytes, const walk_pattern &p,
                     std::uint32_t groups, std::uint32_t laps, double threshold_cycles,
                     bool foreign = false);

private:
  unsigned long long *d_sum_ = nullptr;
  unsigned *d_miss_ = nullptr;
  unsigned long long *d_sink_ = nullptr; // [0] guarded sink, [1] smid
  unsigned long long *d_foreign_ = nullptr;
};

} // namespace gpuprobe::probes
