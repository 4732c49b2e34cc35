// Whether the driver runs two processes' mapping calls one at a time (issue 48's node: what a
// second unit adds). `map` does the tlb probe's mapping work REPS times: GIB of alias range (one
// 2 MiB chunk at every 2 MiB slot, cuMemMap per slot), cuMemSetAccess in pieces of PIECE_MIB
// (default 2048), the range unmapped in one call, then a pause of PAUSE_MS (default 0); every call
// is timed. With a small range and a pause it is a probe of the driver's load while a neighbour
// runs (device_round.sh driver-pressure). `malloc` is other heavy driver work: cudaMalloc and
// cudaFree of GIB, again and again, for SECONDS. Two of these started together, on two GPUs or on
// one, show whether their calls wait for each other: each phase's calls per second and each
// call's latency, alone and together (dev/device_round.sh driver-lock). Each phase prints one
// line with its start and end on the host's clock (epoch seconds), so the script can tell which
// phases ran at the same time. No node budget: 128 GiB ranges, two fit.
// `ctx` makes the device's context REPS times (cudaFree(0) and a kernel's attributes, which load
// the module), each followed by cudaDeviceReset and a pause: what a unit's stage start costs
// (issue 48's node: a start took 1.3-1.8 s beside a neighbour, 0.1-0.25 s alone). `chase` keeps
// the whole GPU busy for SECONDS with a load-chase over GIB of memory: a cudaMalloc buffer, or
// (`chase-alias`) an alias range mapped as `map` does and held while the kernels run, as a unit's
// sweep and sharing stages hold theirs.
// `nvml` asks NVML (libnvidia-ml, opened at run time) for the compute processes of the GPU UUID
// REPS times, PAUSE_MS apart, after one nvmlInit: what characterize's busy check costs without
// starting nvidia-smi (which initialises NVML on every GPU each time).
// Usage: gpuprobe_test_driver_lock map DEV GIB REPS [PIECE_MIB [PAUSE_MS]] | malloc DEV GIB SECONDS
//        | ctx DEV REPS PAUSE_MS | chase DEV GIB SECONDS | chase-alias DEV GIB SECONDS
//        | nvml UUID REPS PAUSE_MS
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

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

constexpr std::size_t k_slot = std::size_t(2) << 20; // an alias range's slot and its chunk: 2 MiB

// A 2 MiB chunk's properties on device `dev`, and read-write access to it from that device.
CUmemAllocationProp chunk_prop(int dev) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
  return prop;
}

CUmemAccessDesc read_write(int dev) {
  CUmemAccessDesc access{};
  access.location = chunk_prop(dev).location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return access;
}

int map_loop(int dev, std::size_t bytes, int reps, std::size_t piece, int pause_ms) {
  const CUmemAllocationProp prop = chunk_prop(dev);
  const CUmemAccessDesc access = read_write(dev);
  CUmemGenericAllocationHandle h{};
  CUresult r = cuMemCreate(&h, k_slot, &prop, 0);
  if (r != CUDA_SUCCESS) {
    std::printf("dev %d: cuMemCreate: %s\n", dev, name_of(r));
    return 3;
  }
  for (int rep = 0; rep < reps; ++rep) {
    CUdeviceptr va = 0;
    if ((r = cuMemAddressReserve(&va, bytes, k_slot, 0, 0)) != CUDA_SUCCESS) {
      std::printf("dev %d: cuMemAddressReserve: %s\n", dev, name_of(r));
      return 3;
    }
    phase map("map", bytes / k_slot);
    for (std::size_t off = 0; off < bytes && r == CUDA_SUCCESS; off += k_slot) {
      map.start();
      r = cuMemMap(va + off, k_slot, 0, h, 0);
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

__global__ void image_probe(int *out) { *out = 1; } // exists only to be loaded by ctx_loop

int ctx_loop(int dev, int reps, int pause_ms) {
  for (int rep = 0; rep < reps; ++rep) {
    phase ctx("ctx", 1), reset("reset", 1);
    ctx.start();
    cudaFuncAttributes fa{};
    const cudaError_t e = cudaSetDevice(dev) == cudaSuccess && cudaFree(nullptr) == cudaSuccess
                              ? cudaFuncGetAttributes(&fa, image_probe)
                              : cudaErrorInitializationError;
    ctx.stop();
    if (e != cudaSuccess) {
      std::printf("dev %d: context: %s\n", dev, cudaGetErrorString(e));
      return 3;
    }
    ctx.print(dev, rep);
    reset.start();
    cudaDeviceReset(); // this process's primary context only (not a GPU reset)
    reset.stop();
    reset.print(dev, rep);
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  return 0;
}

// Every thread loads from a pseudo-random 2 MiB slot of [base, base + bytes), ROUNDS times: a
// translation miss at most loads, as in the sweep's and sharing stages' chases.
__global__ void chase_kernel(const unsigned *base, unsigned long long slots, int rounds,
                             unsigned *sink) {
  unsigned long long h = 0x9e3779b97f4a7c15ull * (blockIdx.x * blockDim.x + threadIdx.x + 1);
  unsigned acc = 0;
  for (int r = 0; r < rounds; ++r) {
    h ^= h << 13, h ^= h >> 7, h ^= h << 17;
    acc += base[(h % slots) * (k_slot / sizeof(unsigned)) + (threadIdx.x & 31)];
  }
  if (acc == 0x12345678u)
    *sink = acc; // a store the compiler cannot prove dead: the loads are kept
}

// cudaMalloc'ed memory (alias false) or an alias range (one 2 MiB chunk at every slot) chased by
// the whole GPU in kernels back to back for SECONDS (on an H200, r146: 62 ms a kernel over an
// 8 GiB alias range, 5 ms over 8 GiB of cudaMalloc'ed memory).
int chase_loop(int dev, std::size_t bytes, double seconds, bool alias) {
  unsigned *sink = nullptr, *buf = nullptr;
  CUdeviceptr va = 0;
  CUmemGenericAllocationHandle h{};
  if (cudaMalloc(&sink, sizeof(unsigned)) != cudaSuccess)
    return 3;
  phase made("chase-mem", 1);
  made.start();
  if (!alias) {
    if (cudaMalloc(&buf, bytes) != cudaSuccess || cudaMemset(buf, 0, bytes) != cudaSuccess) {
      std::printf("dev %d: cudaMalloc of %zu GiB failed\n", dev, bytes >> 30);
      return 3;
    }
  } else {
    const CUmemAllocationProp prop = chunk_prop(dev);
    const CUmemAccessDesc access = read_write(dev);
    CUresult r = cuMemCreate(&h, k_slot, &prop, 0);
    if (r == CUDA_SUCCESS)
      r = cuMemAddressReserve(&va, bytes, k_slot, 0, 0);
    for (std::size_t off = 0; off < bytes && r == CUDA_SUCCESS; off += k_slot)
      r = cuMemMap(va + off, k_slot, 0, h, 0);
    if (r == CUDA_SUCCESS)
      r = cuMemSetAccess(va, bytes, &access, 1);
    if (r != CUDA_SUCCESS) {
      std::printf("dev %d: alias range: %s\n", dev, name_of(r));
      return 3;
    }
    buf = reinterpret_cast<unsigned *>(va);
  }
  made.stop();
  made.print(dev, 0);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  phase run("chase", 1024);
  const auto t0 = clk::now();
  while (std::chrono::duration<double>(clk::now() - t0).count() < seconds) {
    run.start();
    chase_kernel<<<sms * 4, 256>>>(buf, bytes / k_slot, 2000, sink);
    const cudaError_t e = cudaDeviceSynchronize();
    run.stop();
    if (e != cudaSuccess) {
      std::printf("dev %d: chase: %s\n", dev, cudaGetErrorString(e));
      return 4;
    }
  }
  run.print(dev, 0);
  if (alias) {
    cuMemUnmap(va, bytes);
    cuMemAddressFree(va, bytes);
    cuMemRelease(h);
  } else {
    cudaFree(buf);
  }
  cudaFree(sink);
  return 0;
}

// NVML's entry points by name (no nvml.h in this toolkit): every one returns nvmlReturn_t, 0 on
// success; 7 (NVML_ERROR_INSUFFICIENT_SIZE) when the process list did not fit.
struct nvml_process { // nvmlProcessInfo_t (v2/v3 layout), with room to spare
  unsigned pid;
  unsigned long long used;
  unsigned gi, ci;
  unsigned long long spare;
};

int nvml_loop(const char *uuid, int reps, int pause_ms) {
  void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!lib) {
    std::printf("nvml: %s\n", dlerror());
    return 3;
  }
  using init_fn = int (*)();
  using handle_fn = int (*)(const char *, void **);
  using procs_fn = int (*)(void *, unsigned *, nvml_process *);
  const auto init = reinterpret_cast<init_fn>(dlsym(lib, "nvmlInit_v2"));
  const auto handle = reinterpret_cast<handle_fn>(dlsym(lib, "nvmlDeviceGetHandleByUUID"));
  auto procs = reinterpret_cast<procs_fn>(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
  if (!procs)
    procs = reinterpret_cast<procs_fn>(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v2"));
  if (!init || !handle || !procs) {
    std::printf("nvml: an entry point is missing\n");
    return 3;
  }
  phase start("nvmlinit", 1);
  start.start();
  void *dev = nullptr;
  const int r = init() == 0 ? handle(uuid, &dev) : -1;
  start.stop();
  start.print(0, 0);
  if (r != 0) {
    std::printf("nvml: init or handle of %s: %d\n", uuid, r);
    return 3;
  }
  for (int rep = 0; rep < reps; ++rep) {
    phase q("nvml", 1);
    nvml_process list[64];
    unsigned count = 64;
    q.start();
    const int e = procs(dev, &count, list);
    q.stop();
    if (e != 0 && e != 7) {
      std::printf("nvml: compute processes: %d\n", e);
      return 3;
    }
    q.print(0, rep);
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const bool map = argc >= 5 && argc <= 7 && mode == "map";
  const bool four = argc == 5 && (mode == "malloc" || mode == "ctx" || mode == "chase" ||
                                  mode == "chase-alias" || mode == "nvml");
  if (!map && !four) {
    std::fprintf(stderr,
                 "usage: %s map DEV GIB REPS [PIECE_MIB [PAUSE_MS]] | malloc DEV GIB SECONDS | "
                 "ctx DEV REPS PAUSE_MS | chase DEV GIB SECONDS | chase-alias DEV GIB SECONDS | "
                 "nvml UUID REPS PAUSE_MS\n",
                 argv[0]);
    return 2;
  }
  if (mode == "nvml") // no CUDA context: NVML only
    return nvml_loop(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  const int dev = std::atoi(argv[2]);
  if (mode == "ctx") // before any context: the first rep's time includes the driver's start
    return ctx_loop(dev, std::atoi(argv[3]), std::atoi(argv[4]));
  const std::size_t bytes = std::size_t(std::atoll(argv[3])) << 30;
  if (cudaSetDevice(dev) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "driver_lock: no context on device %d\n", dev);
    return 1;
  }
  if (mode == "chase" || mode == "chase-alias")
    return chase_loop(dev, bytes, std::atof(argv[4]), mode == "chase-alias");
  const std::size_t piece = std::size_t(argc > 5 ? std::atoll(argv[5]) : 2048) << 20;
  if (map && (piece < k_slot || piece % k_slot != 0)) {
    std::fprintf(stderr, "driver_lock: PIECE_MIB must be a multiple of 2\n");
    return 2;
  }
  return map ? map_loop(dev, bytes, std::atoi(argv[4]), piece, argc > 6 ? std::atoi(argv[6]) : 0)
             : malloc_loop(dev, bytes, std::atof(argv[4]));
}
