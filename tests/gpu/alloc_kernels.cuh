#pragma once
// Kernels the allocator tests share: hold/release rounds with an ownership count per page
// (any page handed out twice shows up as a count above one), one-shot gets with step counts.
#include "allocators/allocators.cuh"

namespace gpuprobe::test {

using alloc::invalid_page;
using alloc::page_t;

// Threads without a page get one and mark it; a page already marked is a duplicate.
template <class H>
__global__ void hold_kernel(H h, unsigned n, page_t *held, unsigned *owner,
                            unsigned long long *counters) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n || held[t] != invalid_page)
    return;
  const page_t p = h.get_page();
  if (p == invalid_page) {
    atomicAdd(&counters[1], 1ull); // out of pages
    return;
  }
  if (atomicAdd(&owner[p], 1u) != 0u)
    atomicAdd(&counters[0], 1ull); // duplicate
  held[t] = p;
  atomicAdd(&counters[2], 1ull); // operations
}

// Holders whose (round, t) hash is odd (about half) release their page; all = true: every holder.
template <class H>
__global__ void release_kernel(H h, unsigned n, page_t *held, unsigned *owner,
                               unsigned long long *counters, unsigned round, bool all) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n || held[t] == invalid_page)
    return;
  if (!all && (((t * 2654435761u) ^ (round * 40503u)) >> 7 & 1u) == 0u)
    return;
  const page_t p = held[t];
  atomicSub(&owner[p], 1u);
  h.free_page(p);
  held[t] = invalid_page;
  atomicAdd(&counters[2], 1ull);
}

// One get per thread with its step count (TAS/WAS) and the page.
template <class H> __global__ void steps_kernel(H h, unsigned n, page_t *out, unsigned *steps) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  alloc::count_steps s;
  out[t] = h.get_page(s);
  steps[t] = s.steps;
}

} // namespace gpuprobe::test
