#pragma once
// CRW (RW paper, Alg. 5): a thread first tries the page after the last one it got; if that page
// is used it random-walks over pages (one page per step, as Eq. 9 models). The last page per
// thread lives in device memory indexed by global thread id, so it persists across launches.
#include "allocators/bitmap.cuh"

namespace gpuprobe::alloc {

struct crw_handle : pages_view {
  bitmap_view<std::uint32_t> bm;
  page_t* last;  // per global thread id; invalid_page: none yet
  std::uint32_t last_count;
  unsigned long long seed;
  unsigned max_random_steps;

  __device__ bool try_take(page_t p) const {
    const std::uint32_t bit = 1u << (p % 32);
    return !(bm.read(p / 32) & bit) && !(atomicOr(&bm.words[p / 32], bit) & bit);
  }
  template <class Steps>
  __device__ page_t get_page(Steps& st) const {
    const unsigned long long gtid = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
    page_t* slot = gtid < last_count ? &last[gtid] : nullptr;
    page_t p = slot ? *slot : invalid_page;
    if (p != invalid_page && p + 1 < bm.pages) {
      st.add();
      if (try_take(p + 1)) return *slot = p + 1;
    }
    rng64 r(thread_seed(seed));
    p = invalid_page;
    for (unsigned k = 0; k < max_random_steps && p == invalid_page; ++k) {
      const page_t q = r.below(bm.pages);
      st.add();
      if (try_take(q)) p = q;
    }
    if (p == invalid_page) p = bm.scan(r.below(bm.word_count), st);
    if (slot) *slot = p;
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
  explicit crw(const pool_config& c = {}, std::uint32_t max_threads = 1u << 21)
      : pool_(c), bm_(c.pages), last_(max_threads) {
    forget();
  }
  void prefill(std::uint64_t free_pages, std::uint64_t seed) {
    bm_.prefill(free_pages, seed);
    forget();
  }
  void load(const std::vector<std::uint8_t>& used) {
    bm_.load(used);
    forget();
  }
  void forget() { cuda_or_throw(cudaMemset(last_.get(), 0xff, last_.size() * sizeof(page_t)), "memset"); }
  std::vector<std::uint8_t> used_pattern() const { return bm_.used_pattern(); }
  handle_type handle() const {
    const auto& c = pool_.config();
    return {{pool_.data(), c.page_bytes}, bm_.view(), last_.get(), std::uint32_t(last_.size()), c.seed, c.max_random_steps};
  }
  const pool_config& config() const { return pool_.config(); }

 private:
  page_pool pool_;
  bitmap_storage<std::uint32_t> bm_;
  device_array<page_t> last_;
};

}  // namespace gpuprobe::alloc
