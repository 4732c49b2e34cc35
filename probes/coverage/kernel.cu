// Coverage kernel: one thread walks a pattern of slots, the per-class sums in shared memory.
#include "common/cuda_check.cuh"
#include "common/error.hpp"
#include "probes/coverage/kernel.hpp"
#include "probes/device_util.cuh"

namespace gpuprobe::probes {

namespace {

constexpr unsigned k_max = pattern_walk::max_offsets();

struct pattern_args {
  unsigned n, period, warm_laps;
  unsigned offset[k_max];
};

__global__ void pattern_walk_kernel(const char *base, unsigned long long slot_bytes, pattern_args p,
                                    unsigned groups, unsigned laps, unsigned thr,
                                    const unsigned long long *foreign, unsigned long long *sum_out,
                                    unsigned *miss_out, unsigned long long *sink) {
  __shared__ unsigned s_off[k_max];
  __shared__ unsigned long long s_sum[k_max];
  __shared__ unsigned s_miss[k_max];
  for (unsigned j = 0; j < p.n; ++j) {
    s_off[j] = p.offset[j];
    s_sum[j] = 0;
    s_miss[j] = 0;
  }
  unsigned long long v = 0; // every touched word is 0: adding it keeps each hop dependent
  if (foreign)
    v = foreign[0]; // 0 too: the buffer's page is translated just before the walk
  for (unsigned lap = 0; lap < p.warm_laps; ++lap) // warm laps
    for (unsigned g = 0; g < groups; ++g)
      for (unsigned j = 0; j < p.n; ++j)
        v = load_cg(base, (g * 1ull * p.period + s_off[j]) * slot_bytes + v);
  for (unsigned lap = 0; lap < laps; ++lap)
    for (unsigned g = 0; g < groups; ++g)
      for (unsigned j = 0; j < p.n; ++j) {
        const unsigned long long off = (g * 1ull * p.period + s_off[j]) * slot_bytes + v;
        const unsigned long long t0 = clock_now();
        v = load_cg(base, off);
        // A shared store that needs the loaded value (0): the clock read below waits for the load.
        s_off[j] += static_cast<unsigned>(v);
        const unsigned long long t1 = clock_now();
        const unsigned dt = static_cast<unsigned>(t1 - t0);
        s_sum[j] += dt;
        s_miss[j] += dt > thr ? 1u : 0u;
      }
  for (unsigned j = 0; j < p.n; ++j) {
    sum_out[j] = s_sum[j];
    miss_out[j] = s_miss[j];
  }
  sink[1] = smid();
  if (v == ~0ull)
    sink[0] = v; // guarded sink: never true, keeps the walk alive
}

} // namespace

double walk_stats::total_misses_per_lap() const {
  double t = 0;
  for (double m : misses_per_lap)
    t += m;
  return t;
}

pattern_walk::pattern_walk() {
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_sum_, sizeof(unsigned long long) * k_max));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_miss_, sizeof(unsigned) * k_max));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_sink_, 2 * sizeof(unsigned long long)));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_foreign_, sizeof(unsigned long long)));
  GPUPROBE_CUDA_CHECK(cudaMemset(d_foreign_, 0, sizeof(unsigned long long)));
}

pattern_walk::~pattern_walk() {
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_sum_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_miss_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_sink_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_foreign_));
}

walk_stats pattern_walk::measure(const char *base, std::uint64_t slot_bytes, const walk_pattern &p,
                                 std::uint32_t groups, std::uint32_t laps, double threshold,
                                 bool foreign) {
  const auto n = unsigned(p.offsets.size());
  if (n < 1 || n > k_max || groups < 1 || laps < 1)
    throw error("pattern_walk: 1 to " + std::to_string(k_max) +
                " offsets, at least one group and one lap");
  pattern_args a{};
  a.n = n;
  a.period = p.period;
  a.warm_laps = p.warm_laps;
  for (unsigned j = 0; j < n; ++j) {
    if (p.offsets[j] >= p.period)
      throw error("pattern_walk: an offset lies outside its group");
    a.offset[j] = p.offsets[j];
  }
  const unsigned thr = threshold >= 4e9 ? ~0u : unsigned(threshold > 0 ? threshold : 0);
  pattern_walk_kernel<<<1, 1>>>(base + p.first_slot * slot_bytes, slot_bytes, a, groups, laps, thr,
                                foreign ? d_foreign_ : nullptr, d_sum_, d_miss_, d_sink_);
  GPUPROBE_CUDA_CHECK_LAUNCH();
  GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned long long> sum(n);
  std::vector<unsigned> miss(n);
  unsigned long long sink[2];
  GPUPROBE_CUDA_CHECK(cudaMemcpy(sum.data(), d_sum_, sizeof(sum[0]) * n, cudaMemcpyDeviceToHost));
  GPUPROBE_CUDA_CHECK(
      cudaMemcpy(miss.data(), d_miss_, sizeof(miss[0]) * n, cudaMemcpyDeviceToHost));
  GPUPROBE_CUDA_CHECK(cudaMemcpy(sink, d_sink_, sizeof sink, cudaMemcpyDeviceToHost));
  walk_stats s;
  s.smid = int(sink[1]);
  const double hops = double(groups) * laps;
  for (unsigned j = 0; j < n; ++j) {
    s.mean_cycles.push_back(double(sum[j]) / hops);
    s.misses_per_lap.push_back(double(miss[j]) / laps);
  }
  return s;
}

} // namespace gpuprobe::probes
