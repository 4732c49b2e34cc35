#pragma once
// The peer harness (bench/peers/README.md): BM_peers/<allocator>/size:<s>/threads:<n>/state:<st>,
// one protocol for gpuprobe's allocators and the public peers (Gallatin, Ouroboros), which are
// built only from the user's checkouts (-DGPUPROBE_PEERS_DIR).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::bench::peers {

// Heap of every allocator in a cell unless --gpuprobe_peers_heap says otherwise: the largest
// launch (2^20 x 8 KiB = 8 GiB) must fit beside the churn's 50 % with room for rounding.
constexpr std::uint64_t k_default_heap_bytes = std::uint64_t(32) << 30;

// The heap a cell meets (bench/peers/README.md, "Heap states").
enum class heap_state { empty, churn, class_churn };
inline const char *state_name(heap_state s) {
  return s == heap_state::empty ? "empty" : s == heap_state::churn ? "churn" : "classchurn";
}

struct peer_cell {
  std::string alloc;
  std::uint32_t size = 0; // bytes per request; 0: mixed (multiples of 4 in [4, 8192])
  std::uint64_t threads = 0;
  heap_state state = heap_state::empty;
  std::uint64_t heap_bytes = k_default_heap_bytes;
  std::string name() const;
};

// Every cell of the grid, in the order they run: allocators in `allocs` order, then size,
// threads, state. Capped cells (cuda_malloc past 2^17 threads or after churn, ouroboros_chunk
// past 2^17 threads: seconds a launch) are left out unless `uncapped`.
std::vector<peer_cell> peer_grid(const std::vector<std::string> &allocs, bool uncapped,
                                 std::uint64_t heap_bytes);

// The allocators of this build: gpuprobe's always, the peers where their checkouts were found.
std::vector<std::string> peer_allocators();
// The peers built in, with their checkouts' commits (the JSON context's "peers").
std::string peers_built();

// Per peer translation unit (compiled only with its checkout).
void run_gallatin_cell(benchmark::State &st, const peer_cell &c); // gallatin / gallatin_8k
void run_ouroboros_cell(benchmark::State &st, const peer_cell &c); // ouroboros_page / _chunk
void run_mallocmc_cell(benchmark::State &st, const peer_cell &c);  // scatteralloc

void register_peer_benchmarks(std::uint64_t heap_bytes);

} // namespace gpuprobe::bench::peers
