#pragma once
// The per-SM pass of the TLB probe: every SM in turn, one thread, walks one
// cyclic list of pages of an alias range (one physical chunk at every slot: every hop's load hits
// in the L2 cache, so its cost is translation alone) and times it. One SM at a time, so no other
// SM's walk touches a TLB level the timed one shares.
//
// Placement as the sharing probe's: one cooperative launch of one block per SM (each block asks
// for more than half an SM's shared memory, so no SM holds two); the blocks take turns on a flag
// with a %globaltimer watchdog, and each records the SM it ran on.
#include "common/non_copyable.hpp"
#include <cstdint>
#include <vector>

namespace gpuprobe::probes {

struct sm_walk {
  int sm = -1;
  double cycles_per_hop = 0; // the timed hops' mean, each hop timed alone
};

class per_sm_chase : private non_copyable {
public:
  // `base`: `bytes` of range whose every page reads 0 at the offsets walked (an alias pool with
  // its chunk zeroed): each hop adds the 0 it loads to the next address, so the loads stay
  // dependent.
  per_sm_chase(const char *base, std::uint64_t bytes, double timeout_s);
  ~per_sm_chase();

  // Every SM whose id is below `sm_limit` (all where it is <= 0), in block order, walks pages
  // 0 .. pages - 1 at `page_bytes` apart: one untimed lap (the levels it fits in then hold it),
  // then `laps` timed laps, each hop timed alone. One entry per SM walked, in SM id order. Throws
  // gpuprobe::error when the watchdog fired or a launch did not reach every SM.
  std::vector<sm_walk> measure(std::uint64_t page_bytes, std::uint32_t pages, std::uint32_t laps,
                               int sm_limit = 0);
  int sm_count() const { return sm_count_; }

private:
  const char *base_;
  std::uint64_t bytes_;
  double timeout_s_;
  int sm_count_ = 0;
  std::size_t smem_bytes_ = 0;
  unsigned *d_state_ = nullptr; // [0] whose turn, [1] error, [2] block that failed
  int *d_block_sm_ = nullptr;
  double *d_cycles_ = nullptr;
};

} // namespace gpuprobe::probes
