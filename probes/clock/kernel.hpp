#pragma once
// The clock probe's kernel: every SM busy with FMAs for a while, one thread per block reading
// clock64 and %globaltimer at even intervals. Implemented in kernel.cu.
#include <vector>

namespace gpuprobe::probes {

struct clock_samples {
  int blocks = 0, per_block = 0;
  std::vector<long long> ns, cycles; // [block * per_block + k]: %globaltimer, clock64
  std::vector<int> sm;               // each block's SM (%smid)
};

// `blocks` blocks of `threads` threads (a multiple of 32, at least 64) busy for `seconds` on
// `device`, `per_block` samples each, the first at the block's start.
clock_samples sample_sm_clock(int device, int blocks, int threads, double seconds, int per_block);

} // namespace gpuprobe::probes
