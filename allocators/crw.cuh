#pragma once
// CRW (RW paper, Alg. 5): a thread first tries the page after the last one it got; if that page
// is used it random-walks over pages (one page per step, as Eq. 9 models). The last page per
// thread lives in device memory indexed by global thread id, so it persists across launches.
// Cluster placement (tuning::crw, allocators/tuning.hpp): `thread` is Alg. 5; `warp` starts the
// lanes of a warp on one random 32-page block (page block + lane) and steps by 32, so a warp's
// pages stay contiguous; `warp_vm` also keeps a warp's walk inside one VM page.
#include "allocators/bitmap.cuh"

#include <algorithm>

namespace gpuprobe::alloc {

struct crw_handle : pages_view {
  static constexpr const char *name = "crw";
  bitmap_view<std::uint32_t> bm;
  page_t *last; // per global thread id; invalid_page: none yet
  std::uint32_t last_count;
  unsigned long long seed;
  unsigned max_random_steps;
  crw_start start;
  std::uint32_t vm_pages; // pages per VM page (warp_vm), a multiple of 32

  __device__ bool try_take(page_t p) const {
    const std::uint32_t bit = 1u << (p % 32);
    return !(bm.read(p / 32) & bit) && !(atomicOr(&bm.words[p / 32], bit) & bit);
  }
  template <class Steps> __device__ page_t get_page(Steps &st) const {
    const unsigned long long gtid = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
    page_t *slot = gtid < last_count ? &last[gtid] : nullptr;
    page_t p = slot ? *slot : invalid_page;
    const page_t stride = start == crw_start::thread ? 1u : 32u;
    const bool leaves_vm_page =
        start == crw_start::warp_vm && (p + stride) / vm_pages != p / vm_pages;
    if (p != invalid_page && p + stride < bm.pages && !leaves_vm_page) {
      st.add();
      if (try_take(p + stride))
        return *slot = p + stride;
    }
    rng64 r(thread_seed(seed));
    p = invalid_page;
    if (start !=
        crw_start::thread) { // the lanes here start a block together: the lowest lane draws it
      const unsigned active = __activemask();
      const std::uint32_t block =
          __shfl_sync(active, r.below(bm.word_count), __ffs(int(active)) - 1);
      const page_t q = block * 32u + detail::lane_id();
      st.add();
      if (q < bm.pages && try_take(q))
        p = q;
    }
    for (unsigned k = 0; k < max_random_steps && p == invalid_page; ++k) {
      const page_t q = r.below(bm.pages);
      st.add();
      if (try_take(q))
        p = q;
    }
    if (p == invalid_page)
      p = bm.scan(r.below(bm.word_count), st);
    if (slot)
      *slot = p;
    return p;
  }
  __device__ page_t get_page() const {
    no_steps s;
    return get_page(s);
  }
  __device__ void free_page(page_t p) const { bm.free_page(p); }
};

class crw {
public:
  using handle_type = crw_handle;
  // max_threads: threads whose last page is remembered (global ids beyond it just random-walk).
  // t.crw: the cluster placement (the rest of a tuning profile does not apply to CRW).
  explicit crw(const pool_config &c = {}, std::uint32_t max_threads = 1u << 21,
               const tuning &t = {})
      : pool_(c), bm_(c.pages), last_(max_threads), start_(t.crw),
        vm_pages_(c.page_bytes ? std::uint32_t(std::max<std::uint64_t>(
                                     32, t.vm_page_bytes / c.page_bytes / 32 * 32))
                               : 1u << 16) {
    forget();
  }
  void prefill(std::uint64_t free_pages, std::uint64_t seed) {
    bm_.prefill(free_pages, seed);
    forget();
  }
  void load(const std::vector<std::uint8_t> &used) { load_packed(pack(used)); }
  // The same state packed once by the caller (pack(used)); loading also forgets the last pages.
  using packed_state = std::vector<std::uint32_t>;
  static packed_state pack(const std::vector<std::uint8_t> &used) {
    return pack_bitmap<std::uint32_t>(used);
  }
  void load_packed(const packed_state &w) {
    bm_.load_words(w);
    forget();
  }
  // The same occupancy with every thread's last page kept: the state Eq. 7 describes, each
  // thread starting at the page after the one its previous call got (BM_getpage's warm rows).
  void load_packed_keep_last(const packed_state &w) { bm_.load_words(w); }
  void forget() {
    cuda_or_throw(cudaMemset(last_.get(), 0xff, last_.size() * sizeof(page_t)), "memset");
  }
  std::vector<std::uint8_t> used_pattern() const { return bm_.used_pattern(); }
  handle_type handle() const {
    const auto &c = pool_.config();
    return {
        {pool_.data(), c.page_bytes}, bm_.view(), last_.get(), std::uint32_t(last_.size()), c.seed,
        c.max_random_steps,           start_,     vm_pages_};
  }
  const pool_config &config() const { return pool_.config(); }

private:
  page_pool pool_;
  bitmap_storage<std::uint32_t> bm_;
  device_array<page_t> last_;
  crw_start start_;
  std::uint32_t vm_pages_;
};

} // namespace gpuprobe::alloc
