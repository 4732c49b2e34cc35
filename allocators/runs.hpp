#pragma once
// Free runs in a bitmap region (RW_malloc, RW paper Alg. 4): 64-bit words, bit set = unit used.
// Host and device code (the host tests check it on patterns without a GPU).
#include <cstdint>

#if defined(__CUDACC__)
#define GPUPROBE_HD __host__ __device__
#else
#define GPUPROBE_HD
#endif

namespace gpuprobe::alloc {

GPUPROBE_HD inline unsigned ctz64(std::uint64_t x) { // x != 0
#if defined(__CUDA_ARCH__)
  return unsigned(__ffsll((long long)x) - 1);
#else
  return unsigned(__builtin_ctzll(x));
#endif
}

// Number of consecutive set bits of x from bit 0 (64 when all are set).
GPUPROBE_HD inline unsigned trailing_ones(std::uint64_t x) { return ~x ? ctz64(~x) : 64u; }
// Number of consecutive set bits of x from bit 63 down (64 when all are set).
GPUPROBE_HD inline unsigned leading_ones(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return unsigned(__clzll((long long)~x));
#else
  return ~x ? unsigned(__builtin_clzll(~x)) : 64u;
#endif
}

struct free_run {
  std::uint32_t start;  // first unit, relative to the region's first word
  std::uint32_t length; // 0: no further run
};

// The first run of free units at or after unit `from` in words[0, n): runs that cross a word
// boundary are joined; a run is cut at the end of the region. Walk a region with
//   for (auto r = next_free_run(get, n, 0); r.length; r = next_free_run(get, n, r.start +
//   r.length))
// `word(j)` returns word j (an array read on the host, a shuffle or load on the device).
template <class Word>
GPUPROBE_HD inline free_run next_free_run(Word &&word, unsigned n, std::uint32_t from) {
  unsigned j = from / 64, b = from % 64;
  while (j < n) {
    const std::uint64_t f = ~word(j) & (~0ull << b); // free bits of word j at or after b
    if (!f) {
      ++j, b = 0;
      continue;
    }
    const unsigned s = ctz64(f);
    free_run r{j * 64 + s, 0};
    for (unsigned jj = j, bb = s; jj < n;) {
      const unsigned len =
          trailing_ones(~word(jj) >> bb); // the shift fills with used bits: <= 64 - bb
      r.length += len;
      if (bb + len < 64)
        break;
      ++jj, bb = 0;
    }
    return r;
  }
  return {n * 64, 0};
}

// The first run of at least `need` free units at or after unit `from` (first fit), by walking.
template <class Word>
GPUPROBE_HD inline free_run next_run_at_least(Word &&word, unsigned n, std::uint32_t from,
                                              std::uint32_t need) {
  free_run r = next_free_run(word, n, from);
  while (r.length && r.length < need)
    r = next_free_run(word, n, r.start + r.length);
  return r;
}

// Bit i set where bits i .. i + need - 1 of `x` are all set (1 <= need <= 64), by and-ing
// shifted copies: the places in a word where `need` free units start (x: its free bits).
GPUPROBE_HD inline std::uint64_t fit_starts(std::uint64_t x, std::uint32_t need) {
  std::uint64_t y = x; // bit i: bits i .. i + s - 1 set
  for (std::uint32_t s = 1; s < need;) {
    const std::uint32_t step = s < need - s ? s : need - s;
    y &= y >> step;
    s += step;
  }
  return y;
}

// First fit on a warp, one word a lane, in constant time (RW_malloc on a full warp; the walk
// above costs a dependent shuffle per word). Lane j holds `word` (bit set = used) and knows
// `next_word`, word k, the first word after j that is not all free (k = 32: none; from a ballot of
// the all-free words). It returns the lowest run starting in its word
// that holds `need` units ({0, 0}: none), with the run's whole length; the lowest lane that has
// one holds the region's first fit:
// - a run inside the word: the lowest bit p where `need` free bits start (need <= 64,
//   fit_starts), unless that run reaches bit 63;
// - the run through the word's top: its free bits from the top, the all-free words after it and
//   word k's free bits from bit 0.
// A run that starts at bit 0 and continues a run of the word before is found by that word's
// lane, which is lower; so a lane's own find is never a first fit's tail.
GPUPROBE_HD inline free_run lane_first_run(std::uint64_t word, unsigned j, unsigned k,
                                           std::uint64_t next_word, std::uint32_t need) {
  const std::uint64_t x = ~word; // free bits
  if (need <= 64) {
    const std::uint64_t y = fit_starts(x, need);
    if (y) {
      const unsigned p = ctz64(y), len = trailing_ones(x >> p);
      if (p + len < 64)
        return {j * 64 + p, len};
    }
  }
  const unsigned top = leading_ones(x);
  if (!top)
    return {0, 0};
  const std::uint32_t len = top + 64 * (k - j - 1) + (k < 32 ? trailing_ones(~next_word) : 0u);
  return len >= need ? free_run{j * 64 + 64 - top, len} : free_run{0, 0};
}

// Words [start / 64, (start + n - 1) / 64] of a region (n > 0, start + n <= 2048) as bits of a
// 32-bit mask (the words a range touches, for RW_malloc's one claim a region).
GPUPROBE_HD inline unsigned word_span(std::uint32_t start, std::uint32_t n) {
  return unsigned((2ull << ((start + n - 1) / 64)) - (1ull << (start / 64)));
}

// RW_malloc's run ends: one bit a unit, set at the last unit of each whole-unit run
// handed out, so free learns a run's length from bits that a warp's runs share (a 32-unit run a
// lane: 16 words, one 128-byte line) instead of a meta word at each run's first unit (32 lines).
// The length of the run that starts at unit `u`: from u to the first set bit at or after it, read
// word by word (`word(j)`: word j of the map's `n` words); at most `max_len` units (a region) are
// looked at, 0 when no end is there (a unit that no whole run starts at).
template <class Word>
GPUPROBE_HD inline std::uint32_t run_length_at(Word &&word, std::uint64_t n, std::uint64_t u,
                                               std::uint32_t max_len) {
  std::uint64_t j = u / 64;
  if (j >= n)
    return 0;
  std::uint64_t e = word(j) & (~0ull << (u % 64)); // ends at or after u in its word
  while (!e) {
    if (++j >= n || j * 64 - u >= max_len)
      return 0;
    e = word(j);
  }
  const std::uint64_t len = j * 64 + ctz64(e) - u + 1;
  return len <= max_len ? std::uint32_t(len) : 0u;
}

GPUPROBE_HD inline unsigned popcount64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return unsigned(__popcll(x));
#else
  return unsigned(__builtin_popcountll(x));
#endif
}

// RW_malloc's bulk pass (a warp whose requests are all k units, k a power of two up to 32): bit p
// of the result is set when p is a multiple of k and units p .. p + k - 1 of the word are all
// free (clear in `used`). The slots never overlap, and one spreads to its k units as
// slot_bits * ((1 << k) - 1) without carries.
GPUPROBE_HD inline std::uint64_t aligned_slots(std::uint64_t used, unsigned k) {
  std::uint64_t s = ~used;
  for (unsigned d = 1; d < k; d <<= 1)
    s &= s >> d;                          // bit p: units p .. p + 2d - 1 free
  return s & (~0ull / ((1ull << k) - 1)); // multiples of k: 0x55.. for 2, 0x11.. for 4
}
// The position of set bit n of x, counted from 0 at the lowest (n < its set bits), for a 32- or
// 64-bit word: a binary search over the halves, five or six steps whatever x holds.
template <class Word> GPUPROBE_HD inline unsigned nth_set_bit(Word x, unsigned n) {
  static_assert(sizeof(Word) == 4 || sizeof(Word) == 8, "a 32- or 64-bit word");
  unsigned at = 0;
  for (unsigned w = sizeof(Word) * 4; w; w >>= 1) {
    const unsigned below = popcount64((x >> at) & ((Word(1) << w) - 1));
    if (n >= below)
      n -= below, at += w;
  }
  return at;
}
// The lowest n set bits of x (all of them when it has n or fewer).
template <class Word> GPUPROBE_HD inline Word lowest_set_bits(Word x, unsigned n) {
  return n >= popcount64(x) ? x : x & ((Word(1) << nth_set_bit(x, n)) - 1);
}

// RW_malloc's sweep (a full warp of mixed requests in a fragmented region): requests and words
// by class, so that one request a word is matched in constant time. A word's class: 0 when none
// of its units is free, else 1 + log2 of the longest power of two of free units in a row inside
// it, at most 6 (32 units). A request's class: 1 + log2 of `need` rounded up to a power of two
// (1 .. 32 units: 1 .. 6), 7 for larger requests (never matched). A word of class c or more holds
// a request of class c inside it.
constexpr unsigned sweep_classes = 6;
GPUPROBE_HD inline unsigned word_class(std::uint64_t used) {
  std::uint64_t y = ~used; // bit i: units i .. i + 2^c - 1 free
  unsigned c = 0;
  for (unsigned d = 1; y && c < sweep_classes; d <<= 1, ++c)
    y &= y >> d;
  return c;
}
GPUPROBE_HD inline unsigned need_class(std::uint32_t need) {
  unsigned c = 1;
  while (c <= sweep_classes && (1u << (c - 1)) < need)
    ++c;
  return c;
}
// One sweep's matching, from the classes of a warp's words and of its pending requests (lane i's
// word is word i; class 0 / 0 for a lane with neither): from the largest class down, the r-th
// request of class c (lane order) takes the r-th word of class c or more (word order) that no
// larger request took this sweep. `target`: the word lane i's request takes (32: none);
// `taker`: the lane whose request word i takes (32: none). The host model of the device's
// ballots (rw_malloc_handle::sweep_assign) and what the tests check it against.
struct sweep_match {
  unsigned char target[32], taker[32];
};
GPUPROBE_HD inline sweep_match match_sweep(const unsigned (&word_cls)[32],
                                           const unsigned (&req_cls)[32]) {
  sweep_match m{};
  for (unsigned i = 0; i < 32; ++i)
    m.target[i] = m.taker[i] = 32;
  unsigned taken = 0;
  for (unsigned c = sweep_classes; c >= 1; --c) {
    unsigned reqs = 0, words = 0;
    for (unsigned i = 0; i < 32; ++i) {
      reqs |= unsigned(req_cls[i] == c) << i;
      words |= unsigned(word_cls[i] >= c) << i;
    }
    words &= ~taken;
    const unsigned nr = popcount64(reqs), nw = popcount64(words), n = nr < nw ? nr : nw;
    for (unsigned r = 0; r < n; ++r) {
      const unsigned lane = nth_set_bit(reqs, r), word = nth_set_bit(words, r);
      m.target[lane] = (unsigned char)word;
      m.taker[word] = (unsigned char)lane;
    }
    taken |= lowest_set_bits(words, n);
  }
  return m;
}

// Recycled ranges laid end to end, range j (0-31) ending at end_of(j), which does not decrease in
// j: the range that place `at` falls in, as the number of ranges that end at or before it (a binary
// search of five steps; at most 31: a place past the last range's end gets 31, and the caller
// compares its request's end with that range's). rw_malloc's serve_from_ranges, end_of a shuffle.
template <class EndOf> GPUPROBE_HD inline unsigned range_at(EndOf &&end_of, std::uint32_t at) {
  unsigned j = 0;
  for (unsigned step = 16; step; step >>= 1)
    if (end_of(j + step - 1) <= at)
      j += step;
  return j;
}

// Bits of word w covered by units [start, start + n) (word w must hold at least one of them).
GPUPROBE_HD inline std::uint64_t range_mask(std::uint64_t w, std::uint64_t start, std::uint64_t n) {
  const std::uint64_t lo = start > w * 64 ? start : w * 64,
                      hi = start + n < w * 64 + 64 ? start + n : w * 64 + 64;
  const unsigned len = unsigned(hi - lo), at = unsigned(lo - w * 64);
  return (len == 64 ? ~0ull : ((1ull << len) - 1)) << at;
}

// A warp's sweeps, lane by lane (rw_malloc_handle::sweep_assign; malloc_config::sweeps): this
// lane holds word `lane` of its region in st.mine (units assigned marked used) and, when
// (st.pending >> lane) & 1, a request of `need` units. Up to `sweeps` times: the words' and the
// pending requests' classes, then match_sweep's matching from the largest class down, seen from
// the words: word lane j of rank q among the class's words left takes the class's q-th request
// (three ballots and one select a class). Each request lane then finds its word with five
// ballots (the words' takers, bit by bit), and each word places its taker's request at the lowest
// place that holds it (fit_starts; the word's class holds it). `Warp` gives the warp's
// ballot(bool) and shfl(word, source lane): __ballot_sync and __shfl_sync on a full warp on the
// device, a lockstep emulation in the host tests. Every lane makes the same collective calls (the
// branches that skip or end one are taken by the whole warp).
struct sweep_state {
  std::uint64_t mine;    // word `lane`, the units assigned marked used
  std::uint32_t mine_at; // this lane's range (relative to the region), once served
  unsigned pending;      // the lanes whose request is not yet assigned
};
template <class Warp>
GPUPROBE_HD inline sweep_state sweep_lanes(Warp &&warp, sweep_state st, unsigned lane,
                                           std::uint32_t need, unsigned sweeps) {
  const unsigned below = (1u << lane) - 1u, my_class = need_class(need);
  for (unsigned s = 0; s < sweeps && st.pending; ++s) {
    const unsigned wc = word_class(st.mine), rc = (st.pending >> lane) & 1u ? my_class : 0u;
    unsigned taker = 32, taken = 0; // taker: the lane whose request this word takes (32: none)
    for (unsigned c = sweep_classes; c >= 1; --c) {
      const unsigned reqs = warp.ballot(rc == c);
      if (!reqs)
        continue;
      const unsigned left = warp.ballot(wc >= c) & ~taken;
      const unsigned nr = popcount64(reqs), nw = popcount64(left), n = nr < nw ? nr : nw;
      const unsigned q = popcount64(left & below);
      const bool takes = ((left >> lane) & 1u) && q < n;
      if (takes)
        taker = nth_set_bit(reqs, q);
      taken |= warp.ballot(takes);
    }
    if (!taken)
      break;
    // This lane's word: the one taken word whose taker has this lane's bits, bit by bit.
    unsigned word = taken;
    for (unsigned b = 0; b < 5; ++b) {
      const unsigned ones = warp.ballot(taker < 32 && ((taker >> b) & 1u));
      word &= (lane >> b) & 1u ? ones : ~ones;
    }
    const std::uint32_t taker_need = std::uint32_t(warp.shfl(need, taker & 31u));
    std::uint32_t at = 0;
    if (taker < 32) {
      at = ctz64(fit_starts(~st.mine, taker_need));
      st.mine |= range_mask(0, at, taker_need);
    }
    const unsigned target = word ? ctz64(word) : 32u;
    const std::uint32_t placed = std::uint32_t(warp.shfl(at, target & 31u));
    if (target < 32)
      st.mine_at = target * 64 + placed;
    st.pending &= ~warp.ballot(target < 32);
  }
  return st;
}

// The sweeps' host model, one word at a time: what sweep_lanes gives a warp whose words are
// `words` (updated) and whose lanes in `pending` ask need[lane] units: at[lane], each served
// lane's range (relative to the region); the lanes left pending are returned.
GPUPROBE_HD inline unsigned model_sweeps(std::uint64_t (&words)[32],
                                         const std::uint32_t (&need)[32], unsigned pending,
                                         unsigned sweeps, std::uint32_t (&at)[32]) {
  for (unsigned s = 0; s < sweeps && pending; ++s) {
    unsigned wc[32], rc[32];
    for (unsigned i = 0; i < 32; ++i) {
      wc[i] = word_class(words[i]);
      rc[i] = (pending >> i) & 1u ? need_class(need[i]) : 0u;
    }
    const sweep_match m = match_sweep(wc, rc);
    unsigned served = 0;
    for (unsigned l = 0; l < 32; ++l)
      if (m.target[l] < 32) { // one request a word: the word is as the sweep began
        const unsigned j = m.target[l], p = ctz64(fit_starts(~words[j], need[l]));
        at[l] = j * 64 + p;
        words[j] |= range_mask(0, p, need[l]);
        served |= 1u << l;
      }
    if (!served)
      break;
    pending &= ~served;
  }
  return pending;
}

// The run-end bits a new run of units [start, start + n) writes: `clear(w, bits)` for each word w
// that holds its units but the last (ends of runs freed there before: free leaves its end bit),
// then `set(w, bit)` for its last unit. Free then finds the run's length with run_length_at.
template <class Clear, class Set>
GPUPROBE_HD inline void mark_run_end(std::uint64_t start, std::uint32_t n, Clear &&clear, Set &&set) {
  const std::uint64_t e = start + n - 1;
  for (std::uint64_t w = start / 64; n > 1 && w <= (e - 1) / 64; ++w)
    clear(w, range_mask(w, start, n - 1));
  set(e / 64, 1ull << (e % 64));
}

// RW_malloc's stash word: a run's first unit (low 40 bits) and its length (high 24 bits); 0: empty.
constexpr unsigned stash_shift = 40;
GPUPROBE_HD constexpr std::uint64_t stash_word(std::uint64_t start, std::uint32_t n) {
  return (std::uint64_t(n) << stash_shift) | start;
}
GPUPROBE_HD constexpr std::uint64_t stash_start(std::uint64_t v) {
  return v & ((std::uint64_t(1) << stash_shift) - 1);
}
GPUPROBE_HD constexpr std::uint32_t stash_length(std::uint64_t v) {
  return std::uint32_t(v >> stash_shift);
}
// A slot a warp has taken and not yet given up: its run, or the refill it is claiming, is in that
// warp's hands. Never a run: a run is at most one region long.
constexpr std::uint64_t stash_taken = ~std::uint64_t(0);
// The units a stash word holds for the pool: 0 for an empty or a taken slot.
GPUPROBE_HD constexpr std::uint32_t stash_units(std::uint64_t v) {
  return v == stash_taken ? 0u : stash_length(v);
}
// Units one stash may hold: one region (`region_units`) at most, and all `slots` stashes together
// at most 1/`share` of the pool's `units` (0: a pool too small for stashes).
inline std::uint32_t stash_capacity(std::uint64_t units, std::uint64_t slots,
                                    std::uint32_t region_units, unsigned share = 16) {
  if (!slots || !share)
    return 0;
  const std::uint64_t each = units / (slots * share);
  return std::uint32_t(each < region_units ? each : region_units);
}

// RW_malloc's stash refill for a warp that asks `asked` units (0 < asked <= cap), `times`
// requests' worth: the free run it looks for, `times` requests or the stash's capacity where that
// is less (a run past the capacity would be cut to it anyway).
GPUPROBE_HD inline std::uint32_t refill_want(std::uint32_t asked, unsigned times,
                                             std::uint32_t cap) {
  const std::uint32_t t = times * asked;
  return t < cap ? t : cap;
}
// The units it keeps of a run of `found` >= refill_want units: at most 16 requests and the
// capacity, and whole requests where the capacity binds (the rest of a cut run would be too short
// for the next warp of this size, which would hand it back to the bitmap and refill again).
GPUPROBE_HD inline std::uint32_t refill_keep(std::uint32_t found, std::uint32_t asked,
                                             unsigned times, std::uint32_t cap) {
  std::uint32_t k = cap < 16 * asked ? cap : 16 * asked;
  if (times * asked > cap)
    k -= k % asked;
  return found < k ? found : k;
}

} // namespace gpuprobe::alloc
