#pragma once
// TLB sharing among SMs: victim SM i fills a level with its pages, disruptor SM k walks a
// disjoint page set, SM i re-walks its pages and is timed. One pair at a time, so no third SM
// disturbs the level being measured. k = i is the positive control (the victim evicts itself);
// a round with no disruptor is the baseline.
//
// Placement: one cooperative launch of one block per SM (each block asks for more than half of
// an SM's shared memory, so no SM can hold two, and a cooperative launch is refused unless all
// blocks are resident at once): every SM gets exactly one block, which is checked via %smid.
// Blocks wait for their turn on a flag with a %globaltimer watchdog, never forever.
#include "common/device_memory.hpp"
#include "common/non_copyable.hpp"

#include <cstdint>
#include <vector>

namespace gpuprobe::probes {

struct sharing_layout {
  std::uint64_t coverage_bytes = 0;  // stride between pages: what one entry of the level covers
  std::uint64_t victim_pages = 0;    // pages the victim walks (fit the level alone)
  std::uint64_t disruptor_pages = 0; // pages the disruptor walks (with the victim's, overflow it)
  std::uint64_t line_span = 0;       // offsets inside a page stay below this (mapped part)
  bool random_order = true;          // chains visit pages in a random order (else ascending)
  bool spread_lines = true;          // a different line offset per page (else offset 0)
};

// victim + disruptor = overfill * entries, split evenly.
sharing_layout plan_sharing(std::uint64_t coverage_bytes, std::uint64_t entries, double overfill);

struct sharing_round {
  double mean_cycles = 0, median_cycles = 0; // per hop of the victim's timed re-walk
};

class sharing_probe : private non_copyable {
public:
  // `pool` must hold (victim + disruptor) pages of layout.coverage_bytes with at least line_span
  // bytes mapped at the start of each page.
  sharing_probe(device_pool &pool, const sharing_layout &layout, std::uint64_t seed,
                double timeout_s);
  ~sharing_probe();

  // SM ids that got a block in a placement launch (all of them, or it throws naming the gap).
  const std::vector<int> &sm_ids() const { return sm_ids_; }

  // One victim against `disruptors` in order (-1: no disruptor, the baseline; the victim's own
  // id: positive control). Throws gpuprobe::error when the watchdog fired.
  std::vector<sharing_round> run_victim(int victim_sm, const std::vector<int> &disruptors);

private:
  device_pool &pool_;
  sharing_layout layout_;
  double timeout_s_;
  int sm_count_ = 0;
  std::size_t smem_bytes_ = 0;
  std::vector<int> sm_ids_;
  unsigned long long victim_start_ = 0, disruptor_start_ = 0;
  int *d_rounds_ = nullptr;
  double *d_out_ = nullptr;     // 2 per round: mean, median
  unsigned *d_state_ = nullptr; // [0] phase, [1] error code, [2] round that failed
  int *d_block_sm_ = nullptr;
};

} // namespace gpuprobe::probes
