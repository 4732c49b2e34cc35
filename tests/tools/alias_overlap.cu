// Whether an alias range's mapping or unmapping can run beside measurements: maps GIB
// of alias range as the tlb probe does (one 2 MiB chunk at every slot), and meanwhile, or not, a
// probe chase runs in a 2 GiB cudaMalloc buffer: 48 hops of 32 MiB (past the first TLB level's
// reach, inside the second's), one thread, timed with clock64. Prints each phase's chase cycles per
// hop (median, max over launches) and launch round trips, so a background driver call that
// perturbs the GPU's translations or blocks launches shows. Modes:
//   sync     map, chase alone, unmap, chase alone (the reference)
//   unmap-bg map, then unmap in a thread while the chase runs, then the chase alone
//   map-bg   map in a thread while the chase runs, then unmap in a thread while it runs
//   exit     map and end the process without unmapping (the caller times the exit)
// Usage: gpuprobe_test_alias_overlap DEV GIB MODE
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using clk = std::chrono::steady_clock;
double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

constexpr std::size_t k_stride = std::size_t(32) << 20;
constexpr unsigned k_entries = 48;
constexpr unsigned k_hops = 4096;

__global__ void chase(const unsigned long long *buf, unsigned hops, unsigned long long *out) {
  unsigned long long p = 0;
  for (unsigned i = 0; i < 2 * k_entries; ++i) // one warm lap (twice), untimed
    p = __ldcg(buf + p);
  const long long t0 = clock64();
  for (unsigned i = 0; i < hops; ++i)
    p = __ldcg(buf + p); // L2 only (physically tagged: every hop translates); serial hops
  const long long t1 = clock64();
  out[0] = (unsigned long long)(t1 - t0);
  out[1] = p; // the chase's end is written, so the loop is kept
}

void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "alias_overlap: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct chase_probe {
  unsigned long long *buf = nullptr, *out = nullptr;
  chase_probe() {
    check(cudaMalloc(&buf, k_stride * k_entries), "cudaMalloc");
    check(cudaMalloc(&out, 2 * sizeof(unsigned long long)), "cudaMalloc");
    const std::size_t words = k_stride / sizeof(unsigned long long);
    for (unsigned i = 0; i < k_entries; ++i) {
      const unsigned long long next = ((i + 1) % k_entries) * words;
      check(cudaMemcpy(buf + i * words, &next, sizeof next, cudaMemcpyHostToDevice), "copy");
    }
  }
  // Launches the chase until `done` (or `min_s` seconds if done is null); prints one line.
  void run(const char *phase, const std::atomic<bool> *done, double min_s) {
    std::vector<double> cyc, rt;
    const auto t = clk::now();
    while (done ? !done->load() : since(t) < min_s) {
      const auto l = clk::now();
      chase<<<1, 1>>>(buf, k_hops, out);
      unsigned long long h[2];
      check(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost), "chase");
      rt.push_back(since(l) * 1e3);
      cyc.push_back(double(h[0]) / k_hops);
    }
    if (cyc.empty()) {
      std::printf("%-10s no launch\n", phase);
      return;
    }
    auto med = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::printf("%-10s %5zu launches in %.2f s: cycles/hop median %.1f max %.1f; round trip "
                "median %.3f ms max %.1f ms\n",
                phase, cyc.size(), since(t), med(cyc), *std::max_element(cyc.begin(), cyc.end()),
                med(rt), *std::max_element(rt.begin(), rt.end()));
    std::fflush(stdout);
  }
};

struct alias_range {
  CUdeviceptr va = 0;
  CUmemGenericAllocationHandle h{};
  std::size_t bytes = 0, slot = std::size_t(2) << 20;
  int dev = 0;
  void map() {
    const auto t = clk::now();
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    if (cuMemAddressReserve(&va, bytes, slot, 0, 0) != CUDA_SUCCESS ||
        cuMemCreate(&h, slot, &prop, 0) != CUDA_SUCCESS) {
      std::fprintf(stderr, "alias_overlap: reserve/create failed\n");
      std::exit(1);
    }
    for (std::size_t off = 0; off < bytes; off += slot)
      if (cuMemMap(va + off, slot, 0, h, 0) != CUDA_SUCCESS) {
        std::fprintf(stderr, "alias_overlap: cuMemMap failed at %zu\n", off);
        std::exit(1);
      }
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    const std::size_t piece = std::size_t(64) << 30;
    for (std::size_t off = 0; off < bytes; off += piece)
      if (cuMemSetAccess(va + off, std::min(piece, bytes - off), &access, 1) != CUDA_SUCCESS) {
        std::fprintf(stderr, "alias_overlap: cuMemSetAccess failed\n");
        std::exit(1);
      }
    std::printf("map        %zu GiB in %.2f s\n", bytes >> 30, since(t));
    std::fflush(stdout);
  }
  void unmap() {
    auto t = clk::now();
    const CUresult u = cuMemUnmap(va, bytes);
    const double tu = since(t);
    t = clk::now();
    const CUresult rel = cuMemRelease(h), fr = cuMemAddressFree(va, bytes);
    std::printf("unmap      cuMemUnmap %s in %.2f s, release %s and free %s in %.3f s\n",
                u == CUDA_SUCCESS ? "ok" : "FAILED", tu, rel == CUDA_SUCCESS ? "ok" : "FAILED",
                fr == CUDA_SUCCESS ? "ok" : "FAILED", since(t));
    std::fflush(stdout);
  }
};

// Runs `work` in a thread while the chase runs; the chase stops when the work ends.
template <class F> void beside_chase(chase_probe &c, int dev, const char *phase, F work) {
  std::atomic<bool> done{false};
  std::thread th([&] {
    check(cudaSetDevice(dev), "cudaSetDevice"); // the thread shares the primary context
    work();
    done = true;
  });
  c.run(phase, &done, 0);
  th.join();
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s DEV GIB sync|unmap-bg|map-bg|exit\n", argv[0]);
    return 2;
  }
  alias_range a;
  a.dev = std::atoi(argv[1]);
  a.bytes = std::size_t(std::atoll(argv[2])) << 30;
  const char *mode = argv[3];
  check(cudaSetDevice(a.dev), "cudaSetDevice");
  check(cudaFree(nullptr), "context");
  chase_probe c;
  c.run("idle", nullptr, 1.0);
  if (!std::strcmp(mode, "exit")) {
    a.map();
    std::printf("exiting with the range mapped\n");
    std::fflush(stdout);
    return 0;
  }
  if (!std::strcmp(mode, "map-bg"))
    beside_chase(c, a.dev, "map-bg", [&] { a.map(); });
  else
    a.map();
  c.run("mapped", nullptr, 1.0);
  if (!std::strcmp(mode, "sync"))
    a.unmap();
  else
    beside_chase(c, a.dev, "unmap-bg", [&] { a.unmap(); });
  c.run("after", nullptr, 1.0);
  return 0;
}
