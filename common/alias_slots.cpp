#include "common/alias_slots.hpp"

#include <algorithm>

namespace gpuprobe {

std::vector<std::uint8_t> touched_slots(const std::vector<alias_walk> &walks,
                                        std::uint64_t slot_bytes, std::size_t slots) {
  if (walks.empty() || slot_bytes == 0)
    return std::vector<std::uint8_t>(slots, 1);
  std::vector<std::uint8_t> m(slots, 0);
  for (const auto &w : walks) {
    if (w.end == 0)
      continue;
    // The slots below the walk's end: its last offset's slot, and (o < one slot) the next one's
    // start is never reached when the step is a multiple of the slot.
    const std::size_t below = std::min<std::uint64_t>(slots, (w.end - 1) / slot_bytes + 1);
    const bool every = w.step == 0 || w.step % slot_bytes != 0;
    const std::uint64_t jump = every ? 1 : w.step / slot_bytes;
    for (std::uint64_t i = 0; i < below; i += jump)
      m[i] = 1;
  }
  return m;
}

std::vector<std::pair<std::size_t, std::size_t>> slot_runs(const std::vector<std::uint8_t> &m,
                                                           std::size_t max_run) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  max_run = std::max<std::size_t>(1, max_run);
  for (std::size_t i = 0; i < m.size();) {
    if (!m[i]) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < m.size() && m[j] && j - i < max_run)
      ++j;
    out.emplace_back(i, j);
    i = j;
  }
  return out;
}

} // namespace gpuprobe
