// A neighbour on the GPU for the busy-GPU rounds (dev/device_round.sh busy): holds a CUDA context
// on device DEV (so nvidia-smi lists it as a compute process) for SECONDS, spinning a small kernel
// now and then, then exits. Usage: gpuprobe_test_neighbour DEV SECONDS
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

__global__ void spin(unsigned long long cycles, int *sink) {
  const long long t0 = clock64();
  while (clock64() - t0 < (long long)cycles) {
  }
  if (threadIdx.x == 0 && blockIdx.x == 0)
    *sink = 1; // a store the compiler must keep: the loop is not removed
}

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DEV SECONDS\n", argv[0]);
    return 2;
  }
  const int dev = std::atoi(argv[1]);
  const double seconds = std::atof(argv[2]);
  int *sink = nullptr;
  if (cudaSetDevice(dev) != cudaSuccess || cudaMalloc(&sink, sizeof(int)) != cudaSuccess) {
    std::fprintf(stderr, "neighbour: no context on device %d\n", dev);
    return 1;
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    spin<<<1, 32>>>(1000000ull, sink);
    cudaDeviceSynchronize();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  cudaFree(sink);
  std::printf("neighbour on device %d: %.1f s\n", dev, seconds);
  return 0;
}
