// BM_peers/<allocator>/size:<s>/threads:<n>/state:<empty|churn|classchurn> (bench/peers/README.md):
// gpuprobe's allocators in the peer harness' protocol (peer_protocol.cuh), the grid, and the
// registration of every cell, the peers' included where their checkouts were built in.
#include "allocators/allocators.cuh"
#include "bench/peers/peer_protocol.cuh"

namespace gpuprobe::bench::peers {
namespace {

// A page allocator behind the malloc interface: one page (of the cell's size) per request.
template <class PH, bool Frees> struct pages_as_malloc {
  PH h;
  __device__ void *malloc(std::size_t) const {
    const alloc::page_t p = h.get_page();
    return p == alloc::invalid_page ? nullptr : h.page_ptr(p);
  }
  __device__ void free(void *p) const {
    if constexpr (Frees) // a bump pointer never frees
      h.free_page(alloc::page_t((static_cast<char *>(p) - h.data) / h.page_bytes));
  }
};

// CoRW's churned state, set directly: each page used with probability 1/2, independently (CoRW
// places pages uniformly at random, so a churn of its pages leaves such a pattern); bits past the
// last page used. used[0] counts the used pages.
__global__ void half_used(unsigned long long *words, std::uint32_t word_count, std::uint64_t pages,
                          unsigned long long *used) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= word_count)
    return;
  unsigned long long w = alloc::mix64(i * 0x9e3779b97f4a7c15ull + 12345);
  const std::uint64_t first = std::uint64_t(i) * 64;
  if (first + 64 > pages)
    w |= ~0ull << (pages - first);
  words[i] = w;
  atomicAdd(used, (unsigned long long)__popcll(w));
}

void run_pages(benchmark::State &st, const peer_cell &c) {
  alloc::pool_config pc;
  pc.page_bytes = c.size ? c.size : 8192; // mixed: pages that hold the largest request
  pc.pages = alloc::page_t(c.heap_bytes / pc.page_bytes);
  double occupancy = 0;
  if (c.alloc == "bump") {
    alloc::bump a(pc);
    // A bump pointer's only state is where it stands: half way after a churn. It never frees, so
    // each free is a rewind to that state.
    const bool churned = c.state != heap_state::empty;
    const std::uint64_t free_pages = churned ? pc.pages / 2 : pc.pages;
    a.prefill(free_pages, 0);
    occupancy = 1.0 - double(free_pages) / double(pc.pages);
    measure(st, c, pages_as_malloc<alloc::bump::handle_type, false>{a.handle()}, nullptr,
            [&] { a.prefill(free_pages, 0); });
  } else {
    alloc::corw<unsigned long long> a(pc);
    a.clear();
    if (c.state != heap_state::empty) {
      const auto h = a.handle();
      alloc::device_array<unsigned long long> used(1);
      used.zero();
      half_used<<<alloc::blocks_for(h.bm.word_count), alloc::k_block>>>(h.bm.words, h.bm.word_count,
                                                                        pc.pages, used.get());
      unsigned long long u = 0;
      used.download(&u, 1);
      occupancy = double(u) / double(pc.pages);
    }
    measure(st, c, pages_as_malloc<alloc::corw<unsigned long long>::handle_type, true>{a.handle()},
            nullptr);
  }
  if (!st.error_occurred()) {
    st.counters["page_bytes"] = pc.page_bytes;
    if (c.state != heap_state::empty)
      st.counters["occupancy"] = occupancy;
  }
}

// The peers do not check their own device allocations (Gallatin's generate_on_device, asked for
// a 1 TiB heap, ends the process with a segmentation fault on the host): a heap larger than the
// device's free memory fails the peer's cell here, with the reason, before the peer is made.
void require_free_memory(const peer_cell &c) {
  std::size_t free_bytes = 0, total = 0;
  check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  if (c.heap_bytes > free_bytes)
    throw std::runtime_error(c.alloc + ": a heap of " + std::to_string(c.heap_bytes >> 20) +
                             " MiB does not fit in the device's " +
                             std::to_string(free_bytes >> 20) + " MiB free (not attempted)");
}

// A public peer's cell: its heap checked against the free memory first, then the peer made.
void run_peer_cell(benchmark::State &st, const peer_cell &c) {
  require_free_memory(c);
#ifdef GPUPROBE_HAVE_GALLATIN
  if (c.alloc == "gallatin" || c.alloc == "gallatin_8k")
    return run_gallatin_cell(st, c);
#endif
#ifdef GPUPROBE_HAVE_OUROBOROS
  if (c.alloc.rfind("ouroboros_", 0) == 0)
    return run_ouroboros_cell(st, c);
#endif
#ifdef GPUPROBE_HAVE_MALLOCMC
  if (c.alloc == "scatteralloc")
    return run_mallocmc_cell(st, c);
#endif
  st.SkipWithError(("not in this build: " + c.alloc).c_str());
}

void run_cell(benchmark::State &st, const peer_cell &c) {
  if (c.alloc == "rw_malloc") {
    alloc::rw_malloc a(rw_malloc_config(c.heap_bytes), rw_malloc_tuning());
    run_size_allocator(st, c, a.handle());
  } else if (c.alloc == "cuda_malloc") {
    // The heap asked for, or as much as the driver grants (fixed for the process once a malloc
    // kernel ran): heap_GiB says which.
    peer_cell g = c;
    g.heap_bytes = alloc::granted_malloc_heap(c.heap_bytes);
    const std::uint64_t launch = c.threads * (c.size ? c.size : 8192);
    if (g.heap_bytes < 2 * launch)
      throw std::runtime_error("device malloc heap of " + std::to_string(g.heap_bytes >> 20) +
                               " MiB (granted) is too small for this cell");
    run_size_allocator(st, g, alloc::cuda_malloc_handle{16}, /*ladder_cap=*/0);
  } else if (c.alloc == "corw64" || c.alloc == "bump") {
    run_pages(st, c);
  } else {
    run_peer_cell(st, c);
  }
}

} // namespace

std::string peer_cell::name() const {
  return "BM_peers/" + alloc + "/size:" + (size ? std::to_string(size) : "mixed") +
         "/threads:" + std::to_string(threads) + "/state:" + state_name(state);
}

std::vector<std::string> peer_allocators() {
  // cuda_malloc first: the device malloc heap is sized at the first kernel that mallocs.
  std::vector<std::string> a = {"cuda_malloc", "rw_malloc", "corw64", "bump"};
#ifdef GPUPROBE_HAVE_GALLATIN
  a.push_back("gallatin");
  a.push_back("gallatin_8k");
#endif
#ifdef GPUPROBE_HAVE_OUROBOROS
  a.push_back("ouroboros_page");
  a.push_back("ouroboros_chunk");
#endif
#ifdef GPUPROBE_HAVE_MALLOCMC
  a.push_back("scatteralloc");
#endif
  return a;
}

std::string peers_built() {
  std::string s;
#ifdef GPUPROBE_HAVE_GALLATIN
  s += "gallatin " GPUPROBE_GALLATIN_COMMIT "; ";
#endif
#ifdef GPUPROBE_HAVE_OUROBOROS
  s += "Ouroboros " GPUPROBE_OUROBOROS_COMMIT "; ";
#endif
#ifdef GPUPROBE_HAVE_MALLOCMC
  s += "mallocMC " GPUPROBE_MALLOCMC_COMMIT "; ";
#endif
  return s.empty() ? "none (built without -DGPUPROBE_PEERS_DIR)" : s;
}

std::vector<peer_cell> peer_grid(const std::vector<std::string> &allocs, bool uncapped,
                                 std::uint64_t heap_bytes) {
  std::vector<peer_cell> cells;
  for (const auto &a : allocs)
    for (const std::uint32_t size : {16u, 256u, 1024u, 4096u, 8192u, 0u})
      for (const std::uint64_t threads : {1ull << 14, 1ull << 17, 1ull << 20})
        for (const heap_state state :
             {heap_state::empty, heap_state::churn, heap_state::class_churn}) {
          // Device malloc serves about 1e5-1e6 requests a second (2.9 s for 2^17 x 1 KiB, H100);
          // Ouroboros' chunk queue takes 3.2 s a launch at 2^20 x 8 KiB; ScatterAlloc's fill of a
          // churn (60 % of 32 GiB in mixed sizes) did not end within 60 s a cell (H100).
          if (!uncapped &&
              ((a == "cuda_malloc" && (threads > (1ull << 17) || state != heap_state::empty)) ||
               (a == "ouroboros_chunk" && threads > (1ull << 17)) ||
               (a == "scatteralloc" && state != heap_state::empty)))
            continue;
          cells.push_back({a, size, threads, state, heap_bytes});
        }
  return cells;
}

void register_peer_benchmarks(std::uint64_t heap_bytes) {
  for (const auto &c : peer_grid(peer_allocators(), options().uncapped, heap_bytes))
    add_case(
        c.name(), [c](benchmark::State &st) { run_cell(st, c); }, 5);
}

} // namespace gpuprobe::bench::peers
