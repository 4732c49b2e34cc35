// Ouroboros (GPUPeople/Ouroboros, ICS'20) in the peer harness, from the user's checkout: the
// standard page-queue (OuroPQ) and chunk-queue (OuroCQ) instances with the repository's
// Parameters.h (10 queues, pages of 16 B to 8 KiB, 8 KiB chunks), a fresh instance of the cell's
// heap size per cell.
#include "bench/peers/peer_protocol.cuh"

// Ouroboros' headers, in the order its src/main.cu includes them (the order matters).
// clang-format off
#include "device/Ouroboros_impl.cuh"
#include "device/MemoryInitialization.cuh"
#include "InstanceDefinitions.cuh"
// clang-format on

#include <memory>

namespace gpuprobe::bench::peers {
namespace {

template <class O> struct ouroboros_handle {
  typename O::MyType *m;
  __device__ void *malloc(std::size_t bytes) const { return m->malloc(bytes); }
  __device__ void free(void *p) const { m->free(p); }
};

template <class O> void run(benchmark::State &st, const peer_cell &c) {
  auto o = std::make_unique<O>(); // its destructor frees the device memory
  o->initialize(c.heap_bytes);
  // initialize() sets the device malloc heap and ignores the answer: the limit is fixed once a
  // malloc kernel ran, so a refusal is expected here and must not fail our next check.
  (void)cudaGetLastError();
  check(cudaDeviceSynchronize(), "Ouroboros initialize");
  // No occupancy ladder: Ouroboros has no out-of-memory path, and in the ladder's fills (toward
  // 90 % of its heap) it faulted with an illegal address on an H100, which ends the process.
  run_size_allocator(st, c, ouroboros_handle<O>{o->getDeviceMemoryManager()}, 0);
}

} // namespace

void run_ouroboros_cell(benchmark::State &st, const peer_cell &c) {
  if (c.alloc == "ouroboros_page")
    run<OuroPQ>(st, c);
  else
    run<OuroCQ>(st, c);
}

} // namespace gpuprobe::bench::peers
