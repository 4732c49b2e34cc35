// Maps an alias range as the tlb probe does (one 2 MiB chunk at every slot of a virtual range,
// then cuMemSetAccess in pieces), holds it, and says what each step cost: for the 2-GPU rounds
// that ask why two processes cannot map at once (dev/device_round.sh map2). No
// lock: two of these map at the same time. Prints one line per step and "mapped" once the range
// is readable, then holds it HOLD seconds.
// Usage: gpuprobe_test_alias_map DEV GIB HOLD [PIECE_MIB (default 65536)] [SLOT_MIB (default 2)]
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace {

using clk = std::chrono::steady_clock;

double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

long mem_available_mib() { // the host's MemAvailable, MiB
  std::ifstream f("/proc/meminfo");
  std::string key;
  long kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:")
      return kib / 1024;
  return -1;
}

const char *name_of(CUresult r) {
  const char *s = nullptr;
  cuGetErrorName(r, &s);
  return s ? s : "?";
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s DEV GIB HOLD [PIECE_MIB] [SLOT_MIB]\n", argv[0]);
    return 2;
  }
  const int dev = std::atoi(argv[1]);
  const std::size_t bytes = std::size_t(std::atoll(argv[2])) << 30;
  const double hold = std::atof(argv[3]);
  const std::size_t piece = std::size_t(argc > 4 ? std::atoll(argv[4]) : 65536) << 20;
  const std::size_t slot = std::size_t(argc > 5 ? std::atoll(argv[5]) : 2) << 20;
  if (cudaSetDevice(dev) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "alias_map: no context on device %d\n", dev);
    return 1;
  }
  std::size_t free0 = 0, total = 0, free1 = 0;
  cudaMemGetInfo(&free0, &total);
  const long host0 = mem_available_mib();
  auto t = clk::now();
  CUdeviceptr va = 0;
  CUresult r = cuMemAddressReserve(&va, bytes, slot, 0, 0);
  std::printf("dev %d: reserve %zu GiB: %s in %.2f s\n", dev, bytes >> 30, name_of(r), since(t));
  if (r != CUDA_SUCCESS)
    return 3;
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  CUmemGenericAllocationHandle h{};
  if ((r = cuMemCreate(&h, slot, &prop, 0)) != CUDA_SUCCESS) {
    std::printf("dev %d: cuMemCreate: %s\n", dev, name_of(r));
    return 3;
  }
  t = clk::now();
  std::size_t off = 0;
  for (; off < bytes; off += slot)
    if ((r = cuMemMap(va + off, slot, 0, h, 0)) != CUDA_SUCCESS)
      break;
  std::printf("dev %d: cuMemMap x %zu: %s in %.2f s%s\n", dev, off / slot, name_of(r), since(t),
              r == CUDA_SUCCESS ? "" : " (stopped there)");
  if (r != CUDA_SUCCESS)
    return 4;
  t = clk::now();
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  for (off = 0; off < bytes; off += piece) {
    const std::size_t n = bytes - off < piece ? bytes - off : piece;
    if ((r = cuMemSetAccess(va + off, n, &access, 1)) != CUDA_SUCCESS)
      break;
  }
  cudaMemGetInfo(&free1, &total);
  const long host1 = mem_available_mib();
  std::printf("dev %d: cuMemSetAccess in pieces of %zu MiB: %s in %.2f s, at %zu GiB of %zu; "
              "device memory free %zu -> %zu MiB (%+ld), host MemAvailable %ld -> %ld MiB (%+ld)\n",
              dev, piece >> 20, name_of(r), since(t), off >> 30, bytes >> 30, free0 >> 20,
              free1 >> 20, long(free1 >> 20) - long(free0 >> 20), host0, host1, host1 - host0);
  std::fflush(stdout);
  if (r == CUDA_SUCCESS) {
    std::printf("mapped\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::duration<double>(hold));
  }
  t = clk::now();
  const CUresult u = cuMemUnmap(va, bytes); // every slot was mapped by then
  cuMemRelease(h);
  cuMemAddressFree(va, bytes);
  std::printf("dev %d: unmapped (%s) in %.2f s\n", dev, name_of(u), since(t));
  return r == CUDA_SUCCESS ? 0 : 5;
}
