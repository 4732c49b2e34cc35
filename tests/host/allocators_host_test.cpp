// Allocator logic that runs on the CPU: occupancy patterns, bitmap packing, queue contents; and
// gpuprobe-bench's list of cases, which must work on a machine without a GPU.
#include "allocators/occupancy.hpp"
#include "allocators/range_check.hpp"
#include "allocators/request_sizes.hpp"
#include "allocators/runs.hpp"
#include "common/units.hpp"
#include "lockstep_warp.hpp"
#include "test_util.hpp"
#include "tests/common/region_words.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <string>

using namespace gpuprobe::alloc;

TEST(Occupancy, ExactFreeCountAndRandomPlacement) {
  const auto a = random_occupancy(100000, 500, 1), b = random_occupancy(100000, 500, 2);
  EXPECT_EQ(std::count(a.begin(), a.end(), 0), 500);
  EXPECT_NE(a, b); // the seed changes the pattern
  const auto all = random_occupancy(64, 64, 3);
  EXPECT_EQ(std::count(all.begin(), all.end(), 0), 64);
  const auto none = random_occupancy(64, 0, 3);
  EXPECT_EQ(std::count(none.begin(), none.end(), 1), 64);
  EXPECT_THROW(random_occupancy(10, 11, 1), std::invalid_argument);
  // Free pages spread over the pool: both halves hold some of 5000 free pages of 100000.
  const auto c = random_occupancy(100000, 5000, 4);
  EXPECT_GT(std::count(c.begin(), c.begin() + 50000, 0), 2000);
  EXPECT_GT(std::count(c.begin() + 50000, c.end(), 0), 2000);
}

TEST(Occupancy, PagesForLeaveAQuarterMoreFreePagesThanThreads) {
  EXPECT_EQ(pages_for(1u << 20, 0.5), 1ull << 23) << "2^22 free > 1.25 x 2^20";
  EXPECT_EQ(pages_for(1u << 16, 0.005), 1ull << 24)
      << "2^23 x 0.5% = 41943 <= 81920; 2^24 x 0.5% = 83886";
  EXPECT_EQ(pages_for(1u << 20, 0.005), 1ull << 28);
  EXPECT_EQ(pages_for(270336, 0.01), 1ull << 26)
      << "2^25 x 1% = 335544 <= 337920, the full-occupancy threads x 1.25";
}

TEST(Occupancy, BitmapPackingAndQueueIds) {
  std::vector<std::uint8_t> used(70, 0);
  used[0] = used[33] = used[69] = 1;
  const auto w32 = pack_bitmap<std::uint32_t>(used);
  ASSERT_EQ(w32.size(), 3u);
  EXPECT_EQ(w32[0], 1u);
  EXPECT_EQ(w32[1], 2u);
  EXPECT_EQ(w32[2], ~0u << 5); // bits 64..68 free, 69 used, 70.. past the end: set
  const auto w64 = pack_bitmap<unsigned long long>(used);
  ASSERT_EQ(w64.size(), 2u);
  EXPECT_EQ(w64[0], 1ull | (1ull << 33));
  EXPECT_EQ(w64[1] & 0x3full, 1ull << 5);
  EXPECT_EQ(w64[1] >> 6, ~0ull >> 6);
  const auto ids = free_ids(used, 9);
  EXPECT_EQ(ids.size(), 67u);
  EXPECT_EQ(std::set<std::uint32_t>(ids.begin(), ids.end()).size(), 67u);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 33u), 0);
}

namespace {
// The packing rule one bit at a time: bit i of word i / w set when used[i] != 0 or i is past the
// end.
template <class Word> std::vector<Word> pack_one_by_one(const std::vector<std::uint8_t> &used) {
  constexpr std::size_t w = sizeof(Word) * 8;
  std::vector<Word> words((used.size() + w - 1) / w, Word(0));
  for (std::size_t i = 0; i < words.size() * w; ++i)
    if (i >= used.size() || used[i])
      words[i / w] |= Word(1) << (i % w);
  return words;
}
} // namespace

// The eight-at-a-time packing against the rule, on 3,000 generated states: lengths 0-700 (whole
// words, whole bytes and neither), entries of any byte value (a nonzero entry is used), densities
// from all free to all used.
TEST(Occupancy, PackingEightEntriesAtATimeFollowsTheRuleOnGeneratedStates) {
  std::mt19937_64 rng(20261128);
  for (int c = 0; c < 3000; ++c) {
    const std::size_t n = rng() % 701;
    const double used_share = double(rng() % 1001) / 1000;
    const bool any_byte = rng() % 2;
    std::vector<std::uint8_t> used(n);
    for (auto &u : used)
      u = std::uniform_real_distribution<double>(0, 1)(rng) < used_share
              ? std::uint8_t(any_byte ? 1 + rng() % 255 : 1)
              : 0;
    ASSERT_EQ(pack_bitmap<std::uint32_t>(used), pack_one_by_one<std::uint32_t>(used))
        << "case " << c << ", " << n << " entries";
    ASSERT_EQ(pack_bitmap<unsigned long long>(used), pack_one_by_one<unsigned long long>(used))
        << "case " << c << ", " << n << " entries";
  }
}

namespace {
// Runs of a region, by walking it with next_free_run.
std::vector<std::pair<unsigned, unsigned>> runs_of(const std::vector<unsigned long long> &w) {
  std::vector<std::pair<unsigned, unsigned>> out;
  auto get = [&](unsigned j) { return w[j]; };
  const unsigned n = unsigned(w.size());
  for (auto r = next_free_run(get, n, 0); r.length; r = next_free_run(get, n, r.start + r.length))
    out.emplace_back(r.start, r.length);
  return out;
}
// The same from a bit-by-bit reference.
std::vector<std::pair<unsigned, unsigned>>
runs_reference(const std::vector<unsigned long long> &w) {
  std::vector<std::pair<unsigned, unsigned>> out;
  const unsigned bits = unsigned(w.size()) * 64;
  for (unsigned i = 0; i < bits;) {
    if ((w[i / 64] >> (i % 64)) & 1) {
      ++i;
      continue;
    }
    unsigned j = i;
    while (j < bits && !((w[j / 64] >> (j % 64)) & 1))
      ++j;
    out.emplace_back(i, j - i);
    i = j;
  }
  return out;
}
} // namespace

TEST(FreeRuns, JoinsAcrossWordsAndStopsAtTheRegionEnd) {
  // word 0: bits 60..63 free; word 1 all free; word 2: bits 0..2 free, bit 3 used, 4..63 free.
  std::vector<unsigned long long> w = {~0ull >> 4, 0ull, 0x8ull};
  const auto r = runs_of(w);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], std::make_pair(60u, 4u + 64u + 3u));
  EXPECT_EQ(r[1], std::make_pair(128u + 4u, 60u)) << "cut at the end of the region";
  EXPECT_TRUE(runs_of({~0ull, ~0ull}).empty());
  EXPECT_EQ(runs_of({0ull}), (std::vector<std::pair<unsigned, unsigned>>{{0u, 64u}}));
}

TEST(FreeRuns, MatchesABitByBitReferenceOnRandomRegions) {
  std::mt19937_64 rng(5);
  for (int k = 0; k < 500; ++k) {
    std::vector<unsigned long long> w(1 + rng() % 32);
    for (auto &x : w)
      x = (k % 3 == 0) ? rng() : (k % 3 == 1 ? rng() & rng() & rng() : rng() | rng() | rng());
    ASSERT_EQ(runs_of(w), runs_reference(w)) << k;
  }
}

// The warp-parallel first fit (lane_first_run, one word a lane as rw_malloc's full warps run it):
// the lowest lane's find is the first run of at least `need` units that the walk finds, with its
// whole length, for every need from 1 to the region, on regions of 32 words (lanes past a shorter
// region hold used words, as on the device).
// RW_malloc's one claim a region: the words a range touches, against a word-by-word reference.
TEST(FreeRuns, WordSpanIsTheWordsARangeTouches) {
  for (std::uint32_t start = 0; start < 2048; start += 7)
    for (std::uint32_t n : {1u, 2u, 31u, 32u, 63u, 64u, 65u, 128u, 1000u, 2048u}) {
      if (start + n > 2048)
        continue;
      std::uint32_t want = 0;
      for (std::uint32_t u = start; u < start + n; ++u)
        want |= 1u << (u / 64);
      ASSERT_EQ(word_span(start, n), want) << start << " + " << n;
    }
}

// A stash word keeps a run's first unit (up to 2^40 - 1) and its length (up to a region) apart,
// and no run reads as a taken slot; the capacity is one region at most and 1/16 of the pool over
// all stashes.
TEST(FreeRuns, StashWordsRoundTripAndTheCapacityFollowsThePool) {
  for (std::uint64_t start : {0ull, 1ull, 63ull, (1ull << 27) - 5, (1ull << 40) - 1})
    for (std::uint32_t n : {1u, 2u, 992u, 2048u}) {
      const auto v = stash_word(start, n);
      EXPECT_NE(v, 0u);
      EXPECT_NE(v, stash_taken) << "a run never reads as a taken slot";
      EXPECT_EQ(stash_start(v), start);
      EXPECT_EQ(stash_length(v), n);
      EXPECT_EQ(stash_units(v), n);
    }
  EXPECT_EQ(stash_length(0), 0u) << "0 is the empty stash";
  EXPECT_EQ(stash_units(stash_taken), 0u) << "a taken slot holds nothing for the pool";
  const std::uint64_t slots = 132 * 64; // an H100's SMs x 64 warp slots
  EXPECT_EQ(stash_capacity(1ull << 27, slots, 2048), 992u) << "32 GiB of 256 B units";
  EXPECT_EQ(stash_capacity(1ull << 22, slots, 2048), 31u) << "1 GiB";
  EXPECT_EQ(stash_capacity(1ull << 16, 132, 2048), 31u) << "16 MiB, one stash a SM";
  EXPECT_EQ(stash_capacity(1000, slots, 2048), 0u) << "a small pool has none";
  EXPECT_EQ(stash_capacity(1ull << 34, slots, 2048), 2048u) << "one region at most";
  EXPECT_EQ(stash_capacity(1ull << 27, 0, 2048), 0u) << "no slots";
  EXPECT_EQ(stash_capacity(1ull << 27, slots, 2048, 8), 1985u) << "1/8 of 32 GiB in stashes";
}

// The refill a warp looks for and keeps, over generated requests, multiples and capacities: it
// never looks for more than a stash holds (so a small pool's stash can still be refilled), keeps
// at least the run it looked for up to 16 requests and the capacity, whole requests where the
// capacity binds, and is today's rule (times x asked, up to 16 requests or the capacity) wherever
// the capacity holds `times` requests.
TEST(FreeRuns, TheRefillLooksForWhatAStashHoldsAndKeepsWholeRequestsWhereTheCapBinds) {
  std::mt19937_64 rng(49);
  int cut = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t cap = 1 + std::uint32_t(rng() % 2048);
    const std::uint32_t asked = 1 + std::uint32_t(rng() % cap); // a warp that may ask the stash
    const unsigned times = 1 + unsigned(rng() % 16);
    const std::uint32_t want = refill_want(asked, times, cap);
    ASSERT_LE(want, cap);
    ASSERT_GE(want, asked);
    const std::uint32_t found = want + std::uint32_t(rng() % 4096); // a run that holds `want`
    const std::uint32_t keep = refill_keep(found, asked, times, cap);
    ASSERT_LE(keep, std::min(cap, 16 * asked)) << asked << " " << times << " " << cap;
    ASSERT_LE(keep, found);
    ASSERT_GE(keep, asked) << "a refill serves at least the next warp of this size";
    if (times * asked <= cap) { // today's rule
      ASSERT_EQ(want, times * asked);
      ASSERT_EQ(keep, std::min({found, cap, 16 * asked}));
    } else {
      ++cut;
      ASSERT_EQ(keep % asked, 0u) << asked << " " << times << " " << cap;
      ASSERT_GT(keep + asked, std::min(cap, 16 * asked)) << "no whole request left out";
    }
  }
  EXPECT_GT(cut, 1000) << "the family reaches the capacity-bound case";
  // The cases that motivated it: a 4 KiB warp (512 units) of the 32 GiB pool's stash (992 units)
  // looks for 992 and keeps 512; a 256 B warp (32 units) on a 1 GiB pool (31 units) asks no stash.
  EXPECT_EQ(refill_want(512, 4, 992), 992u);
  EXPECT_EQ(refill_keep(1500, 512, 4, 992), 512u);
  EXPECT_EQ(refill_want(32, 8, 992), 256u);
  EXPECT_EQ(refill_keep(600, 32, 8, 992), 512u) << "as before: up to 16 requests of 32 units";
  EXPECT_EQ(refill_want(32, 8, 200), 200u) << "a small pool: the stash's capacity, not 256";
  EXPECT_EQ(refill_keep(200, 32, 8, 200), 192u) << "6 whole requests";
}

// rw_malloc's recycled ranges: a warp's requests laid end to end over a slot's ranges laid end to
// end (serve_from_ranges, each lane's range by range_at) are served where a lane-by-lane walk of
// the ranges (each from its head, a request that does not fit a range's rest moving on to the next
// range) puts them, whenever the rule serves; each block lies inside its range; and ranges that are
// the pieces of these requests' own layout always serve them. 20,000 seeded cases: 1, 4 or 32
// words, some empty, lengths at random or the pieces of one layout (some with a longer last
// piece); one size a warp or a size a lane, some lanes asking nothing.
TEST(FreeRuns, RecycledRangesServeWhereALaneByLaneWalkPutsThem) {
  std::mt19937_64 rng(8081);
  unsigned served_cases = 0;
  for (int c = 0; c < 20000; ++c) {
    const unsigned words = std::array<unsigned, 3>{1, 4, 32}[rng() % 3];
    std::array<std::uint32_t, 32> need{}, len{}, at{}, end{};
    std::array<std::uint64_t, 32> start{};
    const bool one_size = rng() % 2;
    for (unsigned l = 0; l < 32; ++l)
      need[l] = one_size && l ? need[0] : (rng() % 10 == 0 ? 0u : 1 + std::uint32_t(rng() % 32));
    const unsigned k = 1 + unsigned(rng() % words);
    const bool layout = rng() % 2; // the pieces of these requests' layout: cuts between lanes
    if (layout) {
      std::vector<unsigned> cut{0, 32};
      while (cut.size() < k + 1)
        cut.push_back(1 + unsigned(rng() % 31));
      std::sort(cut.begin(), cut.end());
      cut.erase(std::unique(cut.begin(), cut.end()), cut.end());
      for (unsigned j = 0; j + 1 < cut.size(); ++j)
        for (unsigned l = cut[j]; l < cut[j + 1]; ++l)
          len[j] += need[l];
      if (rng() % 4 == 0)
        len[cut.size() - 2] += std::uint32_t(rng() % 40);
    } else
      for (unsigned j = 0; j < k; ++j)
        len[j] = rng() % 4 == 0 ? 0u : std::uint32_t(rng() % 300);
    for (unsigned j = 0, sum = 0; j < 32; sum += len[j++]) {
      start[j] = rng() % (1u << 30);
      at[j] = sum;
      end[j] = sum + len[j];
    }
    // The rule: each lane's place by range_at; served when every request fits its range.
    std::array<std::uint64_t, 32> got{};
    bool served = true;
    for (unsigned l = 0, excl = 0; l < 32; excl += need[l++]) {
      const unsigned j = range_at([&](unsigned i) { return end.at(i); }, excl);
      const bool fits = excl + need[l] <= end[j];
      served &= need[l] == 0 || fits;
      got[l] = need[l] ? start[j] + (excl - at[j]) : ~0ull;
      if (need[l] && fits) {
        EXPECT_TRUE(got[l] >= start[j] && got[l] + need[l] <= start[j] + len[j])
            << "case " << c << " lane " << l;
      }
    }
    EXPECT_TRUE(served || !layout) << "case " << c << ": a layout's own pieces serve it";
    if (!served)
      continue;
    ++served_cases;
    // The walk.
    for (unsigned l = 0, j = 0, used = 0; l < 32; ++l) {
      if (!need[l]) {
        EXPECT_EQ(got[l], ~0ull);
        continue;
      }
      while (j < words && used + need[l] > len[j])
        ++j, used = 0;
      ASSERT_LT(j, words) << "case " << c << ": the rule served a lane the walk does not";
      EXPECT_EQ(got[l], start[j] + used) << "case " << c << " lane " << l;
      used += need[l];
    }
  }
  EXPECT_GT(served_cases, 5000u) << "the family reaches warps the ranges serve";
}

// rw_malloc's run ends: on generated maps of whole runs (1-2048 units, the largest
// request), shared units (no end bit) and free gaps, the length found at each run's start is the
// run's, and a unit whose next end lies more than a region on, or past the map, gives 0.
TEST(FreeRuns, RunLengthAtEachStartIsTheRunsOnGeneratedMaps) {
  std::mt19937_64 rng(49);
  constexpr std::uint32_t region = 2048;
  for (int c = 0; c < 300; ++c) {
    const std::uint64_t n_words = 1 + rng() % 96, units = n_words * 64;
    std::vector<std::uint64_t> ends(n_words, 0);
    std::vector<std::pair<std::uint64_t, std::uint32_t>> runs; // start, length
    std::vector<std::uint64_t> shared;
    for (std::uint64_t u = 0; u < units;) {
      const int kind = int(rng() % 4); // 0, 1: a run; 2: a shared unit; 3: a gap
      std::uint64_t len = kind < 2 ? (rng() % 3 == 0 ? 1 + rng() % region : 1 + rng() % 40)
                                   : 1 + rng() % (kind == 2 ? 1 : 70);
      len = std::min<std::uint64_t>(len, units - u);
      if (kind < 2) {
        runs.emplace_back(u, std::uint32_t(len));
        const std::uint64_t e = u + len - 1;
        ends[e / 64] |= 1ull << (e % 64);
      } else if (kind == 2)
        shared.push_back(u);
      u += len;
    }
    const auto word = [&](std::uint64_t j) { return ends.at(j); }; // .at: no read past the map
    for (const auto &[u, len] : runs)
      EXPECT_EQ(run_length_at(word, n_words, u, region), len) << "case " << c << " unit " << u;
    for (const std::uint64_t u : shared) { // the next end by a bit-by-bit walk, or none
      std::uint64_t e = u;
      while (e < units && !((ends[e / 64] >> (e % 64)) & 1))
        ++e;
      const std::uint32_t want = e < units && e - u < region ? std::uint32_t(e - u + 1) : 0u;
      EXPECT_EQ(run_length_at(word, n_words, u, region), want) << "case " << c << " unit " << u;
    }
    EXPECT_EQ(run_length_at(word, n_words, units, region), 0u) << "past the map";
  }
}

// The run ends over a heap's life: a host model of rw_malloc's whole runs (first fit
// over a bitmap, requests of 1-2048 units, random frees) where each new run writes its ends with
// mark_run_end and free writes none. At every free the length found is the run's own, though
// the ends of runs freed before lie everywhere in the free space; 200 seeded heaps.
TEST(FreeRuns, EveryFreeFindsItsRunWhileFreedRunsLeaveTheirEnds) {
  std::mt19937_64 rng(4949);
  for (int c = 0; c < 200; ++c) {
    const std::uint64_t words = 64 + rng() % 192, units = words * 64;
    std::vector<std::uint64_t> used(words, 0), ends(words, 0);
    std::vector<std::pair<std::uint64_t, std::uint32_t>> live;
    const auto bit = [](const std::vector<std::uint64_t> &m, std::uint64_t u) {
      return (m[u / 64] >> (u % 64)) & 1;
    };
    std::uint64_t freed = 0;
    for (int step = 0; step < 600; ++step) {
      if (!live.empty() && rng() % 2 == 0) { // free a random live run
        const std::size_t k = rng() % live.size();
        const auto [u, len] = live[k];
        const auto word = [&](std::uint64_t j) { return ends.at(j); };
        ASSERT_EQ(run_length_at(word, words, u, 2048), len) << "heap " << c << " step " << step;
        for (std::uint64_t x = u; x < u + len; ++x)
          used[x / 64] &= ~(1ull << (x % 64));
        live.erase(live.begin() + std::ptrdiff_t(k));
        ++freed;
        continue;
      }
      const std::uint32_t n =
          std::uint32_t(rng() % 4 == 0 ? 1 + rng() % 2048 : 1 + rng() % 64); // a request
      std::uint64_t s = 0, run = 0; // first fit
      for (; s + run < units && run < n;)
        run = bit(used, s + run) ? (s += run + 1, 0) : run + 1;
      if (run < n)
        continue; // no room: a free comes next
      for (std::uint64_t x = s; x < s + n; ++x)
        used[x / 64] |= 1ull << (x % 64);
      mark_run_end(
          s, n, [&](std::uint64_t w, std::uint64_t b) { ends.at(w) &= ~b; },
          [&](std::uint64_t w, std::uint64_t b) { ends.at(w) |= b; });
      live.emplace_back(s, n);
    }
    EXPECT_GT(freed, 100u) << "heap " << c;
  }
}

// The bulk pass's bit tricks against their definitions, bit by bit, on a seeded family of words
// (free, used, sparse, dense, runs, single bits): aligned_slots for every k it takes, nth_set_bit
// for every set bit, lowest_set_bits for every count, on 64-bit words and on their low halves.
TEST(FreeRuns, AlignedSlotsAndSelectsMatchTheirDefinitions) {
  std::mt19937_64 rng(2026);
  for (int t = 0; t < 2000; ++t) {
    const int kind = t % 7;
    const std::uint64_t used = kind == 0   ? 0ull
                               : kind == 1 ? ~0ull
                               : kind == 2 ? rng() & rng() & rng()
                               : kind == 3 ? rng() | rng()
                               : kind == 4 ? rng()
                               : kind == 5 ? ~0ull << (rng() % 64)
                                           : ~(1ull << (rng() % 64));
    for (unsigned k = 1; k <= 32; k *= 2) {
      std::uint64_t want = 0;
      for (unsigned p = 0; p + k <= 64; p += k) {
        bool free = true;
        for (unsigned u = p; u < p + k; ++u)
          free = free && !((used >> u) & 1ull);
        want |= std::uint64_t(free) << p;
      }
      ASSERT_EQ(aligned_slots(used, k), want) << "t " << t << " k " << k << " used " << used;
    }
    const std::uint64_t x = ~used;
    unsigned n = 0;
    for (unsigned p = 0; p < 64; ++p)
      if ((x >> p) & 1ull) {
        ASSERT_EQ(nth_set_bit(x, n), p) << "t " << t << " n " << n;
        ASSERT_EQ(lowest_set_bits(x, n), x & ((1ull << p) - 1)) << "t " << t << " n " << n;
        ++n;
      }
    ASSERT_EQ(n, popcount64(x));
    ASSERT_EQ(lowest_set_bits(x, n), x);
    ASSERT_EQ(lowest_set_bits(x, n + 5), x);
    // The 32-bit words (the sweep's masks): the low half's bits.
    const std::uint32_t h = std::uint32_t(x);
    unsigned m = 0;
    for (unsigned p = 0; p < 32; ++p)
      if ((h >> p) & 1u) {
        ASSERT_EQ(nth_set_bit(h, m), p) << "t " << t << " m " << m;
        ASSERT_EQ(lowest_set_bits(h, m), h & ((1u << p) - 1u)) << "t " << t << " m " << m;
        ++m;
      }
    ASSERT_EQ(lowest_set_bits(h, m + 1), h);
  }
}

// The sweep's pieces against their definitions on seeded families: fit_starts and word_class bit
// by bit on the words above, need_class for every need, and match_sweep against the sequential
// greedy it stands for (from the largest class down, each request of the class in lane order takes
// the lowest word of that class or more not yet taken), on 3,000 seeded warps.
TEST(FreeRuns, SweepPiecesMatchTheirDefinitions) {
  std::mt19937_64 rng(77);
  auto draw_word = [&](int kind) {
    return kind == 0   ? 0ull
           : kind == 1 ? ~0ull
           : kind == 2 ? rng() & rng() & rng()
           : kind == 3 ? rng() | rng()
           : kind == 4 ? rng()
           : kind == 5 ? ~0ull << (rng() % 64)
                       : ~(((1ull << (rng() % 40)) - 1) << (rng() % 24));
  };
  for (int t = 0; t < 2000; ++t) {
    const std::uint64_t used = draw_word(t % 7);
    unsigned longest = 0;
    for (unsigned p = 0, run = 0; p < 64; ++p) {
      run = (used >> p) & 1ull ? 0 : run + 1;
      longest = std::max(longest, run);
    }
    unsigned want_class = 0;
    while (want_class < sweep_classes && (1u << want_class) <= longest)
      ++want_class;
    ASSERT_EQ(word_class(used), want_class) << "t " << t << " used " << used;
    for (std::uint32_t need = 1; need <= 64; ++need) {
      std::uint64_t want = 0;
      for (unsigned p = 0; p + need <= 64; ++p)
        want |= std::uint64_t((used >> p & (need == 64 ? ~0ull : (1ull << need) - 1)) == 0) << p;
      ASSERT_EQ(fit_starts(~used, need), want) << "t " << t << " need " << need;
    }
  }
  for (std::uint32_t need = 1; need <= 100; ++need) {
    const unsigned c = need_class(need);
    if (need > 32)
      EXPECT_EQ(c, sweep_classes + 1) << need;
    else
      EXPECT_TRUE((1u << (c - 1)) >= need && (c == 1 || (1u << (c - 2)) < need)) << need;
  }
  unsigned matched = 0;
  for (int t = 0; t < 3000; ++t) {
    unsigned wc[32], rc[32];
    const unsigned top = 1 + unsigned(t % 7); // classes drawn below `top`: few or many words
    for (unsigned i = 0; i < 32; ++i) {
      wc[i] = unsigned(rng() % (top + 1));
      rc[i] = rng() % 4 == 0 ? 0u : 1u + unsigned(rng() % (sweep_classes + 1));
    }
    const sweep_match m = match_sweep(wc, rc);
    unsigned char want_target[32], want_taker[32];
    std::fill(want_target, want_target + 32, 32);
    std::fill(want_taker, want_taker + 32, 32);
    for (unsigned c = sweep_classes; c >= 1; --c)
      for (unsigned lane = 0; lane < 32; ++lane) {
        if (rc[lane] != c)
          continue;
        for (unsigned w = 0; w < 32; ++w)
          if (wc[w] >= c && want_taker[w] == 32) {
            want_target[lane] = (unsigned char)w;
            want_taker[w] = (unsigned char)lane;
            break;
          }
      }
    for (unsigned i = 0; i < 32; ++i) {
      ASSERT_EQ(m.target[i], want_target[i]) << "t " << t << " lane " << i;
      ASSERT_EQ(m.taker[i], want_taker[i]) << "t " << t << " word " << i;
      matched += m.target[i] < 32;
    }
  }
  EXPECT_GT(matched, 3000u * 8) << "the family matches requests, not only empty sweeps";
}

// sweep_lanes, the device's sweeps written lane by lane, run on a lockstep warp of 32 host threads
// against model_sweeps (one word at a time, match_sweep's matching) on 300 seeded fragmented
// regions: mixed requests of 1-32 or 1-8 units from a random set of lanes, 1, 2 or 8 sweeps. Every
// lane's word, range and the lanes left must agree.
TEST(FreeRuns, SweepOnALockstepWarpMatchesItsModel) {
  std::mt19937_64 rng(4242);
  unsigned served = 0, left_over = 0;
  for (unsigned trial = 0; trial < 300; ++trial) {
    std::uint64_t words[32];
    std::uint32_t need[32], at[32] = {};
    for (unsigned i = 0; i < 32; ++i) {
      words[i] = gpuprobe::test::fragmented_word(rng);
      need[i] = 1 + std::uint32_t(rng() % (trial % 2 ? 32 : 8));
    }
    const unsigned pending = unsigned(rng() | rng()), sweeps = trial % 3 == 2 ? 8u : 1u + trial % 3;
    std::uint64_t model_words[32];
    std::copy(words, words + 32, model_words);
    const unsigned model_left = model_sweeps(model_words, need, pending, sweeps, at);
    std::array<sweep_state, 32> out{};
    gpuprobe::test::lockstep_warp warp;
    warp.run([&](gpuprobe::test::lockstep_warp::lane l) {
      out[l.id] = sweep_lanes(l, sweep_state{words[l.id], 0, pending}, l.id, need[l.id], sweeps);
    });
    for (unsigned l = 0; l < 32; ++l) {
      ASSERT_EQ(out[l].pending, model_left) << "trial " << trial << " lane " << l;
      ASSERT_EQ(out[l].mine, model_words[l]) << "trial " << trial << " word " << l;
      if (((pending & ~model_left) >> l) & 1u) {
        ASSERT_EQ(out[l].mine_at, at[l]) << "trial " << trial << " lane " << l;
      }
    }
    served += popcount64(pending & ~model_left);
    left_over += popcount64(model_left);
  }
  std::printf("sweeps on a lockstep warp: %u requests served, %u left, over 300 regions\n", served,
              left_over);
  EXPECT_GT(served, 300u * 5) << "the family serves requests";
  EXPECT_GT(left_over, 0u) << "and leaves some: the regions are not all free";
}

// The lockstep warp itself: a collective that only some lanes reach is an error, not a hang.
TEST(FreeRuns, LockstepWarpRefusesADivergentCollective) {
  gpuprobe::test::lockstep_warp warp(std::chrono::milliseconds(200));
  EXPECT_THROW(warp.run([](gpuprobe::test::lockstep_warp::lane l) {
    if (l.id < 16)
      l.ballot(true);
  }),
               std::runtime_error);
  unsigned got[32] = {};
  warp.run([&](gpuprobe::test::lockstep_warp::lane l) { got[l.id] = l.ballot(l.id % 3 == 0); });
  for (unsigned i = 0; i < 32; ++i)
    EXPECT_EQ(got[i], 0x49249249u) << "every third lane, seen by lane " << i;
}

TEST(FreeRuns, WarpFirstFitMatchesTheWalk) {
  std::mt19937_64 rng(11);
  auto warp = [](const std::vector<unsigned long long> &w, std::uint32_t need) {
    std::uint32_t full_free = 0;
    for (unsigned j = 0; j < 32; ++j)
      full_free |= (w[j] == 0 ? 1u : 0u) << j;
    for (unsigned j = 0; j < 32; ++j) { // lanes in order: the lowest with a find wins
      const std::uint32_t after = j == 31 ? 0u : ~full_free & (~0u << (j + 1));
      const unsigned k = after ? unsigned(__builtin_ctz(after)) : 32u;
      const free_run r = lane_first_run(w[j], j, k, k < 32 ? w[k] : 0ull, need);
      if (r.length)
        return r;
    }
    return free_run{0, 0};
  };
  for (int t = 0; t < 300; ++t) {
    std::vector<unsigned long long> w(32, ~0ull);
    const unsigned n = t % 5 == 0 ? 1 + unsigned(rng() % 32) : 32;
    for (unsigned j = 0; j < n; ++j) {
      const int kind = int(rng() % 5);
      w[j] = kind == 0   ? 0ull
             : kind == 1 ? ~0ull
             : kind == 2 ? rng() & rng() & rng()
             : kind == 3 ? rng() | rng()
                         : (~0ull << (rng() % 64)) ^ (rng() % 3 ? 0ull : (1ull << (rng() % 64)));
    }
    auto get = [&](unsigned j) { return w[j]; };
    for (std::uint32_t need = 1; need <= 32 * 64; need = need < 80 ? need + 1 : need * 2 - 7) {
      const free_run want = next_run_at_least(get, 32, 0, need), got = warp(w, need);
      ASSERT_EQ(got.length, want.length) << "t " << t << " need " << need;
      if (want.length) {
        ASSERT_EQ(got.start, want.start) << "t " << t << " need " << need;
      }
    }
  }
  // One all-free region: one run of 2048 from unit 0, for any need up to it.
  const std::vector<unsigned long long> empty(32, 0ull);
  EXPECT_EQ(warp(empty, 1).length, 2048u);
  EXPECT_EQ(warp(empty, 2048).start, 0u);
  EXPECT_EQ(warp(empty, 2049).length, 0u);
}

TEST(HolePattern, FreeShareAndHoleSizesFollowTheDraw) {
  const std::uint64_t units = 1u << 22;
  const auto w = hole_pattern(
      units + 5, 0.5, [](auto &) { return 32; }, 3);
  EXPECT_EQ(w.size(), (units + 5 + 63) / 64);
  EXPECT_EQ(w.back() >> 5, ~0ull >> 5) << "bits past the last unit are used";
  const double f = double(count_free_units(w)) / double(units + 5);
  EXPECT_NEAR(f, 0.5, 0.01);
  // Free runs are whole 32-unit holes (or unions of them) aligned to 32.
  const auto r = runs_reference(std::vector<unsigned long long>(w.begin(), w.begin() + 1024));
  for (const auto &[s, l] : r) {
    EXPECT_EQ(s % 32, 0u);
    EXPECT_EQ(l % 32, 0u);
  }
  EXPECT_THROW(hole_pattern(
                   64, 1.5, [](auto &) { return 1; }, 1),
               std::invalid_argument);
  EXPECT_NEAR(double(count_free_units(hole_pattern(
                  1u << 20, 0.1, [](auto &) { return 1; }, 4))) /
                  (1u << 20),
              0.1, 0.01);
}

TEST(RangeCheck, CountsMisalignedOutsideAndOverlapping) {
  EXPECT_EQ(count_bad_ranges({{0x1000, 0x1010}, {0x1010, 0x1100}}, 0x1000, 0x100), 0u)
      << "touching is not overlapping";
  EXPECT_EQ(count_bad_ranges({{0x1008, 0x1010}}, 0x1000, 0x100), 1u) << "misaligned";
  EXPECT_EQ(count_bad_ranges({{0x10f0, 0x1110}}, 0x1000, 0x100), 1u) << "past the pool";
  EXPECT_EQ(count_bad_ranges({{0x10f0, 0x1110}}, 0x1000, 0), 0u) << "bounds not checked";
  EXPECT_EQ(count_bad_ranges({{0x1020, 0x1040}, {0x1000, 0x1030}}, 0x1000, 0x100), 1u)
      << "overlap, in any order";
}

TEST(RangeCheck, AppendRangesSkipsAndCountsNulls) {
  char block[64];
  const std::vector<char *> p = {block, nullptr, block + 32, nullptr};
  std::vector<byte_range> r = {{1, 2}};
  EXPECT_EQ(append_ranges(r, p, [](std::size_t i) { return 16 + i; }), 2u);
  const auto at = reinterpret_cast<std::uintptr_t>(block);
  ASSERT_EQ(r.size(), 3u); // appended after what was there
  EXPECT_EQ(r[1], byte_range(at, at + 16));
  EXPECT_EQ(r[2], byte_range(at + 32, at + 32 + 18)); // the size of p[2]
}

TEST(RequestSizes, MixedIsMultiplesOfFourIn4To8192) {
  request_sizes mixed;
  double sum = 0;
  std::uint32_t lo = ~0u, hi = 0;
  for (std::uint64_t t = 0; t < 100000; ++t) {
    const auto s = mixed(t);
    ASSERT_EQ(s % 4, 0u);
    lo = std::min(lo, s), hi = std::max(hi, s);
    sum += s;
  }
  EXPECT_EQ(lo, 4u);
  EXPECT_EQ(hi, 8192u);
  EXPECT_NEAR(sum / 100000, mixed.mean_bytes(), 40);
  EXPECT_EQ((request_sizes{1050, 0})(7), 1050u);
  request_sizes next = mixed;
  next.round = 1;
  int differ = 0;
  for (std::uint64_t t = 0; t < 100; ++t)
    differ += next(t) != mixed(t);
  EXPECT_GT(differ, 90) << "each round draws again";
}

#ifndef GPUPROBE_BENCH
#define GPUPROBE_BENCH "" // gpuprobe-bench is built only where Google Benchmark is installed
#endif
#define GPUPROBE_REQUIRE_BENCH()                                                                   \
  if (std::string(GPUPROBE_BENCH).empty())                                                         \
  GTEST_SKIP() << "gpuprobe-bench not built (Google Benchmark not installed)"

namespace {
std::string bench_list(const std::string &flags) {
  std::string out;
  FILE *p = popen(
      (std::string(GPUPROBE_BENCH) + " --benchmark_list_tests " + flags + " 2>&1").c_str(), "r");
  if (!p)
    return out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;)
    out.append(buf, n);
  if (pclose(p) != 0)
    out += "\n(exit status non-zero)";
  return out;
}
bool lists(const std::string &out, const std::string &name) {
  return out.find(name + "/iterations:") != std::string::npos;
}
} // namespace

TEST(Bench, ListsEveryCaseWithoutAGpu) {
  GPUPROBE_REQUIRE_BENCH();
  const std::string full = bench_list("--gpuprobe_full"), def = bench_list("");
  ASSERT_EQ(full.find("non-zero"), std::string::npos) << full;
  for (const char *a : {"rw", "rw_bm32", "rw_bm64", "corw32", "corw64", "crw", "queue",
                        "queue_warp", "bump", "cuda_malloc"}) {
    EXPECT_TRUE(lists(full, std::string("BM_getpage/") + a + "/threads:1024/free_permille:500"))
        << a;
    EXPECT_TRUE(lists(def, std::string("BM_getpage/") + a + "/threads:4096/free_permille:500"))
        << a;
  }
  EXPECT_TRUE(lists(full, "BM_getpage/corw32/threads:1048576/free_permille:5"));
  EXPECT_FALSE(lists(def, "BM_getpage/corw32/threads:1048576/free_permille:10"))
      << "the default grid is smaller";
  EXPECT_EQ(full.find("BM_getpage/cuda_malloc/threads:1048576"), std::string::npos)
      << "cuda_malloc is capped at 2^18 threads";
  for (const char *a : {"rw_malloc", "ouroboros_page", "ouroboros_chunk"})
    for (const char *size : {"16", "256", "1024", "4096", "8192", "mixed", "4096+free"}) {
      const std::string cell =
          std::string("BM_malloc/") + a + "/size:" + size + "/threads:1048576/free_permille:500";
      EXPECT_EQ(lists(def, cell), std::string(a) != "ouroboros_chunk")
          << cell << " (ouroboros_chunk is capped at 2^16 threads)";
      EXPECT_TRUE(lists(def, std::string("BM_malloc/") + a + "/size:" + size +
                                 "/threads:65536/free_permille:500"))
          << a << " " << size;
    }
  EXPECT_TRUE(lists(def, "BM_malloc/xmalloc/size:256/threads:1048576/free_permille:1000"));
  EXPECT_FALSE(lists(def, "BM_malloc/xmalloc/size:mixed/threads:1048576/free_permille:1000"))
      << "uncoalesced sizes capped";
  EXPECT_TRUE(lists(def, "BM_malloc/cuda_malloc/size:mixed/threads:65536/free_permille:1000"));
  EXPECT_FALSE(lists(def, "BM_malloc/cuda_malloc/size:mixed/threads:1048576/free_permille:1000"))
      << "capped";
  EXPECT_TRUE(lists(bench_list("--gpuprobe_uncapped"),
                    "BM_malloc/cuda_malloc/size:mixed/threads:1048576/free_permille:1000"));
  EXPECT_TRUE(lists(full, "BM_malloc/rw_malloc/size:256/threads:1024/free_permille:10"));
  EXPECT_FALSE(lists(full, "BM_malloc/rw_malloc/size:8192/threads:1048576/free_permille:10"))
      << "8 GiB of requests do not fit 10% of a 36 GiB pool";
  EXPECT_TRUE(lists(def, "BM_utilization/rw_malloc/unit:256/size:1050"));
  EXPECT_TRUE(lists(def, "BM_utilization/ouroboros_page/chunk:8192/size:1050"));
  for (const char *v : {"do_bump", "queue", "rw", "rw_bm32", "corw32"}) {
    EXPECT_TRUE(
        lists(def, std::string("BM_workload/hash_join/") + v + "/tuples:10000000/page_bytes:32"))
        << v;
    EXPECT_TRUE(
        lists(def, std::string("BM_workload/hash_join/") + v + "/tuples:4194304/page_bytes:2048"))
        << v;
  }
  for (const char *v : {"static", "vmm", "ggarray_rw_malloc", "ggarray_cuda_malloc"})
    EXPECT_TRUE(lists(def, std::string("BM_workload/growable_array/") + v + "/elements:67108864"))
        << v;
  for (const char *w : {"sampling/cudamalloc/footprint_gib:72", "sampling/vmm/footprint_gib:72",
                        "grouping/cudamalloc/footprint_gib:70"})
    for (const char *m : {"one_pass", "scoped"})
      EXPECT_TRUE(lists(def, std::string("BM_workload/tlb_scoped_") + w + "/mode:" + m)) << w << m;
}

// The bench's scope is tune's measured one: read from a
// tuning.json, refused in one line where tune kept one pass; a profile is no longer read for it.
TEST(Bench, ScopeIsTunesMeasuredDecision) {
  GPUPROBE_REQUIRE_BENCH();
  const std::string committed = std::string(GPUPROBE_SOURCE_DIR) +
                                "/tests/fixtures/runs/nvidia-h100-80gb-hbm3-bba9cd54/tuning.json";
  nlohmann::json t = nlohmann::json::parse(std::ifstream(committed));
  const std::uint64_t scope = t["allocator"]["tlb_scope_bytes"].get<std::uint64_t>();
  ASSERT_GT(scope, 0u);
  std::string out = bench_list("--gpuprobe_tuning=" + committed);
  EXPECT_EQ(out.find("non-zero"), std::string::npos) << out;
  EXPECT_NE(out.find("TLB scope " + gpuprobe::format_bytes(double(scope))), std::string::npos)
      << out;
  t["allocator"]["tlb_scope_bytes"] = 0;
  const auto one_pass = gpuprobe::test::write_temp("one_pass_tuning.json", t.dump());
  out = bench_list("--gpuprobe_tuning=" + one_pass);
  EXPECT_NE(out.find("tune kept one pass"), std::string::npos) << out;
  EXPECT_NE(out.find("non-zero"), std::string::npos);
  out = bench_list("--gpuprobe_profile=x.json");
  EXPECT_NE(out.find("replaced by --gpuprobe_tuning"), std::string::npos) << out;
  EXPECT_NE(out.find("non-zero"), std::string::npos);
  EXPECT_EQ(bench_list("--gpuprobe_tlb_scope=1000").find("non-zero"), std::string::npos);
}

// The bench's own flags: sizes parsed as everywhere in gpuprobe (64G is 64 GiB, not 64 bytes),
// listed in --help, unknown ones refused; a run in which every case failed exits non-zero.
TEST(Bench, FlagsParseSizesAndAllFailedRunsExitNonZero) {
  GPUPROBE_REQUIRE_BENCH();
  using gpuprobe::test::run_binary;
  auto r = run_binary(GPUPROBE_BENCH, "--benchmark_list_tests --gpuprobe_tlb_scope=64G");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("TLB scope 64 GiB (from --gpuprobe_tlb_scope)"), std::string::npos) << r.err;
  r = run_binary(GPUPROBE_BENCH, "--benchmark_list_tests --gpuprobe_tlb_scope=2097152");
  EXPECT_NE(r.err.find("TLB scope 2 MiB"), std::string::npos) << r.err;
  r = run_binary(GPUPROBE_BENCH, "--benchmark_list_tests --gpuprobe_tlb_scope=64Q");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("unknown unit"), std::string::npos) << r.err;
  r = run_binary(GPUPROBE_BENCH, "--benchmark_list_tests --gpuprobe_tlbscope=1G");
  EXPECT_NE(r.exit_code, 0) << "a misspelt gpuprobe flag is refused";
  r = run_binary(GPUPROBE_BENCH, "--help");
  for (const char *f : {"--gpuprobe_full", "--gpuprobe_uncapped", "--gpuprobe_tuning=FILE",
                        "--gpuprobe_tlb_scope=SIZE", "--gpuprobe_peers_warp_clock"})
    EXPECT_NE(r.out.find(f), std::string::npos) << f << " missing from --help: " << r.out;
  // A scoped case without a scope fails on any machine (no GPU: "no CUDA device"; a GPU: "no TLB
  // scope").
  r = run_binary(GPUPROBE_BENCH,
                 "--benchmark_filter='BM_workload/tlb_scoped_sampling/cudamalloc/.*/mode:scoped'");
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("failed"), std::string::npos) << r.err;
}

// BM_peers (bench/peers/README.md): the grid lists without a GPU, gpuprobe's allocators always,
// the capped cells left out unless --gpuprobe_uncapped, the heap flag parsed and recorded.
TEST(Bench, PeerHarnessGridAndHeapFlag) {
  GPUPROBE_REQUIRE_BENCH();
  using gpuprobe::test::run_binary;
  auto r = run_binary(GPUPROBE_BENCH, "--benchmark_list_tests --benchmark_filter=BM_peers/");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto count = [&](const std::string &prefix) {
    int n = 0;
    for (std::size_t p = r.out.find(prefix); p != std::string::npos; p = r.out.find(prefix, p + 1))
      ++n;
    return n;
  };
  // 6 sizes x 3 thread counts x 3 states (empty, churn, churn by size class).
  EXPECT_EQ(count("BM_peers/rw_malloc/"), 54);
  EXPECT_EQ(count("BM_peers/corw64/"), 54);
  EXPECT_EQ(count("BM_peers/bump/"), 54);
  EXPECT_EQ(count("BM_peers/cuda_malloc/"), 12); // up to 2^17 threads, empty heap only
  EXPECT_NE(r.out.find("BM_peers/rw_malloc/size:mixed/threads:1048576/state:churn"),
            std::string::npos);
  EXPECT_NE(r.out.find("BM_peers/rw_malloc/size:16/threads:16384/state:classchurn"),
            std::string::npos);
  EXPECT_EQ(r.out.find("BM_peers/cuda_malloc/size:16/threads:1048576"), std::string::npos);
  r = run_binary(
      GPUPROBE_BENCH,
      "--benchmark_list_tests --benchmark_filter=BM_peers/cuda_malloc --gpuprobe_uncapped");
  EXPECT_EQ(count("BM_peers/cuda_malloc/"), 54);
  r = run_binary(GPUPROBE_BENCH, "--benchmark_list_tests --gpuprobe_peers_heap=12Q");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--gpuprobe_peers_heap"), std::string::npos) << r.err;
  // rw_malloc's flags: each bad value refused in a line naming the flag, a good one taken.
  const std::vector<std::pair<std::string, std::vector<std::string>>> rw_flags = {
      {"--gpuprobe_rw_stash=", {"-1", "65", "4x", "0"}},
      {"--gpuprobe_rw_optimistic=", {"2", "", "yes", "0"}},
      {"--gpuprobe_rw_refill=", {"0", "17", "2x", "", "2"}},
      {"--gpuprobe_rw_refill_small=", {"0", "17", "08", "", "8"}},
      {"--gpuprobe_rw_stash_times=", {"0", "65", "1.5", "", "32"}},
      {"--gpuprobe_rw_stash_share=", {"1", "65", "8x", "", "8"}},
      {"--gpuprobe_rw_sm_slices=", {"-1", "1025", "16x", "", "132"}},
      {"--gpuprobe_rw_recycle_share=", {"-1", "65", "8x", "", "0"}},
      {"--gpuprobe_rw_recycle_ranges=", {"0", "33", "2x", "", "1"}},
      {"--gpuprobe_rw_bulk=", {"-1", "64", "3", "12", "", "0"}},
      {"--gpuprobe_rw_sweeps=", {"-1", "9", "2x", "", "4"}}};
  for (const auto &[flag, values] : rw_flags)
    for (const auto &v : values) {
      const bool good = &v == &values.back();
      r = run_binary(GPUPROBE_BENCH,
                     "--benchmark_list_tests --benchmark_filter=BM_peers/rw_malloc " + flag + v);
      EXPECT_EQ(r.exit_code == 0, good) << flag << v << ": " << r.err;
      if (!good) {
        EXPECT_NE(r.err.find(flag.substr(0, flag.size() - 1)), std::string::npos) << r.err;
      }
    }
  r = run_binary(GPUPROBE_BENCH, "--help");
  EXPECT_NE(r.out.find("--gpuprobe_peers_heap=SIZE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_peers_no_ladder"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_rw_stash=N"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_rw_optimistic=B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_rw_refill=N"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_rw_refill_small=N"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_rw_stash_times=N"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_rw_stash_share=N"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_rw_sm_slices=N"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_rw_recycle_share=N"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_rw_recycle_ranges=N"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_rw_bulk=N"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpuprobe_rw_sweeps=N"), std::string::npos) << r.out;
}
