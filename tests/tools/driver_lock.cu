// Whether the driver runs two processes' mapping calls one at a time (issue 48's node: what a
// second unit adds). `map` does the tlb probe's mapping work REPS times: GIB of alias range (one
// 2 MiB chunk at every 2 MiB slot, cuMemMap per slot), cuMemSetAccess in pieces of PIECE_MIB
// (default 2048), the range unmapped in one call, then a pause of PAUSE_MS (default 0); every call
// is timed. With a small range and a pause it is a probe of the driver's load while a neighbour
// runs (device_round.sh driver-pressure). `malloc` is other heavy driver work: cudaMalloc and
// cudaFree of GIB, again and again, for SECONDS. Two of these started together, on two GPUs or on
// one, show whether their calls wait for each other: each phase's calls per second and each
// call's latency, alone and together (scripts/device_round.sh driver-lock). Each phase prints one
// line with its start and end on the host's clock (epoch seconds), so the script can tell which
// phases ran at the same time. No node budget: 128 GiB ranges, two fit.
// Usage: gpuprobe_test_driver_lock map DEV GIB REPS [PIECE_MIB [PAUSE_MS]] | malloc DEV GIB SECONDS
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using wall = std::chrono::system_clock; // one clock for every process of the node
using clk = std::chrono::steady_clock;

double epoch() { return std::chrono::duration<double>(wall::now().time_since_epoch()).count(); }

const char *name_of(CUresult r) {
  const char *s = nullptr;
  cuGetErrorName(r, &s);
  return s ? s : "?";
}

// One phase's calls: where it began and ended, and each call's latency in microseconds.
struct phase {
  const char *name;
  double begin = epoch();
  std::vector<float> us;
  clk::time_point t;

  explicit phase(const char *n, std::size_t calls) : name(n) { us.reserve(calls); }
  void start() { t = clk::now(); }
  void stop() {
    us.push_back(float(std::chrono::duration<double, std::micro>(clk::now() - t).count()));
  }

  void print(int dev, int rep) {
    const double end = epoch();
    std::vector<float> s = us;
    std::sort(s.begin(), s.end());
    double sum = 0;
    for (float v : s)
      sum += v;
    const auto at = [&](double q) {
      return s.empty() ? 0.f : s[std::size_t(q * double(s.size() - 1))];
    };
    std::printf("dev %d rep %d %-7s calls %7zu  %.3f..%.3f  %6.2f s  busy %6.2f s  per call us: "
                "median %8.1f  p99 %8.1f  max %9.1f\n",
                dev, rep, name, s.size(), begin, end, end - begin, sum * 1e-6, double(at(0.5)),
                double(at(0.99)), s.empty() ? 0.0 : double(s.back()));
    std::fflush(stdout);
  }
};

int map_loop(int dev, std::size_t bytes, int reps, std::size_t piece, int pause_ms) {
  constexpr std::size_t slot = std::size_t(2) << 20;
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUmemGenericAllocationHandle h{};
  CUresult r = cuMemCreate(&h, slot, &prop, 0);
  if (r != CUDA_SUCCESS) {
    std::printf("dev %d: cuMemCreate: %s\n", dev, name_of(r));
    return 3;
  }
  for (int rep = 0; rep < reps; ++rep) {
    CUdeviceptr va = 0;
    if ((r = cuMemAddressReserve(&va, bytes, slot, 0, 0)) != CUDA_SUCCESS) {
      std::printf("dev %d: cuMemAddressReserve: %s\n", dev, name_of(r));
      return 3;
    }
    phase map("map", bytes / slot);
    for (std::size_t off = 0; off < bytes && r == CUDA_SUCCESS; off += slot) {
      map.start();
      r = cuMemMap(va + off, slot, 0, h, 0);
      map.stop();
    }
    map.print(dev, rep);
    phase acc("access", bytes / piece + 1);
    for (std::size_t off = 0; off < bytes && r == CUDA_SUCCESS; off += piece) {
      acc.start();
      r = cuMemSetAccess(va + off, std::min(piece, bytes - off), &access, 1);
      acc.stop();
    }
    acc.print(dev, rep);
    phase unmap("unmap", 1);
    unmap.start();
    const CUresult u = cuMemUnmap(va, bytes);
    unmap.stop();
    unmap.print(dev, rep);
    cuMemAddressFree(va, bytes);
    if (r != CUDA_SUCCESS || u != CUDA_SUCCESS) {
      std::printf("dev %d: %s / unmap %s\n", dev, name_of(r), name_of(u));
      return 4;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  cuMemRelease(h);
  return 0;
}

int malloc_loop(int dev, std::size_t bytes, double seconds) {
  const auto t0 = clk::now();
  phase m("malloc", 1024), f("free", 1024);
  int rep = 0;
  while (std::chrono::duration<double>(clk::now() - t0).count() < seconds) {
    void *p = nullptr;
    m.start();
    const cudaError_t e = cudaMalloc(&p, bytes);
    m.stop();
    if (e != cudaSuccess) {
      std::printf("dev %d: cudaMalloc: %s\n", dev, cudaGetErrorString(e));
      return 3;
    }
    f.start();
    cudaFree(p);
    f.stop();
    ++rep;
  }
  m.print(dev, rep);
  f.print(dev, rep);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const bool map = argc >= 5 && argc <= 7 && std::strcmp(argv[1], "map") == 0;
  if (!map && (argc != 5 || std::strcmp(argv[1], "malloc") != 0)) {
    std::fprintf(stderr,
                 "usage: %s map DEV GIB REPS [PIECE_MIB [PAUSE_MS]] | malloc DEV GIB SECONDS\n",
                 argv[0]);
    return 2;
  }
  const int dev = std::atoi(argv[2]);
  const std::size_t bytes = std::size_t(std::atoll(argv[3])) << 30;
  if (cudaSetDevice(dev) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "driver_lock: no context on device %d\n", dev);
    return 1;
  }
  const std::size_t piece = std::size_t(argc > 5 ? std::atoll(argv[5]) : 2048) << 20;
  if (map && (piece < (std::size_t(2) << 20) || piece % (std::size_t(2) << 20) != 0)) {
    std::fprintf(stderr, "driver_lock: PIECE_MIB must be a multiple of 2\n");
    return 2;
  }
  return map ? map_loop(dev, bytes, std::atoi(argv[4]), piece, argc > 6 ? std::atoi(argv[6]) : 0)
             : malloc_loop(dev, bytes, std::atof(argv[4]));
}
