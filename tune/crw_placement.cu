// tune: CRW's cluster placements compared. Each repetition reloads the same random occupancy
// (which forgets every thread's last page) and times `launches` consecutive launches that take a
// page per thread and write it; the placements are interleaved.
#include "allocators/allocators.cuh"
#include "tune/kernels.cuh"
#include "tune/measure.hpp"

namespace gpuprobe::tune {

std::vector<crw_sample> measure_crw_placements(double free_fraction, unsigned threads,
                                               unsigned launches, int reps, std::uint64_t seed) {
  constexpr unsigned page_bytes = 1024;
  constexpr std::uint64_t pool_bytes = 8ull << 30;
  if (threads == 0 || threads % 256)
    throw error("tune: threads must be a positive multiple of 256");
  const std::uint64_t pages = pool_bytes / page_bytes,
                      free_pages = std::uint64_t(double(pages) * free_fraction);
  if (free_pages < std::uint64_t(threads) * launches)
    throw error("tune: the CRW pool has fewer free pages than the launches take");
  const auto occ = alloc::random_occupancy(pages, free_pages, seed);
  alloc::device_array<char> memory(pool_bytes);
  alloc::pool_config c;
  c.pages = alloc::page_t(pages);
  c.page_bytes = page_bytes;
  c.seed = seed;
  c.memory = memory.get();
  const alloc::crw_start starts[] = {alloc::crw_start::thread, alloc::crw_start::warp,
                                     alloc::crw_start::warp_vm};
  std::vector<std::unique_ptr<alloc::crw>> pools;
  std::vector<crw_sample> out;
  for (auto s : starts) {
    alloc::tuning t;
    t.crw = s;
    pools.push_back(std::make_unique<alloc::crw>(c, threads, t));
    out.push_back({s, free_fraction, {}});
  }
  alloc::device_array<alloc::page_t> ids(std::size_t(threads) * launches);
  event_timer timer;
  unsigned tag = 0;
  const auto packed = alloc::crw::pack(occ); // packed once, loaded at every repetition
  auto once = [&](alloc::crw &a) {
    a.load_packed(packed);
    ++tag;
    return timer.ms(
        [&] { get_and_write_launches(a.handle(), ids.get(), threads, launches, page_bytes, tag); });
  };
  for (auto &p : pools)
    once(*p); // warm-up
  for (int r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < pools.size(); ++k) {
      const std::size_t i = (k + std::size_t(r)) % pools.size(); // rotate the order
      out[i].ms.push_back(once(*pools[i]));
    }
  for (std::size_t i = 0; i < pools.size(); ++i) {
    once(*pools[i]);
    const std::string stamp =
        check_pages(ids, std::size_t(threads) * launches, pages, memory.get(), page_bytes, tag);
    if (!stamp.empty())
      throw error(std::string("tune: CRW start '") + to_string(starts[i]) +
                  "' failed its check: " + stamp);
  }
  return out;
}

} // namespace gpuprobe::tune
