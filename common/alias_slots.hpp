#pragma once
// Which slots of an alias range a pool's walks touch: an alias pool maps only those,
// so a quick sweep, whose small strides stop early, maps 44 % of a 384 GiB range's slots (in
// 3.0-3.2 s against 5.6-6.9 s on two H100s). Host-only, so it is testable without a GPU;
// common/device_memory.cu maps what it says.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpuprobe {

// A walk's offsets: k x step + o for k >= 0 with k x step < end and 0 <= o < one slot (a hop's
// word inside its page: a home offset, a line of a page; never past the slot it starts in when
// step is a multiple of the slot).
struct alias_walk {
  std::uint64_t step = 0, end = 0;
};

// Per slot of a range of `slots` slots of `slot_bytes`: 1 where a walk touches it. No walks: every
// slot (a pool that says nothing of its walks gets the whole range). A step that is not a multiple
// of the slot touches every slot below its end.
std::vector<std::uint8_t> touched_slots(const std::vector<alias_walk> &walks,
                                        std::uint64_t slot_bytes, std::size_t slots);

// The runs [first, last) of nonzero entries of `m`, each at most `max_run` long.
std::vector<std::pair<std::size_t, std::size_t>> slot_runs(const std::vector<std::uint8_t> &m,
                                                           std::size_t max_run);

} // namespace gpuprobe
