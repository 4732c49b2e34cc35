// The list chase's kernel: one thread walks a list of alias pages held in shared memory.
#include "common/cuda_check.cuh"
#include "common/error.hpp"
#include "probes/instruments/list_chase.hpp"
#include "probes/device_util.cuh"

#include <algorithm>

namespace gpuprobe::probes {

namespace {

constexpr unsigned k_max_samples = 16384;

__global__ void list_chase_kernel(const char *base, const std::uint32_t *pages_in, unsigned n,
                                  unsigned long long page_bytes, unsigned samples,
                                  unsigned *lat_out, unsigned long long *sink) {
  extern __shared__ unsigned smem[];
  unsigned *s_pages = smem;
  unsigned *s_lat = smem + n;
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x)
    s_pages[i] = pages_in[i];
  __syncthreads();
  if (threadIdx.x != 0)
    return;
  unsigned long long v = 0; // every word of the chunk is 0: adding it keeps each hop dependent
  for (unsigned i = 0; i < n; ++i)
    v = load_cg(base, s_pages[i] * page_bytes + v); // warm lap
  const unsigned pad = (9u - n % 8u) % 8u;          // n + pad = 1 mod 8
  unsigned i = 0;
  for (unsigned k = 0; k < samples; ++k) {
    const unsigned page = s_pages[i];
    const unsigned long long off = page * page_bytes + v;
    const unsigned long long t0 = clock_now();
    v = load_cg(base, off);
    // A store that needs the loaded value (0) and is read again next lap: the clock read below
    // waits for the load, and ptxas cannot drop it as dead (a store to s_lat[k] was dropped).
    s_pages[i] = page + static_cast<unsigned>(v);
    const unsigned long long t1 = clock_now();
    s_lat[k] = static_cast<unsigned>(t1 - t0);
    i = i + 1 == n ? 0 : i + 1;
    // Each lap ends with untimed hops to the page just read (hits at every level; the order of
    // pages and what each level holds stay as they were), so many that a lap is 1 hop past a
    // multiple of 8: lap L starts on hop count L mod 8, and every position's mean takes each
    // phase alike. A hop's cost has a part periodic in the hop count (period 4 on H100, up to
    // +-5.5 cycles by the word's L2 home) that laps of a multiple of 4 hops would pin to the same
    // positions: half L1's penalty.
    if (i == 0)
      for (unsigned j = 0; j < pad; ++j)
        v = load_cg(base, s_pages[n - 1] * page_bytes + v);
  }
  for (unsigned k = 0; k < samples; ++k)
    lat_out[k] = s_lat[k];
  if (v == ~0ull)
    sink[0] = v; // guarded sink: never true, keeps the walk alive
  sink[1] = smid();
}

unsigned samples_for(unsigned n, unsigned laps) {
  return std::min(k_max_samples, std::max(2048u, laps * n));
}

} // namespace

list_chase::list_chase(device_pool &pool) : base_(pool.data()), bytes_(pool.bytes()) {
  if (pool.kind() != alloc_kind::alias)
    throw error("list_chase: needs an alias pool");
  GPUPROBE_CUDA_CHECK(cudaMemset(pool.data(), 0, pool.alias_bytes()));
  allocate();
}

list_chase::list_chase(char *base, std::uint64_t bytes) : base_(base), bytes_(bytes) { allocate(); }

void list_chase::allocate() {
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_pages_, sizeof(std::uint32_t) * max_pages()));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_lat_, sizeof(unsigned) * k_max_samples));
  GPUPROBE_CUDA_CHECK(cudaMalloc(&d_sink_, 2 * sizeof(unsigned long long)));
  GPUPROBE_CUDA_CHECK(cudaFuncSetAttribute(list_chase_kernel,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           int(sizeof(unsigned) * (max_pages() + k_max_samples))));
}

list_chase::~list_chase() {
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_pages_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_lat_));
  GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(d_sink_));
}

std::vector<double> list_chase::measure(const std::vector<std::uint32_t> &pages,
                                        std::uint64_t page_bytes, std::uint64_t offset) {
  const auto n = unsigned(pages.size());
  if (n < 1 || n > max_pages())
    throw error("list_chase: 1 to " + std::to_string(max_pages()) + " pages per walk");
  for (auto p : pages)
    if (std::uint64_t(p) * page_bytes + offset + sizeof(unsigned long long) > bytes_ ||
        offset >= page_bytes)
      throw error("list_chase: page " + std::to_string(p) + " lies beyond the pool");
  GPUPROBE_CUDA_CHECK(
      cudaMemcpy(d_pages_, pages.data(), sizeof(std::uint32_t) * n, cudaMemcpyHostToDevice));
  const unsigned samples = samples_for(n, timed_laps_);
  list_chase_kernel<<<1, 256, sizeof(unsigned) * (n + samples)>>>(
      base_ + offset, d_pages_, n, page_bytes, samples, d_lat_, d_sink_);
  GPUPROBE_CUDA_CHECK_LAUNCH();
  GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> lat(samples);
  GPUPROBE_CUDA_CHECK(
      cudaMemcpy(lat.data(), d_lat_, sizeof(unsigned) * samples, cudaMemcpyDeviceToHost));
  unsigned long long sink[2];
  GPUPROBE_CUDA_CHECK(cudaMemcpy(sink, d_sink_, sizeof(sink), cudaMemcpyDeviceToHost));
  last_smid_ = int(sink[1]);
  std::vector<double> sum(n, 0.0), cnt(n, 0.0);
  for (unsigned k = 0; k < samples; ++k) {
    sum[k % n] += lat[k];
    cnt[k % n] += 1;
  }
  for (unsigned i = 0; i < n; ++i)
    sum[i] /= cnt[i];
  return sum;
}

} // namespace gpuprobe::probes
