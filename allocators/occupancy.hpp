#pragma once
// Host-side set-up shared by the page allocators: a random occupancy pattern with an exact
// number of free pages, packed into bitmap words, flags or a queue of free ids. Plain C++ (no
// CUDA), so CI tests it without a GPU.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace gpuprobe::alloc {

// Pages of a get_page measurement: T = 2^23, doubled while the free pages T * free_fraction would
// not exceed the threads by a quarter (so every thread can get a page).
inline std::uint64_t pages_for(std::uint64_t threads, double free_fraction) {
  std::uint64_t T = 1ull << 23;
  while (double(T) * free_fraction <= double(threads + threads / 4))
    T *= 2;
  return T;
}

// used[i] == 1 for exactly pages - free_pages pages, chosen uniformly at random.
inline std::vector<std::uint8_t> random_occupancy(std::uint64_t pages, std::uint64_t free_pages,
                                                  std::uint64_t seed) {
  if (free_pages > pages)
    throw std::invalid_argument("random_occupancy: more free pages than pages");
  std::vector<std::uint8_t> used(pages, 1);
  std::mt19937_64 rng(seed);
  // Floyd's sampling of the free set: exact count, O(free) draws.
  for (std::uint64_t j = pages - free_pages; j < pages; ++j) {
    const std::uint64_t t = std::uniform_int_distribution<std::uint64_t>(0, j)(rng);
    used[used[t] ? t : j] = 0;
  }
  return used;
}

// Bit i of word i / w is set when page i is used (any nonzero entry); bits past `pages` in the
// last word are set (never handed out). Eight entries at a time: a 2^28-page state packed bit by
// bit took 0.3-0.4 s of every such BM_getpage case.
template <class Word> std::vector<Word> pack_bitmap(const std::vector<std::uint8_t> &used) {
  constexpr std::size_t w = sizeof(Word) * 8;
  const std::size_t n = used.size(), whole = n / 8 * 8;
  std::vector<Word> words((n + w - 1) / w, Word(0));
  for (std::size_t i = 0; i < whole; i += 8) {
    std::uint64_t x;
    std::memcpy(&x, used.data() + i, 8);
    x |= x >> 4; // each byte's nonzero-ness into its lowest bit
    x |= x >> 2;
    x |= x >> 1;
    x &= 0x0101010101010101ull;
    // Byte k's low bit to bit 56 + k (the multiply's terms fall on distinct bits: no carries).
    const auto bits = Word((x * 0x0102040810204080ull) >> 56);
    words[i / w] |= Word(bits << (i % w));
  }
  for (std::size_t i = whole; i < words.size() * w; ++i)
    if (i >= n || used[i])
      words[i / w] |= Word(1) << (i % w);
  return words;
}

// Ids of the free pages, shuffled (a queue allocator's initial content).
inline std::vector<std::uint32_t> free_ids(const std::vector<std::uint8_t> &used,
                                           std::uint64_t seed) {
  std::vector<std::uint32_t> ids;
  for (std::size_t i = 0; i < used.size(); ++i)
    if (!used[i])
      ids.push_back(std::uint32_t(i));
  std::shuffle(ids.begin(), ids.end(), std::mt19937_64(seed ^ 0x9e3779b97f4a7c15ull));
  return ids;
}

// A multi-unit allocator's starting state (RW_malloc): the pool in runs whose lengths (units)
// come from `draw(rng)`, each used with probability 1 - free_fraction: what the pool looks like
// after requests of that size distribution were made and a share of them freed again, so free
// space lies in holes the size of earlier requests. Bit set = used; bits past `units` are set.
template <class Draw>
std::vector<unsigned long long> hole_pattern(std::uint64_t units, double free_fraction, Draw draw,
                                             std::uint64_t seed) {
  if (!(free_fraction >= 0 && free_fraction <= 1))
    throw std::invalid_argument("hole_pattern: free fraction outside [0, 1]");
  std::vector<unsigned long long> words((units + 63) / 64, 0);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  auto set_run = [&](std::uint64_t a, std::uint64_t b) { // [a, b)
    for (; a < b && a % 64; ++a)
      words[a / 64] |= 1ull << (a % 64);
    for (; a + 64 <= b; a += 64)
      words[a / 64] = ~0ull;
    for (; a < b; ++a)
      words[a / 64] |= 1ull << (a % 64);
  };
  for (std::uint64_t pos = 0; pos < units;) {
    const std::uint64_t len = std::max<std::uint64_t>(1, std::uint64_t(draw(rng)));
    const std::uint64_t end = std::min(units, pos + len);
    if (u(rng) >= free_fraction)
      set_run(pos, end);
    pos = end;
  }
  set_run(units, words.size() * 64);
  return words;
}

// Free units in a bitmap (bit set = used; bits past the last unit are set).
inline std::uint64_t count_free_units(const std::vector<unsigned long long> &words) {
  std::uint64_t n = 0;
  for (const auto w : words)
    n += 64 - unsigned(__builtin_popcountll(w));
  return n;
}

} // namespace gpuprobe::alloc
