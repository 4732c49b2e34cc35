// mallocMC (alpaka-group/mallocMC, the allocator of PIConGPU) in the peer harness, from the user's
// checkout: ScatterAlloc (Steinberger et al., InPar'12) in the configuration of mallocMC's
// Usage.md: CreationPolicies::Scatter<> (4 KiB pages, 16-page regions, 2 GiB access blocks),
// DistributionPolicies::XMallocSIMD<> (a warp's requests gathered into one), ReturnNull,
// AlpakaBuf (a device buffer of the cell's heap size) and Shrink to 16 B; a fresh allocator per
// cell. Its device calls take an alpaka accelerator: the CUDA one, built in our kernels from the
// built-in indices as alpaka's own kernel launcher does.
#include "bench/peers/peer_protocol.cuh"

#include <alpaka/alpaka.hpp>
#include <mallocMC/mallocMC.hpp>

namespace gpuprobe::bench::peers {
namespace {

using acc_dim = alpaka::DimInt<1>;
using acc_idx = std::size_t;
using acc_type = alpaka::AccGpuCudaRt<acc_dim, acc_idx>;
struct shrink_config {
  static constexpr auto dataAlignment = 16;
};
using scatter_alloc =
    mallocMC::Allocator<acc_type, mallocMC::CreationPolicies::Scatter<>,
                        mallocMC::DistributionPolicies::XMallocSIMD<>,
                        mallocMC::OOMPolicies::ReturnNull,
                        mallocMC::ReservePoolPolicies::AlpakaBuf<acc_type>,
                        mallocMC::AlignmentPolicies::Shrink<shrink_config>>;

struct scatter_handle {
  scatter_alloc::AllocatorHandle h;
  __device__ void *malloc(std::size_t bytes) const {
    const acc_type acc(alpaka::Vec<acc_dim, acc_idx>{acc_idx{1}}); // one element per thread
    auto m = h; // mallocMC's handle methods are not const
    return m.malloc(acc, bytes);
  }
  __device__ void free(void *p) const {
    const acc_type acc(alpaka::Vec<acc_dim, acc_idx>{acc_idx{1}});
    auto m = h;
    m.free(acc, p);
  }
};

} // namespace

void run_mallocmc_cell(benchmark::State &st, const peer_cell &c) {
  const auto platform = alpaka::Platform<acc_type>{};
  auto dev = alpaka::getDevByIdx(platform, 0);
  auto queue = alpaka::Queue<acc_type, alpaka::Blocking>{dev};
  scatter_alloc a(dev, queue, c.heap_bytes); // the heap made and formatted on `queue`
  check(cudaDeviceSynchronize(), "mallocMC ScatterAlloc heap");
  // No occupancy ladder: its fill to 50 % (mixed sizes) did not end within 60 s (H100).
  run_size_allocator(st, c, scatter_handle{a.getAllocatorHandle()}, 0);
}

} // namespace gpuprobe::bench::peers
