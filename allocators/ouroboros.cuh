#pragma once
// Ouroboros-style baselines (Winter et al., "Ouroboros: Virtualized Queues for Dynamic Memory
// Management on GPUs"), written here with our owner + handle shape.
//
// The pool is cut into chunks (default 8 KiB) handed out by a bump counter; a chunk is split into
// pages of one power-of-two size, 16 B up to the chunk. One index queue per page size, each
// guarded by a bulk semaphore (Alg. 2): a counter of the items in the queue minus reservations;
// one reservation in every P takes a new chunk of P pages and enqueues the P - 1 it does not keep,
// so concurrent waiters share one new chunk.
//  - ouroboros_page (§4.1): the queues hold page indices; alloc = semaphore + dequeue, free =
//    enqueue + signal.
//  - ouroboros_chunk (§4.2): the queues hold chunks with free pages; a chunk keeps a free-page
//    bit mask and count. alloc = semaphore, then walk the queue from its front to a chunk with a
//    free bit; a chunk found full at the front is dequeued; the first free on a chunk that is not
//    queued enqueues it again.
// Queues are rings of `queue_capacity` entries (static), or with `virtualized` (§5.1, VAQ) their
// storage lives on chunks taken from the pool when a segment is first written. A request is
// rounded up to a power of two (so 4100 B costs what 8192 B costs); larger than a chunk: nullptr.
// Chunks are never returned to the pool (a simplification; the paper's chunk queue can).
#include "allocators/common.cuh"

#include <type_traits>
#include <vector>

namespace gpuprobe::alloc {

struct ouroboros_config {
  std::uint64_t pool_bytes = 1ull << 34;
  std::uint32_t chunk_bytes = 8192;
  std::uint32_t queue_capacity = 1u << 22; // entries per page size (a power of two)
  bool virtualized = false;
};

namespace detail {
constexpr std::uint32_t q_empty = 0xffffffffu;
constexpr std::uint32_t q_poison =
    0xfffffffeu; // a promised item that will never come (pool exhausted)
constexpr std::uint32_t q_gone = 0xfffffffdu; // chunk queue: a poison entry already consumed
constexpr unsigned min_page_log2 = 4;         // 16 B

struct alignas(128) ouro_class_state {
  int sem; // bulk semaphore: items in the queue minus reservations
  unsigned long long front, back;
  unsigned long long dropped; // frees not queued because the queue was near its capacity
};

// The shared machinery of both variants: chunk bump, queues (static or virtualized), semaphore.
struct ouro_base {
  char *data;
  unsigned long long *chunk_next; // bump counter of chunks
  std::uint32_t *chunk_class;     // page-size class of each chunk taken
  ouro_class_state *cls;
  std::uint32_t *slots;     // static: classes x capacity; virtualized: unused
  std::uint32_t **segments; // virtualized: classes x (capacity / per_segment) segment pointers
  std::uint32_t chunks;
  std::uint32_t chunk_bytes;
  std::uint32_t capacity;
  unsigned classes;
  bool virtualized;

  __device__ unsigned class_of(std::size_t bytes) const {
    unsigned c = 0;
    while ((std::size_t(1) << (c + min_page_log2)) < bytes)
      ++c;
    return c;
  }
  __device__ std::uint32_t page_bytes(unsigned c) const { return 1u << (c + min_page_log2); }
  __device__ std::uint32_t pages_per_chunk(unsigned c) const { return chunk_bytes / page_bytes(c); }
  __device__ std::uint32_t max_pages() const { return chunk_bytes >> min_page_log2; }

  // A fresh chunk for class c, or q_empty when the pool is used up.
  __device__ std::uint32_t new_chunk(unsigned c) const {
    const unsigned long long id = atomicAdd(chunk_next, 1ull);
    if (id >= chunks)
      return q_empty;
    chunk_class[id] = c;
    return std::uint32_t(id);
  }

  // The slot of virtual queue position pos of class c (virtualized: waits for / takes its segment).
  __device__ std::uint32_t *slot(unsigned c, unsigned long long pos, bool producer) const {
    const std::uint32_t i = std::uint32_t(pos % capacity);
    if (!virtualized)
      return &slots[std::size_t(c) * capacity + i];
    const std::uint32_t per = chunk_bytes / 4, s = i / per;
    std::uint32_t **seg = &segments[std::size_t(c) * (capacity / per) + s];
    auto read = [seg] {
      return reinterpret_cast<std::uint32_t *>(
          atomicAdd(reinterpret_cast<unsigned long long *>(seg), 0ull));
    };
    std::uint32_t *p = read();
    if (!p && producer && i % per == 0) { // the first producer of a segment takes a chunk for it
      const std::uint32_t ch = new_chunk(classes); // class id `classes`: a queue chunk
      if (ch == q_empty)
        __trap(); // no room for the queue itself
      p = reinterpret_cast<std::uint32_t *>(data + std::size_t(ch) * chunk_bytes);
      for (std::uint32_t k = 0; k < per; ++k)
        p[k] = q_empty;
      __threadfence();
      atomicExch(reinterpret_cast<unsigned long long *>(seg),
                 reinterpret_cast<unsigned long long>(p));
    }
    while (!p) {
      __nanosleep(64);
      p = read();
    }
    return p + i % per;
  }

  __device__ void enqueue(unsigned c, std::uint32_t v) const {
    const unsigned long long pos = atomicAdd(&cls[c].back, 1ull);
    std::uint32_t *s = slot(c, pos, true);
    while (atomicCAS(s, q_empty, v) != q_empty)
      __nanosleep(32);
  }
  // Alg. 3 line 4: one atomicAdd reserves n positions; the items are written without waiting on
  // one another (positions ahead of the front are empty: frees keep the queue under its capacity).
  __device__ void enqueue_run(unsigned c, std::uint32_t first, std::uint32_t n) const {
    const unsigned long long pos = atomicAdd(&cls[c].back, (unsigned long long)n);
    for (std::uint32_t i = 0; i < n; ++i)
      atomicExch(slot(c, pos + i, true), first + i);
  }
  __device__ std::uint32_t dequeue(unsigned c) const {
    const unsigned long long pos = atomicAdd(&cls[c].front, 1ull);
    std::uint32_t *s = slot(c, pos, false);
    std::uint32_t v;
    while ((v = atomicExch(s, q_empty)) == q_empty)
      __nanosleep(32);
    return v;
  }

  // Bulk semaphore (Alg. 2, one counter): items in the queue minus reservations. wait(1) is one
  // atomicSub. old > 0: an item is there. old <= 0: a reservation of the (1 - old)-th item still to
  // come; every P-th reservation ((-old) % P == 0) takes a new chunk, P items for itself and the
  // next P - 1 reservations, so concurrent waiters share one chunk. Frees only raise the count, so
  // no P reservations lack their chunk (one may come early: its items wait in the queue).
  // Returns true for a token (dequeue / walk), false for "take a chunk, then sem_signal_chunk".
  __device__ bool sem_wait(unsigned c, int P) const {
    const int old = atomicSub(&cls[c].sem, 1);
    return old > 0 || (-old) % P != 0;
  }
  // The chunk taker's P items: its own, and P - 1 already in the queue (pages, chunk entry, or
  // poison when the pool is used up: the reservations they serve get nullptr).
  __device__ void sem_signal_chunk(unsigned c, int P) const { atomicAdd(&cls[c].sem, P); }
  __device__ void poison(unsigned c, int n) const {
    for (int i = 0; i < n; ++i)
      enqueue(c, q_poison);
    sem_signal_chunk(c, n + 1);
  }
};
} // namespace detail

struct ouroboros_page_handle : detail::ouro_base {
  static constexpr const char *name = "ouroboros_page";
  __device__ void *malloc(std::size_t bytes) const {
    if (bytes == 0 || bytes > chunk_bytes)
      return nullptr;
    const unsigned c = class_of(bytes);
    const int P = int(pages_per_chunk(c));
    std::uint32_t idx;
    if (sem_wait(c, P)) {
      idx = dequeue(c);
      if (idx == detail::q_poison)
        return nullptr;
    } else {
      const std::uint32_t ch = new_chunk(c);
      if (ch == detail::q_empty) {
        poison(c, P - 1);
        return nullptr;
      }
      if (P > 1)
        enqueue_run(c, ch * max_pages() + 1, std::uint32_t(P - 1));
      sem_signal_chunk(c, P);
      idx = ch * max_pages();
    }
    const std::uint32_t ch = idx / max_pages(), p = idx % max_pages();
    return data + std::size_t(ch) * chunk_bytes + std::size_t(p) * page_bytes(c);
  }
  __device__ void free(void *ptr) const {
    if (!ptr)
      return;
    const std::size_t off = std::size_t(static_cast<char *>(ptr) - data);
    const std::uint32_t ch = std::uint32_t(off / chunk_bytes), c = chunk_class[ch];
    if (atomicAdd(&cls[c].sem, 0) >=
        int(capacity - min(capacity / 2, 1024u))) { // Alg. 3 line 17: no spot left
      atomicAdd(&cls[c].dropped, 1ull);             // the page is lost to this run (counted)
      return;
    }
    enqueue(c, ch * max_pages() + std::uint32_t(off % chunk_bytes) / page_bytes(c));
    atomicAdd(&cls[c].sem, 1); // signal after the item is in the queue
  }
};

struct ouroboros_chunk_handle : detail::ouro_base {
  static constexpr const char *name = "ouroboros_chunk";
  unsigned long long *mask; // per chunk: max_pages() / 64 words, bit set = page free
  int *free_count;          // per chunk
  std::uint32_t *queued;    // per chunk: 1 while the chunk is in its queue

  __device__ std::uint32_t mask_words() const { return (max_pages() + 63) / 64; }

  __device__ void *malloc(std::size_t bytes) const {
    if (bytes == 0 || bytes > chunk_bytes)
      return nullptr;
    const unsigned c = class_of(bytes);
    const std::uint32_t P = pages_per_chunk(c);
    if (!sem_wait(c, int(P))) { // take a chunk: page 0 is ours, the rest go to the queue
      const std::uint32_t ch = new_chunk(c);
      if (ch == detail::q_empty) {
        poison(c, int(P) - 1);
        return nullptr;
      }
      unsigned long long *m = mask + std::size_t(ch) * mask_words();
      for (std::uint32_t w = 0; w < mask_words(); ++w) {
        const std::uint32_t lo = w * 64, hi = min(P, lo + 64);
        m[w] = hi <= lo
                   ? 0ull
                   : (hi - lo == 64 ? ~0ull : ((1ull << (hi - lo)) - 1)) & ~(w == 0 ? 1ull : 0ull);
      }
      free_count[ch] = int(P) - 1;
      queued[ch] = 1;
      __threadfence();
      enqueue(c, ch);
      sem_signal_chunk(c, int(P));
      return data + std::size_t(ch) * chunk_bytes;
    }
    // A token: some queued chunk has (or will have) a free page. Walk from the front; every
    // entry in [f0, pos] has failed us, so when the front is still f0 they all leave the queue at
    // once (the front jumps past them) and are re-enqueued if a free raced with the walk.
    for (unsigned long long f0 = atomicAdd(&cls[c].front, 0ull), pos = f0;;) {
      if (pos >= atomicAdd(&cls[c].back, 0ull)) { // promised pages not enqueued yet
        __nanosleep(64);
        pos = f0 = atomicAdd(&cls[c].front, 0ull);
        continue;
      }
      std::uint32_t *s = slot(c, pos, false);
      const std::uint32_t ch = atomicAdd(s, 0u);
      if (ch == detail::q_empty) { // removed behind a front that moved on, or not written yet
        const unsigned long long fr = atomicAdd(&cls[c].front, 0ull);
        if (fr > pos)
          pos = f0 = fr;
        else
          __nanosleep(32);
        continue;
      }
      if (ch == detail::q_poison &&
          atomicCAS(s, detail::q_poison, detail::q_gone) == detail::q_poison)
        return nullptr;
      if (ch < chunks)
        if (void *p = take_page(c, ch))
          return p;
      const unsigned long long old = atomicCAS(&cls[c].front, f0, pos + 1);
      if (old == f0) {
        for (unsigned long long q = f0; q <= pos; ++q)
          leave_queue(c, q);
        pos = f0 = pos + 1;
        continue;
      }
      f0 = old;
      pos = pos + 1 > old ? pos + 1 : old;
    }
  }

  __device__ void free(void *ptr) const {
    if (!ptr)
      return;
    const std::size_t off = std::size_t(static_cast<char *>(ptr) - data);
    const std::uint32_t ch = std::uint32_t(off / chunk_bytes), c = chunk_class[ch];
    const std::uint32_t p = std::uint32_t(off % chunk_bytes) / page_bytes(c);
    atomicOr(&mask[std::size_t(ch) * mask_words() + p / 64], 1ull << (p % 64));
    atomicAdd(&free_count[ch], 1);
    if (atomicExch(&queued[ch], 1u) == 0u)
      enqueue(c, ch);
    atomicAdd(&cls[c].sem, 1);
  }

private:
  // Entry q is behind the front now: empty its slot; a chunk with free pages goes back in.
  __device__ void leave_queue(unsigned c, unsigned long long q) const {
    const std::uint32_t ch = atomicExch(slot(c, q, false), detail::q_empty);
    if (ch >= chunks)
      return; // consumed poison
    atomicExch(&queued[ch], 0u);
    if (atomicAdd(&free_count[ch], 0) > 0 && atomicExch(&queued[ch], 1u) == 0u)
      enqueue(c, ch);
  }
  __device__ void *take_page(unsigned c, std::uint32_t ch) const {
    if (atomicAdd(&free_count[ch], 0) <= 0)
      return nullptr;
    unsigned long long *m = mask + std::size_t(ch) * mask_words();
    const std::uint32_t words = (pages_per_chunk(c) + 63) / 64,
                        w0 = std::uint32_t(clock64()) % words; // spread the takers
    for (std::uint32_t i = 0; i < words; ++i) {
      const std::uint32_t w = w0 + i < words ? w0 + i : w0 + i - words;
      for (unsigned long long x = __ldcg(&m[w]); x;) {
        const unsigned long long bit = x & (~x + 1);
        const unsigned long long old = atomicAnd(&m[w], ~bit);
        if (old & bit) {
          atomicSub(&free_count[ch], 1);
          return data + std::size_t(ch) * chunk_bytes +
                 std::size_t(w * 64 + unsigned(__ffsll((long long)bit) - 1)) * page_bytes(c);
        }
        x = old & ~bit;
      }
    }
    return nullptr;
  }
};

// Owner of either variant (Handle = ouroboros_page_handle or ouroboros_chunk_handle).
template <class Handle> class ouroboros_allocator {
public:
  using handle_type = Handle;
  explicit ouroboros_allocator(const ouroboros_config &c = {})
      : cfg_(checked(c)), chunks_(std::uint32_t(c.pool_bytes / c.chunk_bytes)),
        classes_(log2(c.chunk_bytes) - detail::min_page_log2 + 1),
        data_(std::size_t(chunks_) * c.chunk_bytes), next_(1), chunk_class_(chunks_),
        cls_(classes_), slots_(c.virtualized ? 0 : std::size_t(classes_) * c.queue_capacity),
        segments_(c.virtualized ? std::size_t(classes_) * (c.queue_capacity / (c.chunk_bytes / 4))
                                : 0),
        mask_(is_chunk ? std::size_t(chunks_) * ((c.chunk_bytes / 16 + 63) / 64) : 0),
        count_(is_chunk ? chunks_ : 0), queued_(is_chunk ? chunks_ : 0) {
    reset(0.0);
  }
  // Empties every queue; the first used_fraction of the chunks count as taken by earlier
  // allocations (the pool at 1 - used_fraction free).
  void reset(double used_fraction) {
    const unsigned long long first = static_cast<unsigned long long>(used_fraction * chunks_);
    next_.upload(&first, 1);
    cls_.zero();
    if (!cfg_.virtualized)
      cuda_or_throw(cudaMemset(slots_.get(), 0xff, slots_.size() * 4), "memset");
    else
      segments_.zero();
    if (is_chunk) {
      mask_.zero();
      count_.zero();
      queued_.zero();
    }
  }
  handle_type handle() const {
    handle_type h{};
    static_cast<detail::ouro_base &>(h) = {data_.get(), next_.get(),      chunk_class_.get(),
                                           cls_.get(),  slots_.get(),     segments_.get(),
                                           chunks_,     cfg_.chunk_bytes, cfg_.queue_capacity,
                                           classes_,    cfg_.virtualized};
    if constexpr (is_chunk) {
      h.mask = mask_.get();
      h.free_count = count_.get();
      h.queued = queued_.get();
    }
    return h;
  }
  std::uint64_t chunks_taken() const {
    unsigned long long n = 0;
    next_.download(&n, 1);
    return std::min<std::uint64_t>(n, chunks_);
  }
  std::uint32_t chunks() const { return chunks_; }
  // Frees dropped because a page queue was near its capacity (pages lost until reset()).
  std::uint64_t dropped() const {
    std::vector<detail::ouro_class_state> s(classes_);
    cls_.download(s.data(), s.size());
    std::uint64_t n = 0;
    for (const auto &c : s)
      n += c.dropped;
    return n;
  }
  char *data() const { return data_.get(); }
  std::uint64_t pool_bytes() const { return std::uint64_t(chunks_) * cfg_.chunk_bytes; }
  const ouroboros_config &config() const { return cfg_; }

private:
  static constexpr bool is_chunk = std::is_same_v<Handle, ouroboros_chunk_handle>;
  static unsigned log2(std::uint32_t x) {
    unsigned l = 0;
    while ((1u << l) < x)
      ++l;
    return l;
  }
  static const ouroboros_config &checked(const ouroboros_config &c) {
    const auto pow2 = [](std::uint64_t x) { return x && !(x & (x - 1)); };
    if (!pow2(c.chunk_bytes) || c.chunk_bytes < 64 || c.chunk_bytes > (1u << 16))
      throw std::invalid_argument("ouroboros: chunk_bytes must be a power of two in [64, 65536]");
    if (!pow2(c.queue_capacity) || c.queue_capacity < c.chunk_bytes / 4)
      throw std::invalid_argument(
          "ouroboros: queue_capacity must be a power of two >= chunk_bytes / 4");
    const std::uint64_t chunks = c.pool_bytes / c.chunk_bytes;
    if (chunks < 1 || chunks * (c.chunk_bytes / 16) >= (1ull << 32))
      throw std::invalid_argument("ouroboros: pool_bytes must hold 1 chunk .. 2^32 smallest pages");
    return c;
  }
  ouroboros_config cfg_;
  std::uint32_t chunks_;
  unsigned classes_;
  device_array<char> data_;
  device_array<unsigned long long> next_;
  device_array<std::uint32_t> chunk_class_;
  device_array<detail::ouro_class_state> cls_;
  device_array<std::uint32_t> slots_;
  device_array<std::uint32_t *> segments_;
  device_array<unsigned long long> mask_;
  device_array<int> count_;
  device_array<std::uint32_t> queued_;
};

using ouroboros_page = ouroboros_allocator<ouroboros_page_handle>;
using ouroboros_chunk = ouroboros_allocator<ouroboros_chunk_handle>;

} // namespace gpuprobe::alloc
