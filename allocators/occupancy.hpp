#pragma once
// Host-side set-up shared by the page allocators: a random occupancy pattern with an exact
// number of free pages, packed into bitmap words, flags or a queue of free ids. Plain C++ (no
// CUDA), so CI tests it without a GPU.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace gpuprobe::alloc {

// used[i] == 1 for exactly pages - free_pages pages, chosen uniformly at random.
inline std::vector<std::uint8_t> random_occupancy(std::uint64_t pages, std::uint64_t free_pages, std::uint64_t seed) {
  if (free_pages > pages) throw std::invalid_argument("random_occupancy: more free pages than pages");
  std::vector<std::uint8_t> used(pages, 1);
  std::mt19937_64 rng(seed);
  // Floyd's sampling of the free set: exact count, O(free) draws.
  for (std::uint64_t j = pages - free_pages; j < pages; ++j) {
    const std::uint64_t t = std::uniform_int_distribution<std::uint64_t>(0, j)(rng);
    used[used[t] ? t : j] = 0;
  }
  return used;
}

// Bit i of word i / w is set when page i is used; bits past `pages` in the last word are set
// (never handed out).
template <class Word>
std::vector<Word> pack_bitmap(const std::vector<std::uint8_t>& used) {
  constexpr std::size_t w = sizeof(Word) * 8;
  std::vector<Word> words((used.size() + w - 1) / w, Word(0));
  for (std::size_t i = 0; i < words.size() * w; ++i)
    if (i >= used.size() || used[i]) words[i / w] |= Word(1) << (i % w);
  return words;
}

// Ids of the free pages, shuffled (a queue allocator's initial content).
inline std::vector<std::uint32_t> free_ids(const std::vector<std::uint8_t>& used, std::uint64_t seed) {
  std::vector<std::uint32_t> ids;
  for (std::size_t i = 0; i < used.size(); ++i)
    if (!used[i]) ids.push_back(std::uint32_t(i));
  std::shuffle(ids.begin(), ids.end(), std::mt19937_64(seed ^ 0x9e3779b97f4a7c15ull));
  return ids;
}

}  // namespace gpuprobe::alloc
