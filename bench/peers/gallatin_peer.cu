// Gallatin (saltsystemslab/gallatin, PPoPP'24) in the peer harness, from the user's checkout:
// the authors' global configuration (16 MiB segments, slices of 16 B to 4 KiB: the type of
// global_allocator.cuh), a fresh allocator of the cell's heap size per cell.
#include "bench/peers/peer_protocol.cuh"

#include <gallatin/allocators/gallatin.cuh>

namespace gpuprobe::bench::peers {
namespace {

using gallatin_type = gallatin::allocators::Gallatin<16ull << 20, 16ull, 4096ull>;

struct gallatin_handle {
  gallatin_type *g;
  __device__ void *malloc(std::size_t bytes) const { return g->malloc(bytes); }
  __device__ void free(void *p) const { g->free(p); }
};

// Owns one device-side Gallatin (generate_on_device / free_on_device).
class gallatin_heap {
public:
  explicit gallatin_heap(std::uint64_t bytes)
      : g_(gallatin_type::generate_on_device(bytes, 42, /*print_info=*/false)) {
    check(cudaDeviceSynchronize(), "Gallatin generate_on_device");
  }
  ~gallatin_heap() { gallatin_type::free_on_device(g_); }
  gallatin_heap(const gallatin_heap &) = delete;
  gallatin_heap &operator=(const gallatin_heap &) = delete;
  gallatin_handle handle() const { return {g_}; }

private:
  gallatin_type *g_;
};

} // namespace

void run_gallatin_cell(benchmark::State &st, const peer_cell &c) {
  gallatin_heap heap(c.heap_bytes);
  run_size_allocator(st, c, heap.handle());
}

} // namespace gpuprobe::bench::peers
