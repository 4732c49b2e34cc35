#pragma once
// A list chase, the instrument of tlb-conflict and tlb-coverage: one thread walks a cyclic list
// of pages of an alias pool (one physical chunk at every slot, so every hop is an L2 hit and its
// cost is translation alone) and times every hop. The list lives in shared memory, so the walk
// touches no page but its own.
#include "common/device_memory.hpp"
#include "common/non_copyable.hpp"

#include <cstdint>
#include <vector>

namespace gpuprobe::probes {

class list_chase : private non_copyable {
public:
  // `pool` must be an alias pool; its chunk is zeroed (every hop adds the 0 it loads to the next
  // address, so the loads stay dependent).
  explicit list_chase(device_pool &pool);
  // Over any range whose touched pages read 0 (a tlb-coverage slot pool, zeroed by its maker).
  list_chase(char *base, std::uint64_t bytes);
  ~list_chase();

  static constexpr std::uint32_t max_pages() { return 8192; }

  // Walks pages[0], pages[1], ... (offsets page * page_bytes) cyclically: one warm lap, then
  // timed laps (3 unless set_timed_laps; at least 2048 hops in all), each ended by untimed re-reads
  // of its last page (kernel.cu says why). Returns the mean cycles of each position's hop. `offset`
  // (below page_bytes) moves every hop inside its page: the chunk's word it loads, so its L2 home.
  std::vector<double> measure(const std::vector<std::uint32_t> &pages, std::uint64_t page_bytes,
                              std::uint64_t offset = 0);
  int last_smid() const { return last_smid_; }               // the SM the last walk ran on
  void set_timed_laps(unsigned laps) { timed_laps_ = laps; } // 3 unless set (2-4)

private:
  void allocate();
  char *base_ = nullptr;
  std::uint64_t bytes_ = 0;
  std::uint32_t *d_pages_ = nullptr;
  unsigned *d_lat_ = nullptr;
  unsigned long long *d_sink_ = nullptr;
  int last_smid_ = -1;
  unsigned timed_laps_ = 3;
};

} // namespace gpuprobe::probes
