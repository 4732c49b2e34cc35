#pragma once
// Device memory for the probes, workloads and tune, in four flavours (`--alloc`):
//   cudamalloc  one cudaMalloc; the driver chooses the page size (and may coalesce pages).
//   vmm         CUDA VMM: physical chunks of the driver's minimum granularity mapped at shuffled
//               virtual positions, so no two virtually adjacent chunks are physically adjacent
//               and large-page coalescing cannot hide TLB misses.
//   managed     cudaMallocManaged, advised to and prefetched onto the device.
//   vmm_sparse  CUDA VMM: a virtual range of `slot` * k bytes with one physical chunk mapped at
//               the start of every slot, the rest unmapped. A walk that touches one address per
//               slot sees every slot's translation, using 1/(slot/granularity) of the memory:
//               this is how a level whose reach exceeds half the memory can still be tested.
//   alias       CUDA VMM: ONE physical chunk of `slot_bytes` (a multiple of the granularity)
//               mapped at every slot of a virtual range of any size the driver grants (beyond
//               the device memory). Every slot reads the same physical bytes, so a walk over it
//               has a constant cache cost: its latency steps are address translation alone.
// The driver API is reached through cudaGetDriverEntryPointByVersion, so the binary does not
// link libcuda and loads on machines without a driver.
#include "common/alias_slots.hpp"
#include "common/node_budget.hpp"
#include "common/non_copyable.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe {

enum class alloc_kind { cudamalloc, vmm, managed, vmm_sparse, alias };

// The default alias range of the tlb and tlb-coverage probes: 4/3 of the largest full miss measured
// (Hopper's third level misses on every hop from 288 GiB, H100 and H200 alike), and two such ranges
// fit the node's mapped-range budget at once (plan_tlb says what was checked).
inline constexpr std::uint64_t k_alias_default_bytes = 384ull << 30;
alloc_kind parse_alloc_kind(const std::string &s); // throws gpuprobe::error
const char *to_string(alloc_kind k);

class device_pool : private non_copyable {
public:
  // slot_bytes: vmm_sparse and alias only (a multiple of the granularity; alias: 0 = the
  // granularity); ignored otherwise. walks: alias only, the offsets the pool's walks touch: only
  // their slots are mapped (none given: every slot; alias_slots.hpp). A walk outside them faults.
  // Throws gpuprobe::error naming what the driver refused.
  device_pool(alloc_kind kind, std::size_t bytes, int device, std::uint64_t seed,
              std::size_t slot_bytes = 0, std::vector<alias_walk> walks = {});
  ~device_pool();

  char *data() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  alloc_kind kind() const { return kind_; }
  // Physical granularity the pool was built from; 0 when the driver decides (unknown).
  std::size_t granularity() const { return granularity_; }
  // Bytes mapped at the start of each `slot_bytes` slot (vmm_sparse), else bytes().
  std::size_t mapped_per_slot() const {
    return kind_ == alloc_kind::vmm_sparse ? granularity_
           : kind_ == alloc_kind::alias    ? slot_
                                           : bytes_;
  }
  // alias: the bytes of the one physical chunk every slot maps (else 0).
  std::size_t alias_bytes() const { return kind_ == alloc_kind::alias ? slot_ : 0; }
  // alias: the range was one an alias_keeper kept from an earlier pool (only the slots its walks
  // need and the kept range lacked were mapped now: newly_mapped_slots()).
  bool reused() const { return reused_; }
  // alias: the range's slots, those mapped now, and those this pool mapped (not kept).
  std::size_t alias_slots() const { return slot_ ? range_bytes() / slot_ : 0; }
  std::size_t mapped_slots() const {
    return std::size_t(std::count(mapped_.begin(), mapped_.end(), std::uint8_t(1)));
  }
  std::size_t newly_mapped_slots() const { return newly_mapped_; }

  // The VMM minimum granularity of `device` (0 if the driver API is unavailable).
  static std::size_t vmm_granularity(int device);

private:
  void release() noexcept; // unmaps and frees what was made (the destructor; a failed constructor)
  void make_managed(int device);
  void make_scattered(int device, std::uint64_t seed, std::size_t slot_bytes); // vmm, vmm_sparse
  void make_alias(int device, std::size_t slot_bytes);
  void map_alias(int device);       // the alias pool's range, chunk, mappings and access (throws)
  bool take_kept_alias(int device); // alias: a kept range that holds this pool, taken
  void map_slots(const std::vector<std::uint8_t> &need); // alias: needed slots not yet mapped
  std::size_t range_bytes() const { return range_bytes_ ? range_bytes_ : bytes_; }
  alloc_kind kind_;
  std::size_t bytes_ = 0;
  std::size_t range_bytes_ = 0; // alias: the mapped range (a kept one may be longer than bytes_)
  int device_ = 0;
  bool reused_ = false;
  std::size_t granularity_ = 0;
  std::size_t slot_ = 0;             // vmm_sparse, alias: bytes per slot
  std::size_t newly_mapped_ = 0;     // alias: of them, mapped by this pool
  std::vector<alias_walk> walks_;    // alias: what the pool's walks touch (empty: every slot)
  std::vector<std::uint8_t> mapped_; // alias: per slot of the range, 1 once mapped
  char *ptr_ = nullptr;
  std::vector<unsigned long long> handles_; // vmm physical chunks
  node_budget
      budget_; // alias: the range's share of the node's mapped-range budget, held till unmapped
};

// Map once: while an alias_keeper lives, an alias pool's range is not unmapped when the
// pool ends but kept by the process, and the next alias pool of the same device and chunk whose
// bytes fit in it takes it (its first bytes, at the same base and so the same alignment) instead
// of mapping its own: characterize's stages, run in one process, map the range once. A pool that
// does not fit unmaps the kept range first (its budget back to the node), then maps its own; of two
// ranges ending while one is kept, the larger is kept.
// Every alias walk writes the chunk it reads before reading it, so a kept chunk carries nothing
// from one pool to the next. One keeper at a time; its end unmaps what is kept.
class alias_keeper : private non_copyable {
public:
  alias_keeper();
  ~alias_keeper();
  // The range kept now, in bytes (0: none).
  static std::size_t kept_bytes();
  // Unmaps the kept range now (the keeper stays on).
  static void drop();
};

// A pool kept from one stage to the next (common/pool_shelf.hpp): while a pool_keeper
// lives, a pool made by keepable_pool is not freed when its last user ends but kept, and the next
// keepable_pool call with the same kind, bytes, device and seed takes it instead of making one; a
// call with anything else frees it first (two such pools do not fit in the memory together).
// `gpuprobe run` holds a keeper over tune and validate (run in its process), so tune's last
// TLB-sized pool is validate's first; tune holds one over its own decisions. Only TLB-sized pools
// go through here: whatever else allocates while one is kept must call pool_keeper::drop() first.
struct pool_key {
  alloc_kind kind = alloc_kind::cudamalloc;
  std::size_t bytes = 0;
  int device = 0;
  std::uint64_t seed = 0;
  bool operator==(const pool_key &o) const {
    return kind == o.kind && bytes == o.bytes && device == o.device && seed == o.seed;
  }
};
class pool_keeper : private non_copyable {
public:
  pool_keeper();      // keeping on (an inner keeper, while one lives, changes nothing)
  ~pool_keeper();     // the keeper that turned it on turns it off and frees what is kept
  static void drop(); // frees what is kept now
  static std::optional<pool_key> kept();  // what is kept now
  static std::size_t kept_device_bytes(); // the device memory it holds (0: none)

private:
  bool opened_ = false;
};
// `taken` (if given): whether the pool is the kept one, not made now.
std::shared_ptr<device_pool> keepable_pool(alloc_kind kind, std::size_t bytes, int device,
                                           std::uint64_t seed, bool *taken = nullptr);

// A virtual range of slots, each mapped to one of a few physical chunks or left unmapped: the
// layouts `gpuprobe tlb-coverage` compares (one chunk at every slot, as alias; only some slots;
// a distinct chunk per slot; the pieces of one allocation in order). Mapped like alias (aligned to
// the largest power of two the range holds, its bytes reserved from the node's budget); every
// chunk's first bytes are zeroed (the walks add the 0 they load to the next address).
struct slot_layout {
  std::size_t slot_bytes = 0;  // a multiple of the VMM granularity
  std::vector<int> chunk_of;   // per slot: the chunk it maps, or -1 (unmapped)
  int chunks = 1;              // chunk indices run 0..chunks-1
  bool one_allocation = false; // ONE physical allocation mapped whole: slot i is its i-th piece
  std::size_t mapped_slots() const;
};

class slot_pool : private non_copyable {
public:
  slot_pool(const slot_layout &layout, int device); // throws gpuprobe::error
  ~slot_pool();
  char *data() const { return whole_ ? whole_->data() : ptr_; }
  std::size_t bytes() const { return bytes_; }
  double map_seconds() const { return map_seconds_; }
  // One chunk at every slot: the layout is an alias pool, made as one (a range an alias_keeper
  // kept is taken, and kept again at the end).
  bool reused() const { return whole_ && whole_->reused(); }

private:
  void release() noexcept;
  char *ptr_ = nullptr;
  std::size_t bytes_ = 0, slot_ = 0;
  std::vector<int> chunk_of_;
  std::size_t piece_ = 0; // one_allocation: bytes per chunk inside the one handle
  std::vector<unsigned long long> handles_;
  double map_seconds_ = 0;
  node_budget budget_;                 // as device_pool's alias
  std::unique_ptr<device_pool> whole_; // the one-chunk-at-every-slot layout
};

// A virtual range reserved once and backed by physical chunks on demand from the host (CUDA VMM):
// the "host-resized VMM array" of the growable-array workload. Addresses never move.
class vmm_growable : private non_copyable {
public:
  vmm_growable(std::size_t max_bytes, int device);
  ~vmm_growable();
  // Maps chunks until at least `bytes` are backed (never shrinks).
  void grow_to(std::size_t bytes);
  char *data() const { return ptr_; }
  std::size_t mapped_bytes() const { return handles_.size() * granularity_; }
  std::size_t granularity() const { return granularity_; }

private:
  std::size_t max_ = 0, granularity_ = 0;
  int device_ = 0;
  char *ptr_ = nullptr;
  std::vector<unsigned long long> handles_;
};

} // namespace gpuprobe
