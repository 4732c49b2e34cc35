#pragma once
// Random sampling over real memory (the TLB paper's §5 workload, one pass): 2^20 threads each
// read 256 random 8-byte elements of a cudaMalloc array of a given footprint. Past a TLB level's
// reach a share of the reads misses that level, so the time per read changes where the level says
// (if its penalty shows through the memory access). Implemented in kernel.cu.
#include <cstdint>
#include <vector>

namespace gpuprobe::probes {

struct sampling_times {
  std::uint64_t footprint_bytes = 0;
  std::vector<double> ms; // one launch each, interleaved with the other footprints'
};

// One array of the largest footprint; every footprint samples a prefix of it, in a rotating
// order, `reps` times after a warm-up; each footprint's sums are checked after timing (throws
// gpuprobe::error). `reads` receives the reads per launch.
std::vector<sampling_times> measure_sampling(const std::vector<std::uint64_t> &footprints, int reps,
                                             int device, double &reads);

} // namespace gpuprobe::probes
