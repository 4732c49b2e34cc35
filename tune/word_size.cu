// tune: RW-BM / CoRW get_page with 32- and 64-bit bitmap words at one free fraction, the two
// word sizes interleaved, each repetition from the same random occupancy (ids-only pool).
#include "allocators/allocators.cuh"
#include "tune/kernels.cuh"
#include "tune/measure.hpp"

namespace gpuprobe::tune {

namespace {

template <class H> __global__ void get_only(H h, alloc::page_t *out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = h.get_page();
}

template <class A32, class A64> word_sample measure(word_sample s, int reps, std::uint64_t seed) {
  const auto occ = alloc::random_occupancy(s.pages, s.free_pages, seed);
  alloc::pool_config c;
  c.pages = alloc::page_t(s.pages);
  c.page_bytes = 0; // ids only: the word size is about the bitmap search
  c.seed = seed;
  A32 a32(c);
  A64 a64(c);
  alloc::device_array<alloc::page_t> out(s.threads);
  event_timer timer;
  const unsigned blocks = unsigned(s.threads / alloc::k_block);
  const auto packed32 = A32::pack(occ); // packed once per word size, loaded at every repetition
  const auto packed64 = A64::pack(occ);
  auto once = [&](auto &a, const auto &packed) {
    a.load_packed(packed);
    return timer.ms([&] { get_only<<<blocks, alloc::k_block>>>(a.handle(), out.get()); });
  };
  const auto t32 = [&] { return once(a32, packed32); };
  const auto t64 = [&] { return once(a64, packed64); };
  t32(), t64(); // warm-up (module load, first touch)
  for (int r = 0; r < reps; ++r) {
    if (r % 2 == 0)
      s.ms32.push_back(t32()), s.ms64.push_back(t64());
    else
      s.ms64.push_back(t64()), s.ms32.push_back(t32());
  }
  auto verify = [&](const auto &timed, const char *bits) { // one more launch of each, checked
    timed();
    const std::string why = check_pages(out, s.threads, s.pages);
    if (!why.empty())
      throw error("tune: " + s.allocator + " with " + bits + "-bit words failed its check: " + why);
  };
  verify(t32, "32");
  verify(t64, "64");
  return s;
}

} // namespace

word_sample measure_word_size(const std::string &allocator, double free_fraction, unsigned threads,
                              int reps, std::uint64_t seed) {
  if (threads == 0 || threads % 256)
    throw error("tune: threads must be a positive multiple of 256");
  word_sample s;
  s.allocator = allocator;
  s.free_fraction = free_fraction;
  s.threads = threads;
  s.pages = alloc::pages_for(threads, free_fraction);
  s.free_pages = std::uint64_t(double(s.pages) * free_fraction);
  if (allocator == "rw_bm")
    return measure<alloc::rw_bm<std::uint32_t>, alloc::rw_bm<unsigned long long>>(s, reps, seed);
  if (allocator == "corw")
    return measure<alloc::corw<std::uint32_t>, alloc::corw<unsigned long long>>(s, reps, seed);
  throw error("tune: no word-size measurement for allocator '" + allocator + "' (rw_bm, corw)");
}

} // namespace gpuprobe::tune
