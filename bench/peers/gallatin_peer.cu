// Gallatin (saltsystemslab/gallatin, PPoPP'24) in the peer harness, from the user's checkout, a
// fresh allocator of the cell's heap size per cell, in two configurations:
// - gallatin: the authors' global one (16 MiB segments, slices of 16 B to 4 KiB: the type of
//   global_allocator.cuh), where 8 KiB requests take whole blocks of a segment;
// - gallatin_8k: 32 MiB segments, slices of 16 B to 8 KiB, which serves 8 KiB from slices.
#include "bench/peers/peer_protocol.cuh"
#include "common/non_copyable.hpp"

#include <gallatin/allocators/gallatin.cuh>

namespace gpuprobe::bench::peers {
namespace {

template <class G> struct gallatin_handle {
  G *g;
  __device__ void *malloc(std::size_t bytes) const { return g->malloc(bytes); }
  __device__ void free(void *p) const { g->free(p); }
};

// Owns one device-side Gallatin (generate_on_device / free_on_device).
template <class G> class gallatin_heap : private non_copyable {
public:
  explicit gallatin_heap(std::uint64_t bytes)
      : g_(G::generate_on_device(bytes, 42, /*print_info=*/false)) {
    check(cudaDeviceSynchronize(), "Gallatin generate_on_device");
  }
  ~gallatin_heap() { G::free_on_device(g_); }
  gallatin_handle<G> handle() const { return {g_}; }

private:
  G *g_;
};

template <class G> void run(benchmark::State &st, const peer_cell &c) {
  gallatin_heap<G> heap(c.heap_bytes);
  run_size_allocator(st, c, heap.handle());
}

} // namespace

void run_gallatin_cell(benchmark::State &st, const peer_cell &c) {
  using gallatin::allocators::Gallatin;
  if (c.alloc == "gallatin_8k")
    run<Gallatin<32ull << 20, 16ull, 8192ull>>(st, c);
  else
    run<Gallatin<16ull << 20, 16ull, 4096ull>>(st, c);
}

} // namespace gpuprobe::bench::peers
