#pragma once
// Analytical models of the RW paper (Pham et al.): steps a thread (TAS) or a warp (WAS, the mean
// over warps of the per-warp maximum) needs to get a page. Exact sums, L = min(N, 32) lanes.
#include <cstdint>

namespace gpuprobe::analysis {

// Queue (Eq. 1): N threads line up on one atomic; a random thread waits for its position.
double queue_tas(double n);
// Queue WAS (Eq. 2, exact): sum_{k=0}^{N-1} (1 - (k/N)^L). The paper's last line drops a 1.
double queue_was(double n);

}  // namespace gpuprobe::analysis
