// User code with a tuning profile: load tuning.json (gpuprobe tune), build a CoRW pool with the
// measured word size and the TLB-scoped regions, take and write pages, check them, and run the
// untuned default beside it. A tuning measured on another GPU keeps its word size but not its
// SM -> region map (SM groups differ between units), and says so.
//   gpuprobe-example-tuned reports/examples/runs/nvidia-h100-80gb-hbm3-bba9cd54/tuning.json
#include "allocators/allocators.cuh"
#include "allocators/load_tuning.hpp"
#include "common/gpu_uuid.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace gpuprobe::alloc;

// The running GPU's UUID as gpuprobe records it ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx").
std::string running_gpu_uuid() {
  int dev = 0;
  cudaDeviceProp p{};
  cuda_or_throw(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_or_throw(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
  return gpuprobe::format_gpu_uuid(p.uuid.bytes);
}

template <class H> __global__ void take_and_write(H h, page_t *out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const page_t p = h.get_page(); // invalid_page when the pool is out of pages
  out[t] = p;
  if (p != invalid_page)
    reinterpret_cast<unsigned *>(h.page_ptr(p))[0] = t; // use the page
}

template <class A> bool run(const char *what, A &pool, unsigned threads) {
  device_array<page_t> out(threads);
  pool.prefill(pool.config().pages / 2, 7); // half the pages in use
  take_and_write<<<threads / 256, gpuprobe::alloc::k_block>>>(pool.handle(), out.get());
  cuda_or_throw(cudaDeviceSynchronize(), "take_and_write");
  std::vector<page_t> ids(threads);
  out.download(ids.data(), threads);
  std::sort(ids.begin(), ids.end());
  const bool ok =
      ids.back() != invalid_page && std::adjacent_find(ids.begin(), ids.end()) == ids.end();
  std::printf("%-8s %u threads got %s pages (%u region(s))\n", what, threads,
              ok ? "distinct" : "NOT distinct", pool.regions().regions);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s tuning.json\n", argv[0]);
    return 2;
  }
  try {
    // The file first: a bad tuning.json is said in one line before any GPU is asked for.
    tuning t = load_tuning(argv[1]);
    const std::string note = bind_to_gpu(t, running_gpu_uuid(), argv[1]);
    if (!note.empty())
      std::printf("note: %s\n", note.c_str());
    pool_config c;
    c.pages = 1u << 22;
    c.page_bytes = 1024; // a 4 GiB pool
    const unsigned threads = 1u << 18;
    bool ok = true;
    with_word(t, [&](auto word) {
      corw<decltype(word)> tuned(c, t);
      std::printf("tuning: %d-bit words, %u regions in the profile\n", t.word_bits, t.regions);
      ok = run("tuned", tuned, threads) && ok;
    });
    corw<std::uint32_t> untuned(c); // the default stays available
    ok = run("untuned", untuned, threads) && ok;
    return ok ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "gpuprobe-example-tuned: %s\n", e.what());
    return 1;
  }
}
