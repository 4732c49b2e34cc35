#pragma once
// Analytical models of the RW paper (Pham et al.): steps a thread (TAS) or a warp (WAS, the mean
// over warps of the per-warp maximum) needs to get a page, with T pages, A free, N threads.
// Exact sums (no ln approximation), L = min(N, 32) lanes.
#include <string>

namespace gpuprobe::analysis {

// Queue (Eq. 1): N threads line up on one atomic; a random thread waits for its position.
double queue_tas(double n);
// Queue WAS (Eq. 2, exact): sum_{k=0}^{N-1} (1 - (k/N)^L). The paper's last line drops a 1.
double queue_was(double n);

// RW TAS (Eq. 3 before its approximation): (T/N) (H_A - H_{A-N}).
double rw_tas(double pages, double free_pages, double threads);
// RW WAS bound (Eq. 4): sum_{k>=0} [1 - (1 - q^k)^L], q = (T - A + N) / T.
double rw_was_bound(double pages, double free_pages, double threads);
// RW-BM TAS (Eq. 5): (1/N) sum_{j<N} 1 / (1 - ((T - A + j)/T)^w).
double rw_bm_tas(double pages, double free_pages, double threads, int word_bits);
// RW-BM WAS bound (Eq. 6): as Eq. 4 with q^{wk}.
double rw_bm_was_bound(double pages, double free_pages, double threads, int word_bits);
// CRW TAS (Eq. 9 with the exact RW TAS) at p, the chance that the page after a thread's last page
// is used: 1 + p * TAS_RW.
double crw_tas_at(double pages, double free_pages, double threads, double next_used);
// Eq. 8's p from the free pages A and their clusters M: (M - 1) / (A + M - 1).
double crw_next_used(double free_pages, double clusters);
// CRW TAS (Eq. 9 at Eq. 8's p): 1 + (M - 1) / (A + M - 1) * TAS_RW.
double crw_tas(double pages, double free_pages, double threads, double clusters);

// Throws gpuprobe::error for values the models do not cover: non-positive T, A, N; A > T; and
// for every model but the queue N >= A (the bound diverges at N = A).
void check_model_args(const std::string &model, double pages, double free_pages, double threads);

} // namespace gpuprobe::analysis
