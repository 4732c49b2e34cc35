// Issue 45 item 3: tlb-coverage's host logic (probes/coverage/result.cpp) on simulated TLBs whose
// entries are of a known kind: one tag over an aligned window or a range over any r consecutive
// slots; filled whole by one miss or a sector at a time; covering a window whatever is mapped or
// only when every slot of it is (a coalescing of valid pages). A seeded family of one- and
// two-level hierarchies of each kind, walked hop by hop (LRU sets, noise and rare spikes): the
// verdict must name each level's kind. GPUPROBE_COVERAGE_GPUS sets the family's size.
#include "probes/coverage/driver.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>

using namespace gpuprobe;
using namespace gpuprobe::probes;

namespace {

struct sim_level {
  std::uint32_t entries = 16, ways = 16, slots = 8; // slots per entry (r)
  bool aligned = true;       // false: an entry covers [s, s + r) from the slot s that missed
  bool sectored = false;     // a miss fills one slot's sector of its tag
  bool needs_mapped = false; // the window is covered only when all its slots are mapped
  double penalty = 50;
  // The sweep's view hides a level of twice the entries of half the coverage whose set index
  // puts the pages of a walk at stride `slots` in half its sets (`slots`, `entries` and
  // `ways` are what the sweep sees).
  bool half = false;
  std::uint32_t sets() const { return entries / ways; }
};

struct entry {
  std::uint64_t key = ~0ull; // aligned: window (or single slot, tagged); unaligned: start slot
  std::uint64_t valid = 0;   // sectored: the slots filled
  std::uint64_t used = 0;
};

class coverage_tlb {
public:
  coverage_tlb(std::vector<sim_level> levels, double noise, std::uint64_t seed)
      : view_(levels), levels_(std::move(levels)), noise_(noise), rng_(seed) {
    for (auto &L : levels_)
      if (L.half) { // the hardware behind the view
        L.slots /= 2;
        L.entries *= 2;
      }
    for (const auto &L : levels_)
      table_.emplace_back(L.entries);
  }
  const std::vector<sim_level> &levels() const { return view_; }

  void map(const slot_layout &l) { mapped_ = l.chunk_of; }

  // One hop at `slot`: the cycles it costs (every level that missed is filled).
  double hop(std::uint64_t slot) {
    if (slot >= mapped_.size() || mapped_[slot] < 0)
      throw std::runtime_error("the simulated walk touched an unmapped slot");
    ++clock_;
    double cost = 300 + std::normal_distribution<double>(0, noise_)(rng_);
    if (std::uniform_real_distribution<double>(0, 1)(rng_) < 1e-4)
      cost += 400; // a rare spike
    std::size_t k = 0;
    for (; k < levels_.size(); ++k) {
      if (lookup(k, slot))
        break;
      cost += levels_[k].penalty;
    }
    for (std::size_t j = 0; j < k && j < levels_.size(); ++j)
      fill(j, slot);
    return cost;
  }

private:
  bool window_mapped(const sim_level &L, std::uint64_t w) const {
    for (std::uint64_t s = w * L.slots; s < (w + 1) * L.slots; ++s)
      if (s >= mapped_.size() || mapped_[s] < 0)
        return false;
    return true;
  }
  // The key an aligned level files `slot` under: its window, or the slot alone (tagged by the
  // top bit) where the level needs every slot mapped and the window is not.
  std::uint64_t aligned_key(const sim_level &L, std::uint64_t slot) const {
    const std::uint64_t w = slot / L.slots;
    return L.needs_mapped && !window_mapped(L, w) ? (slot | 1ull << 63) : w;
  }
  std::uint64_t set_of(const sim_level &L, std::uint64_t key) const {
    if (L.half) // index bit 0 is key bit 0 XORed with a bit no walk here reaches (as Hopper's L3
                // seems to): keys at even steps reach the even sets only
      return (((key ^ (key >> __builtin_ctzll(L.sets()))) & ~1ull) | ((key ^ (key >> 20)) & 1)) %
             L.sets();
    return (key ^ (key >> 7)) % L.sets(); // a hashed index (any index is fine for the verdicts)
  }
  bool lookup(std::size_t k, std::uint64_t slot) {
    const sim_level &L = levels_[k];
    auto &t = table_[k];
    if (!L.aligned) { // fully associative ranges
      for (auto &e : t)
        if (e.key != ~0ull && slot >= e.key && slot < e.key + L.slots) {
          e.used = clock_;
          return true;
        }
      return false;
    }
    const std::uint64_t key = aligned_key(L, slot), set = set_of(L, key);
    for (std::uint32_t w = 0; w < L.ways; ++w) {
      entry &e = t[set * L.ways + w];
      if (e.key == key) {
        if (L.sectored && !(e.valid >> (slot % L.slots) & 1))
          return false; // the tag is here, the sector is not
        e.used = clock_;
        return true;
      }
    }
    return false;
  }
  void fill(std::size_t k, std::uint64_t slot) {
    const sim_level &L = levels_[k];
    auto &t = table_[k];
    const std::uint64_t key = L.aligned ? aligned_key(L, slot) : slot;
    const std::uint64_t set = L.aligned ? set_of(L, key) : 0;
    const std::uint32_t ways = L.aligned ? L.ways : L.entries;
    entry *victim = nullptr;
    for (std::uint32_t w = 0; w < ways; ++w) {
      entry &e = t[set * ways + w];
      if (L.aligned && e.key == key) { // a sector of a tag already here
        victim = &e;
        break;
      }
      if (!victim || e.used < victim->used)
        victim = &e;
    }
    if (victim->key != key)
      victim->valid = 0;
    victim->key = key;
    victim->valid |= L.sectored ? 1ull << (slot % L.slots) : ~0ull;
    victim->used = clock_;
  }

  std::vector<sim_level> view_, levels_;
  std::vector<std::vector<entry>> table_;
  std::vector<int> mapped_;
  double noise_;
  std::mt19937_64 rng_;
  std::uint64_t clock_ = 0;
};

coverage_env sim_env(coverage_tlb &tlb) {
  coverage_env env;
  auto layouts = std::make_shared<std::map<std::string, slot_layout>>();
  env.map = [&tlb, layouts](const std::string &key, const slot_layout &l) {
    auto &kept = (*layouts)[key];
    if (key != "all" || kept.chunk_of.size() < l.chunk_of.size())
      kept = l;
    tlb.map(kept);
  };
  env.walk = [&tlb](const walk_pattern &p, std::uint32_t groups, std::uint32_t laps, double thr,
                    bool) {
    walk_stats s;
    const std::size_t n = p.offsets.size();
    s.mean_cycles.assign(n, 0);
    s.misses_per_lap.assign(n, 0);
    for (std::uint32_t lap = 0; lap < p.warm_laps + laps; ++lap)
      for (std::uint32_t g = 0; g < groups; ++g)
        for (std::size_t j = 0; j < n; ++j) {
          const double c = tlb.hop(p.first_slot + std::uint64_t(g) * p.period + p.offsets[j]);
          if (lap < p.warm_laps)
            continue; // the warm laps
          s.mean_cycles[j] += c / (double(groups) * laps);
          s.misses_per_lap[j] += (c > thr ? 1.0 : 0.0) / laps;
        }
    return s;
  };
  return env;
}

// The profile a sweep would have given for the simulated levels.
model::tlb_hierarchy profile_of(const std::vector<sim_level> &levels) {
  model::tlb_hierarchy h;
  double before = 300;
  for (const auto &S : levels) {
    model::tlb_level L;
    L.coverage_bytes = double(S.slots) * double(2ull << 20);
    L.entries = S.entries;
    L.reach_bytes = S.entries * L.coverage_bytes;
    L.ways = S.ways;
    L.sets = S.sets();
    L.miss_penalty_cycles = S.penalty;
    model::level_structure st;
    st.resolved = true;
    st.entries = S.entries;
    st.full_miss_entries = S.sets() == 1 ? S.entries + 1.0 : S.entries + 1.5 * S.sets();
    st.before_cycles = before;
    st.after_cycles = before + S.penalty;
    before += S.penalty;
    L.structure = st;
    h.levels.push_back(L);
  }
  return h;
}

struct kind_tally {
  int levels = 0, tag = 0, fill = 0, mapped = 0, unresolved = 0;
};

} // namespace

// One of each kind, by hand: the verdict's words for a 16-entry level of 8 slots.
TEST(TlbCoverage, EachKindOfEntryIsNamed) {
  struct kase {
    sim_level L;
    std::string tag, fill, mapped, words;
  } cases[] = {
      {{16, 16, 8, true, false, false, 20},
       "aligned",
       "whole",
       "no effect",
       "8 consecutive 2 MiB pages under one tag aligned to 16 MiB; one miss fills all 8"},
      {{16, 16, 8, false, false, false, 20},
       "unaligned",
       "whole",
       "no effect",
       "any 8 consecutive 2 MiB pages, aligned or not"},
      {{16, 16, 8, true, true, false, 20},
       "aligned",
       "in parts",
       "no effect",
       "a page 14 MiB in misses on its own after the first: the entry is filled in parts"},
      {{16, 16, 8, true, false, true, 20},
       "aligned",
       "whole",
       "changes the onset",
       "unmapped neighbours change the coverage"},
  };
  for (const auto &c : cases) {
    coverage_tlb tlb({c.L, {512, 8, 16, true, false, false, 100}}, 1.0, 7);
    auto env = sim_env(tlb);
    const coverage_options o;
    const auto targets = plan_coverage(profile_of(tlb.levels()), o);
    ASSERT_EQ(targets.size(), 2u);
    ASSERT_EQ(targets[0].skipped, "");
    const auto r = measure_coverage(env, targets[0], o);
    const auto &v = r.verdict;
    EXPECT_EQ(v.value("tag", ""), c.tag) << v.dump();
    EXPECT_EQ(v.value("fill", ""), c.fill) << v.dump();
    EXPECT_EQ(v.value("unmapped_neighbours", ""), c.mapped) << v.dump();
    EXPECT_EQ(v.value("distinct_chunks", ""), "no effect") << v.dump();
    EXPECT_EQ(v.value("ordered_allocation", ""), "no effect") << v.dump();
    EXPECT_NE(v.value("finding", "").find(c.words), std::string::npos) << v.dump();
    EXPECT_EQ(v.value("finding", "").find("not resolved"), std::string::npos) << v.dump();
    // The fully associative level's repeated walks: E windows never miss, E + 1 always do.
    for (const auto &rp : v["repeated_onsets"])
      EXPECT_EQ(rp.value("missed", -1), rp.value("windows", 0) == 16 ? 0 : 6) << rp.dump();
  }
}

// A seeded family: 1 or 2 levels, each of a random kind, size, ways and penalty; the verdict must
// name every tested level's kind (tag, fill, mapped neighbours), or say "not resolved": at most
// 1 % named wrong and 5 % not resolved (each wrong one is printed).
TEST(TlbCoverage, ASeededFamilyOfKindsIsNamedRight) {
  int gpus = 40;
  if (const char *env = std::getenv("GPUPROBE_COVERAGE_GPUS"))
    gpus = std::max(1, std::atoi(env));
  std::mt19937_64 rng(20261126);
  const auto pick = [&](std::initializer_list<std::uint32_t> v) {
    return *(v.begin() + std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng));
  };
  const auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
  kind_tally t;
  int wrong = 0;
  for (int g = 0; g < gpus; ++g) {
    std::vector<sim_level> levels;
    sim_level a;
    a.slots = pick({2, 4, 8, 16});
    a.entries = pick({8, 16, 32, 64});
    a.aligned = coin();
    a.ways = a.aligned && coin() ? pick({4, 8}) : a.entries;
    a.sectored = a.aligned && coin();
    a.needs_mapped = a.aligned && coin();
    a.penalty = pick({10, 20, 60});
    levels.push_back(a);
    if (coin()) {
      sim_level b;
      b.slots = a.slots * pick({2, 4});
      b.entries = pick({256, 512, 1024});
      b.ways = pick({4, 8, 16});
      b.sectored = coin();
      b.needs_mapped = coin();
      b.half = !b.sectored && !b.needs_mapped && coin();
      b.penalty = pick({80, 200, 400});
      levels.push_back(b);
    }
    const double noise = std::min(2.0, a.penalty / 10);
    coverage_tlb tlb(levels, noise, rng());
    auto env = sim_env(tlb);
    coverage_options o;
    o.max_chunks = 4096;
    const auto targets = plan_coverage(profile_of(levels), o);
    for (std::size_t k = 0; k < targets.size(); ++k) {
      ASSERT_EQ(targets[k].skipped, "") << k;
      const auto r = measure_coverage(env, targets[k], o);
      const auto &v = r.verdict;
      const sim_level &S = levels[k];
      ++t.levels;
      const std::string tag = v.value("tag", ""), fill = v.value("fill", ""),
                        mapped = v.value("unmapped_neighbours", ""),
                        distinct = v.value("distinct_chunks", "");
      const bool unresolved = tag == "not resolved" || fill == "not resolved" ||
                              mapped == "not resolved" || distinct == "not resolved";
      t.unresolved += unresolved;
      const bool ok_tag = tag == (S.half ? "half" : S.aligned ? "aligned" : "unaligned");
      const bool ok_fill = fill == (S.sectored || S.half ? "in parts" : "whole");
      const bool ok_mapped = mapped == (S.slots < 4      ? "not testable (2 slots per entry)"
                                        : S.needs_mapped ? "changes the onset"
                                                         : "no effect");
      const bool ok_distinct = distinct == "no effect"; // the simulation ignores the chunks
      t.tag += ok_tag;
      t.fill += ok_fill;
      t.mapped += ok_mapped;
      if (!unresolved && !(ok_tag && ok_fill && ok_mapped && ok_distinct)) {
        ++wrong;
        ADD_FAILURE() << "gpu " << g << " level " << k << " (entries " << S.entries << ", ways "
                      << S.ways << ", slots " << S.slots << ", aligned " << S.aligned
                      << ", sectored " << S.sectored << ", needs_mapped " << S.needs_mapped
                      << ", half " << S.half << "): " << v.dump();
      }
    }
  }
  std::printf("tlb-coverage on %d simulated GPUs, %d levels: tag named %d, fill %d, mapped "
              "neighbours %d, not resolved %d, wrong %d\n",
              gpus, t.levels, t.tag, t.fill, t.mapped, t.unresolved, wrong);
  // Stated rates (docs/analyze-tlb.md): at most 1 % named wrong (300 GPUs: 1 of 435, a level of
  // half the coverage whose straddling walk missed at the aligned walk's onset once), at most 5 %
  // not resolved.
  EXPECT_LE(wrong * 100, t.levels);
  EXPECT_LE(t.unresolved, t.levels / 20);
}

// A level whose coverage the level inside it already has (one H100 unit's L3 read as 4096 x 32 MiB
// beside its L2 of 32 MiB): the fill cannot be read there, and the verdict says so instead of
// walking slot 0 twice.
TEST(TlbCoverage, AFillTheInnerLevelHidesIsNotTestable) {
  coverage_tlb tlb({{16, 16, 8, true, false, false, 20},
                    {256, 8, 16, true, false, false, 100},
                    {512, 8, 16, true, false, false, 400}},
                   1.0, 3);
  auto env = sim_env(tlb);
  const coverage_options o;
  const auto targets = plan_coverage(profile_of(tlb.levels()), o);
  ASSERT_EQ(targets.size(), 3u);
  const auto r = measure_coverage(env, targets[2], o);
  EXPECT_FALSE(r.fill.testable);
  EXPECT_EQ(r.verdict.value("fill", ""), "not testable") << r.verdict.dump();
  EXPECT_NE(r.verdict.value("finding", "").find("the level inside covers as much"),
            std::string::npos);
  EXPECT_EQ(r.verdict.value("tag", ""), "aligned") << r.verdict.dump();
}
