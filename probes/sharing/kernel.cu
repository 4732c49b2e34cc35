// TLB sharing probe kernel: one cooperative block per SM; lane 0 of the victim's and the
// disruptor's blocks walk 64-bit offset chains with L2-only loads, in turns set by a flag.
#include "common/cuda_check.cuh"
#include "probes/device_util.cuh"
#include "probes/sharing/kernel.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <string>

namespace gpuprobe::probes {

namespace {

constexpr unsigned k_bins = 2048;    // per-hop latency histogram for the median
constexpr unsigned k_bin_cycles = 4; // 4-cycle bins up to 8192 cycles

struct sharing_args {
  const char *base;
  unsigned long long victim_start, disruptor_start, victim_hops, disruptor_hops;
  int victim_sm;
  const int *rounds; // disruptor SM per round; -1: none
  int n_rounds;
  unsigned *state; // [0] phase, [1] error (1 = watchdog), [2] round that failed
  double *out;     // mean, median per round
  int *block_sm;
  unsigned long long timeout_ns;
};

__device__ unsigned long long walk(const char *base, unsigned long long off,
                                   unsigned long long hops) {
  for (unsigned long long h = 0; h < hops; ++h)
    off = load_cg(base, off);
  return off;
}

__global__ void sharing_kernel(sharing_args a) {
  extern __shared__ unsigned s_hist[]; // sized past half an SM's shared memory: one block per SM
  volatile unsigned *s_scratch = &s_hist[k_bins];
  if (threadIdx.x != 0)
    return;
  const unsigned long long deadline = globaltimer_ns() + a.timeout_ns;
  const int sm = int(smid());
  a.block_sm[blockIdx.x] = sm;
  // Every walk's end offset is folded into `acc`, which reaches a guarded store: a walk whose
  // result is dead is deleted by the compiler, asm volatile or not (seen on sm_90: the victim's
  // own disruptor walk vanished and the positive control never rose).
  unsigned long long acc = 0;
  if (sm != a.victim_sm) { // a disruptor: at most one round per launch
    for (int r = 0; r < a.n_rounds; ++r) {
      if (a.rounds[r] != sm)
        continue;
      if (!wait_for_phase(a.state, 2u * r + 1, deadline, r))
        return;
      acc ^= walk(a.base, a.disruptor_start, a.disruptor_hops);
      __threadfence();
      atomicExch(&a.state[0], 2u * r + 2);
    }
    if (acc == ~0ull)
      a.out[0] = 0; // guarded sink: offsets are < 2^63, never true
    return;
  }
  for (int r = 0; r < a.n_rounds; ++r) {
    // Fill the level with the victim's pages: once, before the first round; after that the
    // previous round's timed walk, which touches every victim page in the same order, did it.
    if (r == 0)
      acc ^= walk(a.base, a.victim_start, a.victim_hops);
    const int d = a.rounds[r];
    if (d == sm) {
      acc ^= walk(a.base, a.disruptor_start, a.disruptor_hops); // positive control
    } else if (d >= 0) {
      __threadfence();
      atomicExch(&a.state[0], 2u * r + 1);
      if (!wait_for_phase(a.state, 2u * r + 2, deadline, r))
        return;
    } else {
      atomicExch(&a.state[0], 2u * r + 2); // baseline: no disruptor
    }
    for (unsigned b = 0; b < k_bins; ++b)
      s_hist[b] = 0;
    unsigned long long total = 0, off = a.victim_start;
    for (unsigned long long h = 0; h < a.victim_hops; ++h) {
      const unsigned long long t0 = clock_now();
      off = load_cg(a.base, off);
      *s_scratch = unsigned(off); // a store that needs the loaded value: t1 waits for the load
      const unsigned long long dt = clock_now() - t0;
      total += dt;
      ++s_hist[dt / k_bin_cycles < k_bins ? dt / k_bin_cycles : k_bins - 1];
    }
    acc ^= off;
    unsigned long long seen = 0, mid = 0;
    for (unsigned b = 0; b < k_bins; ++b) {
      seen += s_hist[b];
      if (2 * seen >= a.victim_hops) {
        mid = b;
        break;
      }
    }
    a.out[2 * r] = double(total) / double(a.victim_hops);
    a.out[2 * r + 1] = (double(mid) + 0.5) * k_bin_cycles;
  }
  if (acc == ~0ull)
    a.out[0] = 0; // guarded sink
}

__global__ void chain_from_offsets_kernel(char *base, const unsigned long long *offs,
                                          unsigned long long n) {
  for (unsigned long long j = blockIdx.x * 1ull * blockDim.x + threadIdx.x; j < n;
       j += 1ull * gridDim.x * blockDim.x)
    *reinterpret_cast<unsigned long long *>(base + offs[j]) = offs[(j + 1) % n];
}

} // namespace

sharing_probe::sharing_probe(device_pool &pool, const sharing_layout &layout, std::uint64_t seed,
                             double timeout_s)
    : pool_(pool), layout_(layout), timeout_s_(timeout_s) {
  const std::uint64_t pages = layout.victim_pages + layout.disruptor_pages;
  if (pages * layout.coverage_bytes > pool.bytes())
    throw error("tlb-sharing: pool smaller than the pages to walk");
  if (layout.line_span < 128)
    throw error("tlb-sharing: less than one line mapped per page");
  int dev = 0;
  GPUPROBE_CUDA_CHECK(cudaGetDevice(&dev));
  GPUPROBE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, dev));
  smem_bytes_ = one_block_per_sm_shared_bytes((k_bins + 1) * sizeof(unsigned), "tlb-sharing");
  GPUPROBE_CUDA_CHECK(cudaFuncSetAttribute(
      sharing_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes_)));

  // Page j lives at j * page + a line offset that differs per page (spreads L2 sets), inside
  // the mapped part of the page. Victims: pages [0, V); disruptors: [V, V + D); each chain in a
  // random order so no prefetcher can follow it.
  auto offset_of = [&](std::uint64_t j) {
    return j * layout.coverage_bytes +
           (layout.spread_lines ? ((j * 33 * 128) % layout.line_span) / 128 * 128 : 0);
  };
  std::mt19937_64 rng(seed);
  auto build = [&](std::uint64_t first, std::uint64_t n) {
    std::vector<unsigned long long> offs(n);
    for (std::uint64_t j = 0; j < n; ++j)
      offs[j] = offset_of(first + j);
    if (layout.random_order)
      std::shuffle(offs.begin(), offs.end(), rng);
    unsigned long long *d = nullptr;
    GPUPROBE_CUDA_CHECK(cudaMalloc(&d, n * sizeof(unsigned long long)));
    GPUPROBE_CUDA_CHECK(
        cudaMemcpy(d, offs.data(), n * sizeof(unsigned long long), cudaMemcpyHostToDevice));
    chain_from_offsets_kernel<<<256, 256>>>(pool.data(), d, n);
    GPUPROBE_CUDA_CHECK_LAUNCH();
    GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
    GPUPROBE_CUDA_CHECK(cudaFree(d));
    return offs.front();
  };
  victim_start_ = build(0, layout.victim_pages);
  disruptor_start_ = build(layout.victim_pages, layout.disruptor_pages);

  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_state_, 4 * sizeof(unsigned)));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_block_sm_, sizeof(int) * std::size_t(sm_count_)));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_rounds_, sizeof(int) * std::size_t(2 * sm_count_ + 2)));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_out_, sizeof(double) * std::size_t(2 * (2 * sm_count_ + 2))));

  // Placement launch with no rounds: which SMs get a block?
  run_victim(-2, {});
  std::set<int> seen(sm_ids_.begin(), sm_ids_.end());
  if (int(seen.size()) != sm_count_)
    throw error("tlb-sharing: a cooperative launch of " + std::to_string(sm_count_) +
                " blocks reached only " + std::to_string(seen.size()) +
                " distinct SMs; refusing to leave cells stale");
}

sharing_probe::~sharing_probe() {
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_state_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_block_sm_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_rounds_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_out_));
}

std::vector<sharing_round> sharing_probe::run_victim(int victim_sm,
                                                     const std::vector<int> &disruptors) {
  if (disruptors.size() > std::size_t(2 * sm_count_ + 2))
    throw error("tlb-sharing: too many rounds in one launch");
  GPUPROBE_CUDA_CHECK(cudaMemset(d_state_, 0, 4 * sizeof(unsigned)));
  GPUPROBE_CUDA_CHECK(cudaMemset(d_block_sm_, 0xff, sizeof(int) * std::size_t(sm_count_)));
  if (!disruptors.empty())
    GPUPROBE_CUDA_CHECK(cudaMemcpy(d_rounds_, disruptors.data(), sizeof(int) * disruptors.size(),
                                   cudaMemcpyHostToDevice));
  sharing_args a{};
  a.base = pool_.data();
  a.victim_start = victim_start_;
  a.disruptor_start = disruptor_start_;
  a.victim_hops = layout_.victim_pages;
  a.disruptor_hops = layout_.disruptor_pages;
  a.victim_sm = victim_sm;
  a.rounds = d_rounds_;
  a.n_rounds = int(disruptors.size());
  a.state = d_state_;
  a.out = d_out_;
  a.block_sm = d_block_sm_;
  a.timeout_ns = static_cast<unsigned long long>(timeout_s_ * 1e9);
  unsigned state[4];
  launch_one_block_per_sm(reinterpret_cast<const void *>(sharing_kernel), &a, sm_count_,
                          smem_bytes_, d_state_, state);
  sm_ids_.assign(std::size_t(sm_count_), -1);
  GPUPROBE_CUDA_CHECK(cudaMemcpy(sm_ids_.data(), d_block_sm_, sizeof(int) * std::size_t(sm_count_),
                                 cudaMemcpyDeviceToHost));
  std::sort(sm_ids_.begin(), sm_ids_.end());
  if (victim_sm >= 0 && !std::binary_search(sm_ids_.begin(), sm_ids_.end(), victim_sm))
    throw error("tlb-sharing: SM " + std::to_string(victim_sm) + " got no block in this launch");
  if (state[1]) {
    const int r = int(state[2]);
    const int d = r >= 0 && r < int(disruptors.size()) ? disruptors[std::size_t(r)] : -1;
    throw error("tlb-sharing: watchdog: victim SM " + std::to_string(victim_sm) + ", round " +
                std::to_string(r) + " (disruptor SM " + std::to_string(d) +
                ") did not finish within " + std::to_string(timeout_s_) + " s");
  }
  std::vector<double> out(2 * disruptors.size());
  if (!out.empty())
    GPUPROBE_CUDA_CHECK(
        cudaMemcpy(out.data(), d_out_, sizeof(double) * out.size(), cudaMemcpyDeviceToHost));
  std::vector<sharing_round> rounds(disruptors.size());
  for (std::size_t r = 0; r < rounds.size(); ++r)
    rounds[r] = {out[2 * r], out[2 * r + 1]};
  return rounds;
}

} // namespace gpuprobe::probes
