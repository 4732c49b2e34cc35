#include "common/cuda_check.cuh"
#include "common/device_memory.hpp"
#include "common/enum_names.hpp"
#include "common/pool_shelf.hpp"
#include "common/stopwatch.hpp"

#include <cuda.h> // driver API types only: functions come from cudaGetDriverEntryPointByVersion
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

namespace gpuprobe {

namespace {
constexpr enum_table<alloc_kind, 5> k_alloc_kinds = {{alloc_kind::cudamalloc, "cudamalloc"},
                                                     {alloc_kind::vmm, "vmm"},
                                                     {alloc_kind::managed, "managed"},
                                                     {alloc_kind::vmm_sparse, "vmm-sparse"},
                                                     {alloc_kind::alias, "alias"}};
} // namespace

alloc_kind parse_alloc_kind(const std::string &s) {
  return enum_value(k_alloc_kinds, s, "--alloc");
}
const char *to_string(alloc_kind k) { return enum_name(k_alloc_kinds, k); }

namespace {

struct driver_api {
  decltype(&cuMemCreate) mem_create = nullptr;
  decltype(&cuMemRelease) mem_release = nullptr;
  decltype(&cuMemAddressReserve) address_reserve = nullptr;
  decltype(&cuMemAddressFree) address_free = nullptr;
  decltype(&cuMemMap) mem_map = nullptr;
  decltype(&cuMemUnmap) mem_unmap = nullptr;
  decltype(&cuMemSetAccess) set_access = nullptr;
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&cuGetErrorName) error_name = nullptr;
};

template <class F> void load(F &fn, const char *name) {
  cudaDriverEntryPointQueryResult status{};
  void *p = nullptr;
  GPUPROBE_CUDA_CHECK(
      cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &status));
  if (status != cudaDriverEntryPointSuccess || !p)
    throw error(std::string("CUDA driver entry point ") + name + " not found (driver too old?)");
  fn = reinterpret_cast<F>(p);
}

const driver_api &api() {
  static const driver_api a = [] {
    driver_api d;
    load(d.mem_create, "cuMemCreate");
    load(d.mem_release, "cuMemRelease");
    load(d.address_reserve, "cuMemAddressReserve");
    load(d.address_free, "cuMemAddressFree");
    load(d.mem_map, "cuMemMap");
    load(d.mem_unmap, "cuMemUnmap");
    load(d.set_access, "cuMemSetAccess");
    load(d.granularity, "cuMemGetAllocationGranularity");
    load(d.error_name, "cuGetErrorName");
    return d;
  }();
  return a;
}

// A failed driver call, with its result (the alias pool retries CUDA_ERROR_OUT_OF_MEMORY).
struct driver_error : error {
  driver_error(const std::string &what, CUresult r) : error(what), result(r) {}
  CUresult result;
};

void cu_check(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS)
    return;
  const char *name = nullptr;
  if (api().error_name(r, &name) != CUDA_SUCCESS || !name)
    name = "?";
  throw driver_error(std::string("CUDA driver call ") + what + " failed (" + name + ", CUresult " +
                         std::to_string(int(r)) + ")",
                     r);
}

// The node's mapped-range budget for `bytes` of range on `device`, waited for with one line on
// stderr when other processes hold too much of it (common/node_budget.hpp).
node_budget reserve_range(std::size_t bytes, int device) {
  const budget_config c = budget_config::from_env();
  const stopwatch t0;
  bool waited = false, beside = false;
  node_budget b = node_budget::reserve(
      bytes, c,
      [&](std::uint64_t held) {
        waited = true;
        std::fprintf(stderr,
                     "[alias] device %d waits for %zu GiB of the node's %llu GiB mapped-range "
                     "budget (other processes hold %llu GiB; GPUPROBE_NODE_RANGE_GIB sets it)\n",
                     device, bytes >> 30, (unsigned long long)(c.total_bytes >> 30),
                     (unsigned long long)(held >> 30));
      },
      200, &beside);
  if (beside)
    std::fprintf(stderr,
                 "[alias] device %d: %zu GiB mapped beside the node's budget (this process holds "
                 "%llu GiB of it and does not wait while it holds)\n",
                 device, bytes >> 30, (unsigned long long)(node_budget::held_here() >> 30));
  if (waited)
    std::fprintf(stderr, "[alias] device %d: budget granted after %.1f s\n", device, t0.seconds());
  return b;
}

CUmemAllocationProp device_prop(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

// Reserves `bytes` of virtual range aligned to the smallest power of two that holds it (at most
// 1 TiB), halving the alignment down to `slot` while the driver refuses: a TLB's hashed set index
// sees consecutive pages from a boundary of every size, so the same footprint fills the sets
// alike in every run (a range 2 MiB-aligned only moved where misses begin by up to 8 pages), and
// no page number of the range carries into a bit above it (tlb-conflict's 327 GiB range, aligned
// to 256 GiB, made L3's page numbers vary in one bit more than its pages span). False when even
// `slot` alignment is refused.
bool reserve_aligned(std::size_t bytes, std::size_t slot, CUdeviceptr &va) {
  const auto &d = api();
  std::size_t align = slot;
  while (align < bytes && align < (std::size_t(1) << 40))
    align *= 2;
  while (align > slot && d.address_reserve(&va, bytes, align, 0, 0) != CUDA_SUCCESS)
    align /= 2;
  return align > slot || d.address_reserve(&va, bytes, slot, 0, 0) == CUDA_SUCCESS;
}

// An alias range's mapped slots (`mapped`: 1 per mapped slot) unmapped, a run of them a call (the
// whole range in one call when every slot is mapped), slot by slot where a run's call fails; then
// the chunk and the range.
void unmap_alias(CUdeviceptr va, std::size_t bytes, std::size_t slot,
                 const std::vector<std::uint8_t> &mapped,
                 const std::vector<unsigned long long> &handles) noexcept {
  const auto &d = api();
  for (const auto &[first, last] : slot_runs(mapped, mapped.size()))
    if (d.mem_unmap(va + first * slot, (last - first) * slot) != CUDA_SUCCESS)
      for (std::size_t k = first; k < last; ++k)
        (void)d.mem_unmap(va + k * slot, slot);
  for (auto h : handles)
    (void)d.mem_release(h);
  (void)d.address_free(va, bytes);
}

// The range an alias_keeper keeps between pools (none: ptr null). Its destructor calls no driver
// function (a process that ends without the keeper's end leaves the unmapping to the driver).
struct kept_range {
  bool keeping = false;
  char *ptr = nullptr;
  std::size_t bytes = 0, slot = 0;
  int device = -1;
  unsigned long long handle = 0;
  std::vector<std::uint8_t> mapped; // per slot: 1 once mapped (a pool maps what its walks need)
  node_budget budget;
};
std::mutex g_kept_mutex;
kept_range g_kept;

// Unmaps the kept range (under g_kept_mutex).
void drop_kept() noexcept {
  if (!g_kept.ptr)
    return;
  unmap_alias(reinterpret_cast<CUdeviceptr>(g_kept.ptr), g_kept.bytes, g_kept.slot, g_kept.mapped,
              {g_kept.handle});
  g_kept.ptr = nullptr;
  g_kept.budget.release();
}

} // namespace

std::size_t device_pool::vmm_granularity(int device) {
  const CUmemAllocationProp prop = device_prop(device);
  std::size_t g = 0;
  cu_check(api().granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
           "cuMemGetAllocationGranularity");
  return g;
}

device_pool::device_pool(alloc_kind kind, std::size_t bytes, int device, std::uint64_t seed,
                         std::size_t slot_bytes, std::vector<alias_walk> walks)
    : kind_(kind), bytes_(bytes), walks_(std::move(walks)) {
  if (bytes == 0)
    throw error("device_pool: zero bytes requested");
  switch (kind) {
  case alloc_kind::cudamalloc:
    GPUPROBE_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    break;
  case alloc_kind::managed:
    make_managed(device);
    break;
  case alloc_kind::vmm:
  case alloc_kind::vmm_sparse:
    make_scattered(device, seed, slot_bytes);
    break;
  case alloc_kind::alias:
    make_alias(device, slot_bytes);
    break;
  }
}

// cudaMallocManaged, advised to and prefetched onto `device`.
void device_pool::make_managed(int device) {
  const std::size_t bytes = bytes_;
  GPUPROBE_CUDA_CHECK(cudaMallocManaged(&ptr_, bytes));
  cudaMemLocation loc{};
  loc.type = cudaMemLocationTypeDevice;
  loc.id = device;
  GPUPROBE_CUDA_CHECK(cudaMemAdvise(ptr_, bytes, cudaMemAdviseSetPreferredLocation, loc));
  GPUPROBE_CUDA_CHECK(cudaMemPrefetchAsync(ptr_, bytes, loc, 0, 0));
  GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
}

// vmm and vmm_sparse: chunks of the granularity mapped at shuffled slots of a reserved range.
void device_pool::make_scattered(int device, std::uint64_t seed, std::size_t slot_bytes) {
  const alloc_kind kind = kind_;
  const std::size_t bytes = bytes_;
  const auto &d = api();
  granularity_ = vmm_granularity(device);
  const bool sparse = kind == alloc_kind::vmm_sparse;
  const std::size_t slot = sparse ? slot_bytes : granularity_;
  slot_ = slot;
  if (slot == 0 || slot % granularity_ != 0)
    throw error("vmm-sparse: slot size must be a multiple of the " + std::to_string(granularity_) +
                "-byte granularity");
  bytes_ = (bytes + slot - 1) / slot * slot;
  const std::size_t chunks = bytes_ / slot;
  CUdeviceptr va = 0;
  const bool pow2 = (slot & (slot - 1)) == 0; // slots aligned to their own size when possible
  cu_check(d.address_reserve(&va, bytes_, sparse && pow2 ? slot : granularity_, 0, 0),
           "cuMemAddressReserve");
  ptr_ = reinterpret_cast<char *>(va);
  // Chunk i (created in order, so likely physically adjacent to chunk i+1) goes to the
  // shuffled virtual slot perm[i] (sparse: the first granule of that slot).
  std::vector<std::size_t> perm(chunks);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(seed));
  const CUmemAllocationProp prop = device_prop(device);
  handles_.reserve(chunks);
  try {
    for (std::size_t i = 0; i < chunks; ++i) {
      CUmemGenericAllocationHandle h{};
      cu_check(d.mem_create(&h, granularity_, &prop, 0), "cuMemCreate");
      handles_.push_back(h);
      cu_check(d.mem_map(va + perm[i] * slot, granularity_, 0, h, 0), "cuMemMap");
    }
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (sparse) {
      for (std::size_t i = 0; i < chunks; ++i)
        cu_check(d.set_access(va + i * slot, granularity_, &access, 1), "cuMemSetAccess");
    } else {
      cu_check(d.set_access(va, bytes_, &access, 1), "cuMemSetAccess");
    }
  } catch (...) {
    release(); // not ~device_pool(): the members would then be destroyed twice
    throw;
  }
}

// alias: one chunk mapped at every slot, the mapping retried while another process maps.
void device_pool::make_alias(int device, std::size_t slot_bytes) {
  const std::size_t bytes = bytes_;
  granularity_ = vmm_granularity(device);
  slot_ = slot_bytes ? slot_bytes : granularity_;
  if (slot_ % granularity_ != 0)
    throw error("--alias-bytes " + std::to_string(slot_) + " is not a multiple of the driver's " +
                std::to_string(granularity_) + "-byte VMM granularity");
  bytes_ = (bytes + slot_ - 1) / slot_ * slot_;
  device_ = device;
  if (take_kept_alias(device)) {
    try { // the slots this pool's walks need that the kept range lacks
      map_slots(touched_slots(walks_, slot_, bytes_ / slot_));
    } catch (const driver_error &e) {
      release();
      throw error(e.what());
    }
    return;
  }
  alias_keeper::drop(); // a kept range this pool does not fit in: its budget back first
  // The range's bytes are reserved from the node's budget first and held until it is unmapped:
  // the driver grants the node just under 1 TiB of mapped range in all, over processes and GPUs
  // (docs/fleet.md), so processes map at once while their ranges fit together and wait otherwise.
  // A CUDA_ERROR_OUT_OF_MEMORY (range held outside the budget: another program, a budget set too
  // high) is retried after the pool made so far is released.
  budget_ = reserve_range(bytes_, device);
  constexpr int k_attempts = 5;
  for (int attempt = 1;; ++attempt) {
    try {
      map_alias(device);
      range_bytes_ = bytes_; // mapped whole: a keeper may keep it
      break;
    } catch (const driver_error &e) {
      release();
      if (e.result != CUDA_ERROR_OUT_OF_MEMORY || attempt == k_attempts)
        throw error(e.what());
      std::fprintf(stderr, "[alias] %s: attempt %d of %d failed, retrying in %d s\n", e.what(),
                   attempt, k_attempts, 3 * attempt);
      std::this_thread::sleep_for(std::chrono::seconds(3 * attempt));
    }
  }
}

bool device_pool::take_kept_alias(int device) {
  const std::lock_guard<std::mutex> lock(g_kept_mutex);
  if (!g_kept.ptr || g_kept.device != device || g_kept.slot != slot_ || g_kept.bytes < bytes_)
    return false;
  ptr_ = g_kept.ptr;
  range_bytes_ = g_kept.bytes;
  mapped_ = std::move(g_kept.mapped);
  handles_ = {g_kept.handle};
  budget_ = std::move(g_kept.budget);
  g_kept.ptr = nullptr;
  reused_ = true;
  return true;
}

void device_pool::map_alias(int device) {
  const auto &d = api();
  CUdeviceptr va = 0;
  if (!reserve_aligned(bytes_, slot_, va)) {
    // Say how much the driver does grant: the largest power-of-two share of the request.
    std::size_t granted = bytes_ / 2 / slot_ * slot_;
    while (granted >= slot_ && d.address_reserve(&va, granted, slot_, 0, 0) != CUDA_SUCCESS)
      granted = granted / 2 / slot_ * slot_;
    if (granted >= slot_)
      (void)d.address_free(va, granted);
    throw error("the driver refused a virtual range of " + std::to_string(bytes_ >> 30) +
                " GiB; it granted " + std::to_string(granted >> 30) +
                " GiB: give a smaller --max-bytes");
  }
  ptr_ = reinterpret_cast<char *>(va);
  mapped_.assign(bytes_ / slot_, 0);
  const CUmemAllocationProp prop = device_prop(device);
  CUmemGenericAllocationHandle h{};
  cu_check(d.mem_create(&h, slot_, &prop, 0), "cuMemCreate");
  handles_.push_back(h);
  map_slots(touched_slots(walks_, slot_, bytes_ / slot_));
}

// The slots `need` names that are not mapped yet: the one chunk at each, then access in runs of at
// most 64 GiB (the driver's work per call stays bounded).
void device_pool::map_slots(const std::vector<std::uint8_t> &need) {
  const auto &d = api();
  const auto va = reinterpret_cast<CUdeviceptr>(ptr_);
  const std::string where = " on device " + std::to_string(device_);
  std::vector<std::uint8_t> fresh(mapped_.size(), 0);
  for (std::size_t i = 0; i < need.size() && i < mapped_.size(); ++i) {
    if (!need[i] || mapped_[i])
      continue;
    if (const CUresult r = d.mem_map(va + i * slot_, slot_, 0, handles_[0], 0); r != CUDA_SUCCESS)
      cu_check(r, ("cuMemMap (alias) at slot " + std::to_string(i) + " of " +
                   std::to_string(mapped_.size()) + where)
                      .c_str());
    mapped_[i] = fresh[i] = 1;
    ++newly_mapped_;
  }
  CUmemAccessDesc access{};
  access.location = device_prop(device_).location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  for (const auto &[first, last] : slot_runs(fresh, (std::size_t(64) << 30) / slot_))
    cu_check(d.set_access(va + first * slot_, (last - first) * slot_, &access, 1),
             ("cuMemSetAccess (alias)" + where).c_str());
}

device_pool::~device_pool() { release(); }

void device_pool::release() noexcept {
  if (!ptr_)
    return;
  if (kind_ == alloc_kind::vmm || kind_ == alloc_kind::vmm_sparse || kind_ == alloc_kind::alias) {
    const auto &d = api();
    const auto va = reinterpret_cast<CUdeviceptr>(ptr_);
    if (kind_ == alloc_kind::alias) {
      const std::size_t range = range_bytes();
      {
        const std::lock_guard<std::mutex> lock(g_kept_mutex);
        // The larger range is kept: a small pool that ends after a large one (tlb-coverage's
        // small layout beside its whole range) must not leave the next large pool to map again.
        if (g_kept.keeping && range_bytes_ && handles_.size() == 1 &&
            (!g_kept.ptr || g_kept.bytes < range_bytes_)) {
          drop_kept();
          g_kept.ptr = ptr_; // kept whole, mapped, for the next alias pool (alias_keeper)
          g_kept.bytes = range_bytes_;
          g_kept.slot = slot_;
          g_kept.device = device_;
          g_kept.handle = handles_[0];
          g_kept.mapped = std::move(mapped_);
          g_kept.budget = std::move(budget_);
          handles_.clear();
          ptr_ = nullptr;
          return;
        }
      }
      unmap_alias(va, range, slot_, mapped_, handles_); // budget_: held till the pool ends
      handles_.clear();
      ptr_ = nullptr;
      return;
    } else if (kind_ == alloc_kind::vmm_sparse) {
      // Unmapping a slot that was never mapped (a failed constructor) fails harmlessly.
      for (std::size_t off = 0; off < bytes_; off += slot_)
        (void)d.mem_unmap(va + off, granularity_);
    } else {
      (void)d.mem_unmap(va, bytes_); // unmaps every mapped chunk of the range
    }
    for (auto h : handles_)
      (void)d.mem_release(h);
    (void)d.address_free(va, bytes_);
    handles_.clear();
  } else {
    GPUPROBE_CUDA_CHECK_NOTHROW(cudaFree(ptr_));
  }
  ptr_ = nullptr;
}

alias_keeper::alias_keeper() {
  const std::lock_guard<std::mutex> lock(g_kept_mutex);
  if (g_kept.keeping)
    throw error("alias_keeper: one keeper at a time");
  g_kept.keeping = true;
}

alias_keeper::~alias_keeper() {
  const std::lock_guard<std::mutex> lock(g_kept_mutex);
  drop_kept();
  g_kept.keeping = false;
}

std::size_t alias_keeper::kept_bytes() {
  const std::lock_guard<std::mutex> lock(g_kept_mutex);
  return g_kept.ptr ? g_kept.bytes : 0;
}

void alias_keeper::drop() {
  const std::lock_guard<std::mutex> lock(g_kept_mutex);
  drop_kept();
}

namespace {
// Never destroyed: a process that ends without its keeper's end (exit inside a stage) leaves the
// kept pool to the driver, not to a destructor that would run after the CUDA runtime's own.
pool_shelf<device_pool, pool_key> &shelf() {
  static auto *s = new pool_shelf<device_pool, pool_key>;
  return *s;
}
} // namespace

pool_keeper::pool_keeper() : opened_(shelf().open()) {}

pool_keeper::~pool_keeper() {
  if (opened_)
    shelf().close();
}

void pool_keeper::drop() { shelf().drop(); }

std::optional<pool_key> pool_keeper::kept() { return shelf().kept(); }

std::size_t pool_keeper::kept_device_bytes() {
  const auto k = shelf().kept();
  if (!k)
    return 0;
  const std::size_t g = k->kind == alloc_kind::vmm ? device_pool::vmm_granularity(k->device) : 0;
  return g ? (k->bytes + g - 1) / g * g : k->bytes; // vmm: whole chunks
}

std::shared_ptr<device_pool> keepable_pool(alloc_kind kind, std::size_t bytes, int device,
                                           std::uint64_t seed, bool *taken) {
  const pool_key key{kind, bytes, device, seed};
  std::unique_ptr<device_pool> p = shelf().take(key); // anything else kept is freed here
  if (taken)
    *taken = p != nullptr;
  if (!p)
    p = std::make_unique<device_pool>(kind, bytes, device, seed);
  return std::shared_ptr<device_pool>(p.release(), [key](device_pool *q) {
    shelf().give_back(key, std::unique_ptr<device_pool>(q)); // kept while a keeper lives
  });
}

std::size_t slot_layout::mapped_slots() const {
  return std::size_t(std::count_if(chunk_of.begin(), chunk_of.end(), [](int c) { return c >= 0; }));
}

namespace {

// A slot pool's physical chunks into `handles`: one allocation mapped whole (cuMemMap maps a
// handle from its start only, offset 0, so slot i is its i-th piece and the layout must be the
// identity; returns the piece's bytes), or one handle a chunk (returns 0).
std::size_t create_slot_chunks(const slot_layout &l, const CUmemAllocationProp &prop,
                               std::vector<unsigned long long> &handles) {
  const auto &d = api();
  if (l.one_allocation) {
    for (std::size_t i = 0; i < l.chunk_of.size(); ++i)
      if (l.chunk_of[i] != int(i) || std::size_t(l.chunks) != l.chunk_of.size())
        throw error("slot_pool: one allocation maps slot i to piece i, every slot");
    CUmemGenericAllocationHandle h{};
    cu_check(d.mem_create(&h, l.slot_bytes * std::size_t(l.chunks), &prop, 0), "cuMemCreate (one)");
    handles.push_back(h);
    return l.slot_bytes;
  }
  for (int c = 0; c < l.chunks; ++c) {
    CUmemGenericAllocationHandle h{};
    cu_check(d.mem_create(&h, l.slot_bytes, &prop, 0), "cuMemCreate (slot pool)");
    handles.push_back(h);
  }
  return 0;
}

// Maps every slot of the layout at `va` to its chunk (or the one allocation whole, `piece` > 0)
// and opens access per run of mapped slots, in pieces of at most 64 GiB (as alias). Returns where
// each chunk is first mapped (where it is zeroed).
std::vector<char *> map_layout(CUdeviceptr va, const slot_layout &l, std::size_t piece,
                               const std::vector<unsigned long long> &handles,
                               const CUmemAllocationProp &prop) {
  const auto &d = api();
  const std::size_t slot = l.slot_bytes, n = l.chunk_of.size();
  char *const ptr = reinterpret_cast<char *>(va);
  std::vector<char *> first_map(std::size_t(l.chunks), nullptr);
  if (piece) {
    cu_check(d.mem_map(va, n * slot, 0, handles[0], 0), "cuMemMap (slot pool, one allocation)");
    for (std::size_t i = 0; i < n; ++i)
      first_map[i] = ptr + i * slot;
  }
  for (std::size_t i = 0; i < n && !piece; ++i) {
    const int c = l.chunk_of[i];
    if (c < 0)
      continue;
    cu_check(d.mem_map(va + i * slot, slot, 0, handles[std::size_t(c)], 0), "cuMemMap (slot pool)");
    if (!first_map[std::size_t(c)])
      first_map[std::size_t(c)] = ptr + i * slot;
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const std::size_t max_run = std::max<std::size_t>(1, (std::size_t(64) << 30) / slot);
  for (std::size_t i = 0; i < n;) {
    if (l.chunk_of[i] < 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < n && l.chunk_of[j] >= 0 && j - i < max_run)
      ++j;
    cu_check(d.set_access(va + i * slot, (j - i) * slot, &access, 1), "cuMemSetAccess (slot pool)");
    i = j;
  }
  return first_map;
}

} // namespace

slot_pool::slot_pool(const slot_layout &l, int device)
    : slot_(l.slot_bytes), chunk_of_(l.chunk_of) {
  const stopwatch t0;
  const std::size_t g = device_pool::vmm_granularity(device);
  if (slot_ == 0 || slot_ % g != 0)
    throw error("slot_pool: slot bytes must be a multiple of the " + std::to_string(g) +
                "-byte VMM granularity");
  if (chunk_of_.empty() || l.chunks < 1)
    throw error("slot_pool: no slots or no chunks");
  for (int c : chunk_of_)
    if (c >= l.chunks)
      throw error("slot_pool: a slot names chunk " + std::to_string(c) + " of " +
                  std::to_string(l.chunks));
  bytes_ = chunk_of_.size() * slot_;
  if (!l.one_allocation && l.chunks == 1 &&
      std::all_of(chunk_of_.begin(), chunk_of_.end(), [](int c) { return c == 0; })) {
    whole_ = std::make_unique<device_pool>(alloc_kind::alias, bytes_, device, 0, slot_);
    GPUPROBE_CUDA_CHECK(cudaMemset(whole_->data(), 0, slot_)); // zeroed, as every layout's chunk
    GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
    map_seconds_ = t0.seconds();
    return;
  }
  const auto &d = api();
  // As alias: the node's budget, held until unmapped, for the slots mapped (the driver's cap counts
  // mapped range, not the reserved).
  budget_ = reserve_range(l.one_allocation ? bytes_ : l.mapped_slots() * slot_, device);
  try {
    CUdeviceptr va = 0;
    if (!reserve_aligned(bytes_, slot_, va)) // the refusal, named by the driver
      cu_check(d.address_reserve(&va, bytes_, slot_, 0, 0), "cuMemAddressReserve (slot pool)");
    ptr_ = reinterpret_cast<char *>(va);
    const CUmemAllocationProp prop = device_prop(device);
    piece_ = create_slot_chunks(l, prop, handles_);
    const auto first_map = map_layout(va, l, piece_, handles_, prop);
    for (char *p : first_map)
      if (p)
        GPUPROBE_CUDA_CHECK(cudaMemset(p, 0, slot_));
    GPUPROBE_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (...) {
    release();
    throw;
  }
  map_seconds_ = t0.seconds();
}

slot_pool::~slot_pool() { release(); }

void slot_pool::release() noexcept {
  if (!ptr_) {
    for (auto h : handles_)
      (void)api().mem_release(h);
    handles_.clear();
    return;
  }
  const auto &d = api();
  const auto va = reinterpret_cast<CUdeviceptr>(ptr_);
  if (piece_)
    (void)d.mem_unmap(va, bytes_); // one allocation: mapped whole
  // Each run of mapped slots in one call; slot by slot where that fails (a run a failed
  // constructor left half mapped: unmapping a slot never mapped fails harmlessly).
  for (std::size_t i = 0; i < chunk_of_.size() && !piece_;) {
    std::size_t j = i;
    while (j < chunk_of_.size() && chunk_of_[j] >= 0)
      ++j;
    if (j > i && d.mem_unmap(va + i * slot_, (j - i) * slot_) != CUDA_SUCCESS)
      for (std::size_t k = i; k < j; ++k)
        (void)d.mem_unmap(va + k * slot_, slot_);
    i = j + 1;
  }
  for (auto h : handles_)
    (void)d.mem_release(h);
  (void)d.address_free(va, bytes_);
  handles_.clear();
  ptr_ = nullptr;
}

vmm_growable::vmm_growable(std::size_t max_bytes, int device) : device_(device) {
  granularity_ = device_pool::vmm_granularity(device);
  max_ = (max_bytes + granularity_ - 1) / granularity_ * granularity_;
  if (max_ == 0)
    throw error("vmm_growable: zero bytes requested");
  CUdeviceptr va = 0;
  cu_check(api().address_reserve(&va, max_, granularity_, 0, 0), "cuMemAddressReserve");
  ptr_ = reinterpret_cast<char *>(va);
}

void vmm_growable::grow_to(std::size_t bytes) {
  if (bytes > max_)
    throw error("vmm_growable: " + std::to_string(bytes) + " bytes exceed the reserved " +
                std::to_string(max_));
  const auto &d = api();
  const auto va = reinterpret_cast<CUdeviceptr>(ptr_);
  const CUmemAllocationProp prop = device_prop(device_);
  const std::size_t first = handles_.size();
  while (mapped_bytes() < bytes) {
    CUmemGenericAllocationHandle h{};
    cu_check(d.mem_create(&h, granularity_, &prop, 0), "cuMemCreate");
    handles_.push_back(h);
    cu_check(d.mem_map(va + (handles_.size() - 1) * granularity_, granularity_, 0, h, 0),
             "cuMemMap");
  }
  if (handles_.size() == first)
    return;
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  cu_check(
      d.set_access(va + first * granularity_, (handles_.size() - first) * granularity_, &access, 1),
      "cuMemSetAccess");
}

vmm_growable::~vmm_growable() {
  const auto &d = api();
  const auto va = reinterpret_cast<CUdeviceptr>(ptr_);
  if (!handles_.empty())
    (void)d.mem_unmap(va, mapped_bytes());
  for (auto h : handles_)
    (void)d.mem_release(h);
  (void)d.address_free(va, max_);
}

} // namespace gpuprobe
