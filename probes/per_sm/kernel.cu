// Per-SM pass kernel: one block per SM, lane 0 of each walks the list in its turn.
#include "common/cuda_check.cuh"
#include "probes/device_util.cuh"
#include "probes/per_sm/kernel.hpp"

#include <algorithm>
#include <set>

namespace gpuprobe::probes {

namespace {

struct per_sm_args {
  const char *base;
  unsigned long long page_bytes;
  unsigned pages, laps;
  int sm_limit; // <= 0: every SM walks
  unsigned *state;
  int *block_sm;
  double *cycles; // per block; -1 where the block's SM did not walk
  unsigned long long timeout_ns;
};

__global__ void per_sm_kernel(per_sm_args a) {
  extern __shared__ unsigned s_pad[]; // sized past half an SM's shared memory: one block per SM
  volatile unsigned *s_scratch = s_pad;
  if (threadIdx.x != 0)
    return;
  const unsigned long long deadline = globaltimer_ns() + a.timeout_ns;
  const int sm = int(smid());
  a.block_sm[blockIdx.x] = sm;
  a.cycles[blockIdx.x] = -1;
  if (!wait_for_phase(a.state, blockIdx.x, deadline, int(blockIdx.x)))
    return;
  if (a.sm_limit <= 0 || sm < a.sm_limit) {
    unsigned long long v = 0; // every word walked is 0: adding it keeps each hop dependent
    for (unsigned i = 0; i < a.pages; ++i)
      v = load_cg(a.base, i * a.page_bytes + v); // untimed lap
    // Each hop timed alone, as the tlb probe times its hops (a clock read, the load, a store that
    // needs the loaded value so the second read waits for it): the level's penalty is then the
    // sweep's. A lap timed whole gave L1 half of it (+5.1 cycles against +10 on every SM of
    // an H100; L2 and L3 the same either way): where the rest goes back to back is not resolved.
    unsigned long long total = 0;
    for (unsigned l = 0; l < a.laps; ++l)
      for (unsigned i = 0; i < a.pages; ++i) {
        const unsigned long long t0 = clock_now();
        v = load_cg(a.base, i * a.page_bytes + v);
        *s_scratch = unsigned(v);
        total += clock_now() - t0;
      }
    a.cycles[blockIdx.x] = double(total) / (double(a.laps) * double(a.pages));
    if (v == ~0ull)
      a.cycles[0] = 0; // guarded sink: the words are 0, never true; keeps the walk alive
  }
  __threadfence();
  atomicExch(&a.state[0], blockIdx.x + 1); // the next block's turn
}

} // namespace

per_sm_chase::per_sm_chase(const char *base, std::uint64_t bytes, double timeout_s)
    : base_(base), bytes_(bytes), timeout_s_(timeout_s) {
  int dev = 0;
  GPUPROBE_CUDA_CHECK(cudaGetDevice(&dev));
  GPUPROBE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, dev));
  smem_bytes_ = one_block_per_sm_shared_bytes(sizeof(unsigned), "tlb-per-sm");
  GPUPROBE_CUDA_CHECK(cudaFuncSetAttribute(
      per_sm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes_)));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_state_, 4 * sizeof(unsigned)));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_block_sm_, sizeof(int) * std::size_t(sm_count_)));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_cycles_, sizeof(double) * std::size_t(sm_count_)));
}

per_sm_chase::~per_sm_chase() {
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_state_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_block_sm_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_cycles_));
}

std::vector<sm_walk> per_sm_chase::measure(std::uint64_t page_bytes, std::uint32_t pages,
                                           std::uint32_t laps, int sm_limit) {
  if (pages < 1 || laps < 1)
    throw error("tlb-per-sm: a walk needs at least one page and one lap");
  if (std::uint64_t(pages - 1) * page_bytes + sizeof(unsigned long long) > bytes_)
    throw error("tlb-per-sm: " + std::to_string(pages) + " pages of " + std::to_string(page_bytes) +
                " bytes run past the range");
  GPUPROBE_CUDA_CHECK(cudaMemset(d_state_, 0, 4 * sizeof(unsigned)));
  per_sm_args a{};
  a.base = base_;
  a.page_bytes = page_bytes;
  a.pages = pages;
  a.laps = laps;
  a.sm_limit = sm_limit;
  a.state = d_state_;
  a.block_sm = d_block_sm_;
  a.cycles = d_cycles_;
  a.timeout_ns = static_cast<unsigned long long>(timeout_s_ * 1e9);
  unsigned state[4];
  launch_one_block_per_sm(reinterpret_cast<const void *>(per_sm_kernel), &a, sm_count_, smem_bytes_,
                          d_state_, state);
  if (state[1])
    throw error("tlb-per-sm: watchdog: block " + std::to_string(state[2]) +
                " did not get its turn within " + std::to_string(timeout_s_) + " s");
  std::vector<int> sms(std::size_t(sm_count_), -1);
  std::vector<double> cycles(std::size_t(sm_count_), -1);
  GPUPROBE_CUDA_CHECK(
      cudaMemcpy(sms.data(), d_block_sm_, sizeof(int) * sms.size(), cudaMemcpyDeviceToHost));
  GPUPROBE_CUDA_CHECK(
      cudaMemcpy(cycles.data(), d_cycles_, sizeof(double) * cycles.size(), cudaMemcpyDeviceToHost));
  const std::set<int> seen(sms.begin(), sms.end());
  if (int(seen.size()) != sm_count_ || *seen.begin() < 0)
    throw error("tlb-per-sm: a cooperative launch of " + std::to_string(sm_count_) +
                " blocks reached only " + std::to_string(seen.size()) + " distinct SMs");
  std::vector<sm_walk> out;
  for (std::size_t b = 0; b < sms.size(); ++b)
    if (cycles[b] >= 0)
      out.push_back({sms[b], cycles[b]});
  std::sort(out.begin(), out.end(), [](const sm_walk &x, const sm_walk &y) { return x.sm < y.sm; });
  return out;
}

} // namespace gpuprobe::probes
