#pragma once
// Atomic latency under contention: N threads each issue one atomic (a single shot, as in the RW
// paper's queue model), timed per thread with clock64. Variants:
//   same_u32/u64        one address, one atom.global.add per thread (inline PTX: the compiler's
//                       warp aggregation cannot merge them; a gpu test checks the SASS)
//   distinct_u32/u64    one 128-byte line per thread
//   cas_u32/u64         one address, an atomicCAS retry loop until it succeeds
//   aggregated_u32/u64  atomicAdd(&x, 1) as nvcc compiles it: one atomic per warp (contrast)
#include "common/non_copyable.hpp"
#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::probes {

enum class atomic_variant {
  same_u32,
  same_u64,
  distinct_u32,
  distinct_u64,
  cas_u32,
  cas_u64,
  aggregated_u32,
  aggregated_u64
};

const std::vector<atomic_variant> &all_atomic_variants();
std::string to_string(atomic_variant v);
atomic_variant parse_atomic_variant(const std::string &s); // throws gpuprobe::error
int bits_of(atomic_variant v);

struct atomic_point {
  std::uint64_t threads = 0;
  std::uint64_t samples = 0; // per-operation latencies collected (threads x launches)
  int launches = 0;
  double mean_cycles = 0, median_cycles = 0, p99_cycles = 0;
  double warp_max_mean_cycles = 0; // mean over full warps of the slowest lane (measured WAS)
  double ops_per_s = 0;            // threads x launches / summed kernel time (CUDA events)
  std::uint64_t counter_delta = 0; // the target's value after one launch, checked == threads
};

class atomics_probe : private non_copyable {
public:
  explicit atomics_probe(std::uint64_t max_threads);
  ~atomics_probe();

  // Runs `threads` concurrent threads, repeating launches until `min_samples` latencies exist.
  // Throws gpuprobe::error when the counter does not equal the number of operations.
  atomic_point measure(atomic_variant v, std::uint64_t threads, std::uint64_t min_samples);

private:
  std::uint64_t max_threads_;
  void *d_target_ = nullptr; // max_threads 128-byte lines
  unsigned *d_lat_ = nullptr;
  unsigned long long *d_sink_ = nullptr;
  std::vector<unsigned> host_lat_;
};

} // namespace gpuprobe::probes
