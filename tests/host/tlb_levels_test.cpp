// The analyzer recovers the TLB paper's tables from its raw data (shared/fixtures/cuda-gpu-tlb),
// finds no level in the naive H100 port's flat curves, and recovers simulated hierarchies.
#include "probes/tlb/levels.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <tuple>

using namespace gpuprobe::probes;
namespace model = gpuprobe::model;
using gpuprobe::test::fixture;

namespace {

// The rise detectors alone, what this file tests (test::detectors_only).
tlb_evidence detectors(const tlb_dataset &d) {
  return find_tlb_levels(d, gpuprobe::test::detectors_only());
}

constexpr double lv_kib = 1024.0, lv_mib = 1024.0 * 1024.0, lv_gib = 1024.0 * lv_mib;

std::vector<std::string> fixture_files(const std::string &gpu) {
  std::vector<std::string> out;
  const auto dir = fixture(gpu);
  if (!std::filesystem::is_directory(dir))
    return out;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("TLB-Test-", 0) == 0)
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

void expect_within(double got, double want, double rel, const std::string &what) {
  EXPECT_NEAR(got, want, rel * want) << what;
}

// The levels of a table (published, or simulated), in order: each one's entries (within 10 %)
// and coverage.
void expect_table(const tlb_evidence &a, const std::string &gpu,
                  const std::vector<std::pair<double, double>> &entries_coverage) {
  ASSERT_EQ(a.levels.size(), entries_coverage.size()) << gpu;
  for (std::size_t k = 0; k < entries_coverage.size(); ++k) {
    const auto &[entries, coverage] = entries_coverage[k];
    const std::string what = gpu + " L" + std::to_string(k + 1);
    expect_within(a.levels[k].entries, entries, 0.10, what + " entries");
    EXPECT_EQ(a.levels[k].coverage_bytes, coverage) << what;
  }
}

tlb_evidence analyze_tlb_fixture(const std::string &gpu) {
  const auto files = fixture_files(gpu);
  EXPECT_FALSE(files.empty()) << "fixtures missing: " << fixture(gpu);
  return detectors(load_tlb_inputs(files));
}

// One 2 MiB stride alone, 1 .. hops - 1 hops: `lo` cycles up to `at` hops, `hi` above.
tlb_dataset one_stride(int hops, int at, double lo, double hi) {
  tlb_dataset d;
  tlb_curve c{"sim", 2 * lv_mib, {}, {}};
  for (int h = 1; h < hops; ++h) {
    c.footprint_bytes.push_back(h * 2 * lv_mib);
    c.cycles.push_back(h > at ? hi : lo);
  }
  d.curves.push_back(c);
  return d;
}

} // namespace

TEST(TlbFixtures, K80ThreeLevels) {
  const auto a = analyze_tlb_fixture("K80");
  // L1: 16 x 128 KB; L2: 2 MB pages, the raw data reads ~70 entries (the paper prints 65); L3:
  // ~1032 x 2 MB.
  ASSERT_NO_FATAL_FAILURE(
      expect_table(a, "K80", {{16, 128 * lv_kib}, {70, 2 * lv_mib}, {1032, 2 * lv_mib}}));
  expect_within(a.levels[1].reach_bytes, 140 * lv_mib, 0.10, "K80 L2 reach"); // step near 140 MB
  for (const auto &L : a.levels) {
    EXPECT_EQ(to_string(L.bound), "exact");
    EXPECT_GT(L.miss_penalty_cycles, 0);
    EXPECT_GT(L.confidence, 0.5);
  }
  // The penalty grows outward.
  EXPECT_LT(a.levels[0].miss_penalty_cycles, a.levels[1].miss_penalty_cycles);
  EXPECT_LT(a.levels[1].miss_penalty_cycles, a.levels[2].miss_penalty_cycles);
}

TEST(TlbFixtures, P100TwoLevels) {
  const auto a = analyze_tlb_fixture("P100");
  ASSERT_NO_FATAL_FAILURE(expect_table(a, "P100", {{16, 2 * lv_mib}, {65, 32 * lv_mib}}));
  EXPECT_EQ(to_string(a.levels[1].bound), "exact");
  // Strides below the page pay a proportionally smaller penalty (16 MB stride: half).
  ASSERT_FALSE(a.levels[1].flat.empty());
  EXPECT_NEAR(a.levels[1].flat[0].s.jump / a.levels[1].miss_penalty_cycles, 0.5, 0.1);
}

// What every later stage reads: analyze_tlb's model::tlb_hierarchy holds the published K80 and P100
// tables (the one type of a level), and it is the model of the evidence's profile block, so a
// stage that analyzes now and one that reads the profile back see the same levels.
TEST(TlbFixtures, TheHierarchyEveryStageReadsHoldsThePublishedTables) {
  for (const auto &[gpu, entries, pages] :
       std::vector<std::tuple<std::string, std::vector<double>, std::vector<double>>>{
           {"K80", {16, 70, 1032}, {128 * lv_kib, 2 * lv_mib, 2 * lv_mib}},
           {"P100", {16, 65}, {2 * lv_mib, 32 * lv_mib}}}) {
    const auto data = load_tlb_inputs(fixture_files(gpu));
    const model::tlb_hierarchy h = analyze_tlb(data);
    ASSERT_EQ(h.levels.size(), entries.size()) << gpu;
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const auto &L = h.levels[k];
      expect_within(L.entries.value_or(0), entries[k], 0.10, gpu + " " + level_label(false, k));
      EXPECT_EQ(L.coverage_bytes, pages[k]) << gpu;
      EXPECT_NEAR(L.reach_bytes, L.entries.value_or(0) * pages[k], 1e-6 * L.reach_bytes);
      EXPECT_EQ(L.coverage_bound.value_or(""), "exact") << gpu;
      EXPECT_GT(L.miss_penalty_cycles.value_or(0), 0) << gpu;
    }
    EXPECT_EQ(model::to_json(h),
              model::to_json(model::tlb_hierarchy_from_json(to_json(detectors(data)))))
        << gpu;
  }
}

TEST(TlbFixtures, H100NaivePortFindsNoLevel) {
  const auto a = analyze_tlb_fixture("H100");
  EXPECT_TRUE(a.levels.empty());
  EXPECT_GE(a.searched_up_to_bytes, 12000 * lv_mib);
  bool said_none = false;
  for (const auto &n : a.notes)
    said_none |= n.find("no TLB boundary found up to") != std::string::npos;
  EXPECT_TRUE(said_none);
  const auto j = to_json(a);
  EXPECT_TRUE(j["levels"].empty());
}

std::vector<double> pow2_strides(double lo, double hi) {
  std::vector<double> v;
  for (double s = lo; s <= hi; s *= 2)
    v.push_back(s);
  return v;
}

TEST(TlbSimulated, ThreeLevelsWithNoiseAndMissingCells) {
  const std::vector<gpuprobe::test::sim_level> truth = {
      {16, 2 * lv_mib, 20}, {128, 2 * lv_mib, 60}, {2048, 32 * lv_mib, 150}};
  for (unsigned seed = 1; seed <= 5; ++seed) {
    auto d = gpuprobe::test::sim_dataset(truth, 270, pow2_strides(512 * lv_kib, 512 * lv_mib),
                                         1 * lv_mib, 200 * lv_gib, 16, 1.0, seed, 9);
    const auto a = detectors(d);
    ASSERT_EQ(a.levels.size(), 3u) << "seed " << seed;
    for (std::size_t i = 0; i < 3; ++i) {
      expect_within(a.levels[i].entries, truth[i].entries, 0.10, "entries");
      EXPECT_EQ(a.levels[i].coverage_bytes, truth[i].coverage_bytes);
      EXPECT_EQ(to_string(a.levels[i].bound), "exact");
      expect_within(a.levels[i].miss_penalty_cycles, truth[i].penalty, 0.15, "penalty");
    }
  }
}

TEST(TlbSimulated, LevelWithAFewCyclesPenalty) {
  const std::vector<gpuprobe::test::sim_level> truth = {{32, 64 * lv_kib, 4}};
  const auto a = detectors(gpuprobe::test::sim_dataset(
      truth, 250, pow2_strides(16 * lv_kib, 1 * lv_mib), 64 * lv_kib, 256 * lv_mib, 16, 0.3, 7));
  ASSERT_NO_FATAL_FAILURE(expect_table(a, "simulated", {{32, 64 * lv_kib}}));
  expect_within(a.levels[0].miss_penalty_cycles, 4, 0.25, "penalty");
}

TEST(TlbSimulated, FlatCurvesGiveNoLevelAndSaySo) {
  auto d = gpuprobe::test::sim_dataset({}, 270, pow2_strides(64 * lv_kib, 64 * lv_mib), 1 * lv_mib,
                                       64 * lv_gib, 4, 3.0, 11);
  const auto a = detectors(d);
  EXPECT_TRUE(a.levels.empty());
  ASSERT_FALSE(a.notes.empty());
  EXPECT_NE(a.notes.back().find("no TLB boundary found up to 63.50 GiB"), std::string::npos)
      << a.notes.back();
}

TEST(TlbSimulated, L2CapacityStepIsNotATlbLevel) {
  // Every stride rises after the same number of hops (= L2 lines): a cache effect.
  tlb_dataset d;
  d.l2_bytes = 50 * 1000 * 1000;
  const double lines = double(d.l2_bytes) / 128;
  for (double s : pow2_strides(64 * lv_kib, 1 * lv_mib)) {
    tlb_curve c{"sim", s, {}, {}};
    for (double h = 1000; h * s < 1024 * lv_gib; h *= 1.2) {
      c.footprint_bytes.push_back(h * s);
      c.cycles.push_back(h > lines ? 700 : 280);
    }
    d.curves.push_back(c);
  }
  const auto a = detectors(d);
  EXPECT_TRUE(a.levels.empty());
  ASSERT_EQ(a.cache_effects.size(), 1u);
  expect_within(a.cache_effects[0].entries, lines, 0.2, "hops at the cache step");
}

TEST(TlbSimulated, OneStrideAloneIsNotALevel) {
  const auto a = detectors(one_stride(200, 100, 300, 330));
  EXPECT_TRUE(a.levels.empty());
  EXPECT_EQ(a.unexplained.size(), 1u);
}

TEST(TlbSimulated, PageSizeIsAnUpperBoundWhenNoSmallerStrideShowsIt) {
  const std::vector<gpuprobe::test::sim_level> truth = {{64, 64 * lv_kib, 30}};
  const auto a = detectors(gpuprobe::test::sim_dataset(
      truth, 250, pow2_strides(256 * lv_kib, 4 * lv_mib), 1 * lv_mib, 2 * lv_gib, 8, 0.5, 3));
  ASSERT_NO_FATAL_FAILURE(expect_table(a, "simulated", {{64, 256 * lv_kib}}));
  EXPECT_EQ(to_string(a.levels[0].bound), "upper");
}

// The aliased chase on an H100 and an H200 (tests/fixtures/gpuprobe-alias, recorded with
// `gpuprobe tlb --alloc alias` before the sweep refined both ends of a ramp): both GPUs show the
// same two levels, 16 entries covering 16 MiB each (+10 cycles, fully associative) and ~2.1K
// entries covering 32 MiB each (reach ~67 GiB, +94 cycles: the ramp's middle). A later
// level stacked on a curve (the H200's +430-cycle step near 272 GiB) must not break the
// penalty rule of the levels below it.
// The H100 sweep ends at 256 GiB; the H200's at 512 GiB also shows the third structure.
TEST(TlbLevels, AliasedCurvesGiveTheSameLevelsOnH100AndH200) {
  std::vector<double> l2_entries;
  for (const char *f : {"h100-alias-2m.json", "h200-alias-2m.json"}) {
    const auto path = std::string(GPUPROBE_FIXTURES_DIR) + "/gpuprobe-alias/" + f;
    const auto a = detectors(load_tlb_inputs({path}));
    const bool h200 = std::string(f).rfind("h200", 0) == 0;
    ASSERT_EQ(a.levels.size(), h200 ? 3u : 2u) << f;
    if (h200) {
      const auto &l3 = a.levels[2];
      EXPECT_EQ(l3.coverage_bytes, 64.0 * (1 << 20)) << f;
      EXPECT_EQ(to_string(l3.bound), "lower") << f;
      // These sweeps predate the refinement of both ramp ends: the structure is not resolved
      // (its ends would be extrapolated), and the level is where the fit puts the ramp's start,
      // with its error.
      EXPECT_FALSE(l3.structure.fit.resolved);
      EXPECT_NE(l3.structure.fit.why.find("extrapolated"), std::string::npos)
          << l3.structure.fit.why;
      EXPECT_GE(l3.entries, 4096) << f;
      EXPECT_LE(l3.entries - l3.entries_se, 4096 + 30) << f;
      EXPECT_GT(l3.entries_se, 0) << f;
      // The mean's rise (a median sits on either mode of the walk's cost: +432 here).
      EXPECT_NEAR(l3.miss_penalty_cycles, 406, 10) << f;
    }
    const auto &l1 = a.levels[0], &l2 = a.levels[1];
    EXPECT_EQ(l1.entries, 16) << f;
    EXPECT_EQ(l1.coverage_bytes, 16.0 * (1 << 20)) << f;
    EXPECT_NEAR(l1.miss_penalty_cycles, 10.5, 1.5) << f;
    EXPECT_GE(l1.confidence, 0.65) << f;
    EXPECT_EQ(l2.coverage_bytes, 32.0 * (1 << 20)) << f;
    EXPECT_EQ(to_string(l2.bound), "exact") << f;
    EXPECT_GE(l2.entries, 2048) << f; // where misses begin (the fitted onset), or past it
    EXPECT_LT(l2.entries, 2200) << f;
    EXPECT_FALSE(l2.structure.fit.resolved) << f;
    EXPECT_EQ(l1.structure.fit.sets, 1) << f << ": fully associative (a step needs no refinement)";
    EXPECT_EQ(l1.structure.fit.shape, "step") << f;
    EXPECT_NEAR(l2.miss_penalty_cycles, 95, 5) << f;
    EXPECT_GT(a.searched_up_to_bytes, 200.0 * (1ull << 30)) << f << ": past the device memory";
    l2_entries.push_back(l2.entries);
  }
  EXPECT_LT(std::fabs(l2_entries[0] - l2_entries[1]) / l2_entries[0], 0.005)
      << "one answer per GPU family";
}

// Levels whose reach lies past 1 TiB: the aliased chase's footprint is bounded by the address
// space, not the memory.
TEST(TlbSimulated, ThreeLevelsTheLastPastOneTebibyte) {
  const double TiB = 1024 * lv_gib;
  const std::vector<gpuprobe::test::sim_level> truth = {
      {16, 16 * lv_mib, 10}, {2048, 32 * lv_mib, 95}, {4096, 512 * lv_mib, 300}}; // reach 2 TiB
  auto d = gpuprobe::test::sim_dataset(truth, 300, pow2_strides(2 * lv_mib, 1024 * lv_mib),
                                       2 * lv_mib, 4 * TiB, 16, 0.3, 5);
  const auto a = detectors(d);
  ASSERT_EQ(a.levels.size(), 3u);
  EXPECT_EQ(a.levels[2].coverage_bytes, 512 * lv_mib);
  expect_within(a.levels[2].reach_bytes, 2 * TiB, 0.02, "reach");
  expect_within(a.levels[2].miss_penalty_cycles, 300, 0.1, "penalty");
  EXPECT_GE(a.searched_up_to_bytes, 4 * TiB * 0.99);
}

// A curve that creeps up a few cycles just below the next level's boundary (the aliased chase
// does, by 1-4 cycles, where refinement puts extra points): the level before keeps the penalty
// of its plateau, not of the creep.
TEST(TlbSimulated, CreepBeforeTheNextStepDoesNotInflateThePenalty) {
  const std::vector<gpuprobe::test::sim_level> truth = {{16, 16 * lv_mib, 10},
                                                        {2048, 32 * lv_mib, 95}};
  auto d = gpuprobe::test::sim_dataset(truth, 300, pow2_strides(2 * lv_mib, 256 * lv_mib),
                                       2 * lv_mib, 256 * lv_gib, 16, 0.3, 5);
  for (auto &c : d.curves) {
    const double next = 2048 * std::max(c.stride_bytes, 32 * lv_mib);
    for (double f : {0.96, 0.97, 0.98, 0.99}) { // refinement's extra points below the boundary
      c.footprint_bytes.push_back(f * next);
      c.cycles.push_back(
          std::round(gpuprobe::test::sim_latency(truth, 300, c.stride_bytes, f * next)) + 3);
    }
    finish_curve(c);
  }
  const auto a = detectors(d);
  ASSERT_GE(a.levels.size(), 2u);
  EXPECT_NEAR(a.levels[0].miss_penalty_cycles, 10, 0.5) << "the plateau, not the creep";
  EXPECT_NEAR(a.levels[1].miss_penalty_cycles, 95, 2);
}

// One stride rises (+167 cycles); a smaller stride, a median curve below half the page, shows
// a 1.5-cycle rise at the same footprint. Its median is a hit whether the level exists or not,
// so it cannot confirm the page: the rise stays unexplained (an H200 run reported such a rise
// at 318 GiB as a level of 20365 x 16 MiB).
TEST(TlbSimulated, LoneRiseIsNotConfirmedByAHitMedianBelowHalfThePage) {
  tlb_dataset d;
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0.0, 0.3);
  for (double s : {4 * lv_mib, 16 * lv_mib}) {
    tlb_curve c{"sim", s, {}, {}};
    c.median = true;
    for (double fp = 64 * lv_gib; fp <= 512 * lv_gib; fp *= std::pow(2.0, 1.0 / 16)) {
      c.footprint_bytes.push_back(std::round(fp / s) * s);
      const bool past = fp > 20000 * 16 * lv_mib;
      c.cycles.push_back(
          std::round(2 * (300 + (past ? (s == 16 * lv_mib ? 167 : 1.5) : 0) + noise(rng))) / 2);
    }
    finish_curve(c);
    d.curves.push_back(c);
  }
  const auto a = detectors(d);
  EXPECT_TRUE(a.levels.empty()) << a.levels.size() << " level(s), the first "
                                << (a.levels.empty() ? 0.0 : a.levels[0].entries) << " entries";
  EXPECT_TRUE(a.candidates.empty());
  EXPECT_EQ(a.unexplained.size(), 1u);
}

// Sweeps of this version (both ramp ends bisected) on an H100 (GPU-20dca086) and an H200
// (GPU-b337e4ad): the same structure of every level. L1: 16 entries, fully associative (a step from
// 16 to 17 hops); L2: 2048 = 8 ways x 256 sets (misses begin at 64 GiB, every hop misses from 72
// GiB); L3: 4096 = 8 ways x 512 sets (256 GiB, 288 GiB). The ramp's middle, reported before as the
// capacity, is kept beside it.
TEST(TlbLevels, RefinedSweepGivesEachLevelsStructure) {
  for (const char *file : {"h100-alias-refined.json", "h200-alias-refined.json"}) {
    SCOPED_TRACE(file);
    const auto path = std::string(GPUPROBE_FIXTURES_DIR) + "/gpuprobe-alias/" + file;
    const auto a = detectors(load_tlb_inputs({path}));
    ASSERT_EQ(a.levels.size(), 3u);
    struct want {
      double entries, sets, ways, coverage_mib, full_gib, midpoint;
    };
    const want w[] = {{16, 1, 16, 16, 17.0 * 16 / 1024, 16},
                      {2048, 256, 8, 32, 72, 2163},
                      {4096, 512, 8, 64, 288, 4350}};
    for (std::size_t k = 0; k < 3; ++k) {
      const auto &L = a.levels[k];
      const auto &f = L.structure.fit;
      ASSERT_TRUE(f.resolved) << "L" << k + 1 << ": " << f.why;
      EXPECT_EQ(L.entries, w[k].entries) << "L" << k + 1;
      EXPECT_EQ(f.sets, w[k].sets) << "L" << k + 1;
      EXPECT_EQ(f.ways, w[k].ways) << "L" << k + 1;
      EXPECT_EQ(L.coverage_bytes, w[k].coverage_mib * lv_mib) << "L" << k + 1;
      EXPECT_EQ(L.full_miss_bytes(), w[k].full_gib * lv_gib) << "L" << k + 1;
      EXPECT_NEAR(L.structure.midpoint_entries, w[k].midpoint, 1) << "L" << k + 1;
      EXPECT_GE(L.confidence, 0.65) << "L" << k + 1;
    }
    EXPECT_EQ(a.levels[0].structure.fit.shape, "step");
    EXPECT_EQ(a.levels[1].structure.fit.shape, "ramp");
    EXPECT_LT(a.levels[1].structure.fit.residual_cycles, 0.5) << "L2 fits the LRU model to noise";
    EXPECT_LT(a.levels[2].structure.fit.residual_cycles, 0.02 * 405) << "L3 within 2 % of its rise";
    EXPECT_EQ(a.levels[1].structure.agreeing, 3) << "32, 64 and 128 MiB strides agree";
  }
}

// A legacy (cuda-gpu-tlb CSV) sweep whose first level's penalty is only 4-6x the single-point
// noise: found where its plateaus hold ten or more points per stride.
TEST(TlbSimulated, SmallFirstLevelOnLongPlateausIsFound) {
  for (double penalty : {4.0, 5.0, 6.0})
    for (unsigned seed = 1; seed <= 4; ++seed) {
      const std::vector<gpuprobe::test::sim_level> truth = {{16, 64 * lv_kib, penalty},
                                                            {256, 2 * lv_mib, 60}};
      auto d = gpuprobe::test::sim_dataset(truth, 300, pow2_strides(16 * lv_kib, 8 * lv_mib),
                                           64 * lv_kib, 4 * lv_gib, 24, 1.0, seed);
      const auto a = detectors(d);
      ASSERT_EQ(a.levels.size(), 2u) << "penalty " << penalty << ", seed " << seed;
      expect_within(a.levels[0].entries, 16, 0.1, "L1 entries");
      EXPECT_EQ(a.levels[0].coverage_bytes, 64 * lv_kib)
          << "penalty " << penalty << ", seed " << seed;
      expect_within(a.levels[0].miss_penalty_cycles, penalty, 0.3, "L1 penalty");
      expect_within(a.levels[1].entries, 256, 0.1, "L2 entries");
    }
}

// Existence, page and structure are three findings. A level's existence rests on its
// rise over the noise and more than one stride showing it; the page's s/P rule and an unresolved
// structure never remove it; only a rise truly in doubt stays out, with its reason.
TEST(TlbFindings, SmallFirstLevelOfSevenCyclesOverTwoOfNoiseIsALevel) {
  int found = 0, tried = 0;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const std::vector<gpuprobe::test::sim_level> truth = {{16, 64 * lv_kib, 7},
                                                          {512, 2 * lv_mib, 80}};
    // The 2017 tool's mean curves: integer cycles, 12 points an octave, sigma 2 cycles.
    auto d = gpuprobe::test::sim_dataset(truth, 300, pow2_strides(16 * lv_kib, 8 * lv_mib),
                                         64 * lv_kib, 8 * lv_gib, 12, 2.0, seed);
    const auto a = detectors(d);
    ++tried;
    ASSERT_GE(a.levels.size(), 1u) << "seed " << seed;
    const auto &l1 = a.levels[0];
    // The page is a second finding: exact at 64 KiB, or an upper bound above it where the
    // smallest strides' rises hide in the noise; never a wrong exact page.
    const bool page_right = l1.coverage_bytes == 64 * lv_kib ||
                            (l1.bound == coverage_bound::upper && l1.coverage_bytes > 64 * lv_kib);
    if (std::fabs(l1.entries - 16) <= 1.6 && page_right)
      ++found;
    EXPECT_GE(l1.confidence, 0.65) << "seed " << seed << ": " << l1.existence;
    EXPECT_NEAR(l1.miss_penalty_cycles, 7, 2.5) << "seed " << seed;
    EXPECT_EQ(a.levels.back().coverage_bytes, 2 * lv_mib) << "seed " << seed;
  }
  EXPECT_EQ(found, tried) << "the +7-cycle level, 16 entries, on every seed";
}

TEST(TlbFindings, LargeLevelWithAnUnresolvedStructureStaysALevelAtWhereMissesBegin) {
  // A 4096-entry ramp (8 ways x 512 sets) sampled too coarsely to pin its ends to a set: the
  // structure is "not resolved", the level stands, its entries where the fit puts the onset.
  tlb_dataset d;
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0.0, 3.0);
  for (double s : {16.0 * lv_mib, 32.0 * lv_mib, 64.0 * lv_mib, 128.0 * lv_mib}) {
    tlb_curve c{"sim", s, {}, {}, true};
    for (double h = 64; h * s <= 1024 * lv_gib; h *= std::pow(2.0, 1.0 / 6)) {
      const double pages = std::round(h), fp = pages * s;
      // Pages of 64 MiB: strides below see the level at 4096 x 64 MiB, with s/P of the penalty.
      const double hops_over = fp / std::max(s, 64.0 * lv_mib);
      const double share = s >= 64 * lv_mib ? (structure_cycles(hops_over, 512, 8, 0, 1))
                                            : (hops_over > 4096 ? s / (64 * lv_mib) : 0);
      const double y = 400 + 400 * share + noise(rng);
      c.footprint_bytes.push_back(fp);
      c.cycles.push_back(std::round(y));
      c.mean_cycles.push_back(y);
    }
    d.curves.push_back(c);
  }
  const auto a = detectors(d);
  ASSERT_EQ(a.levels.size(), 1u) << (a.notes.empty() ? "" : a.notes.back());
  const auto &L = a.levels[0];
  EXPECT_EQ(L.coverage_bytes, 64 * lv_mib);
  EXPECT_FALSE(L.structure.fit.resolved) << "too few points on the ramp to pin a set";
  EXPECT_FALSE(L.structure.fit.why.empty());
  EXPECT_NEAR(L.entries, 4096, 4096 * 0.03) << "where misses begin, not the ramp's middle (4352)";
  EXPECT_NEAR(L.miss_penalty_cycles, 400, 20);
  EXPECT_GE(L.confidence, 0.65) << L.existence;
  EXPECT_TRUE(a.candidates.empty());
}

TEST(TlbFindings, RisesInDoubtStayOutWithTheirReason) {
  // A lone rise: one stride, no smaller stride at its footprint: never a level.
  {
    const auto a = detectors(one_stride(400, 200, 300, 360));
    EXPECT_TRUE(a.levels.empty());
    ASSERT_EQ(a.unexplained.size(), 1u);
    EXPECT_NE(a.notes.back().find("matches no other stride"), std::string::npos) << a.notes.back();
  }
  // A small rise (3.5 sigma at two strides, single points): a candidate, named "small".
  {
    const std::vector<gpuprobe::test::sim_level> truth = {{64, 1 * lv_mib, 3.5}};
    auto d = gpuprobe::test::sim_dataset(truth, 300, pow2_strides(1 * lv_mib, 2 * lv_mib),
                                         1 * lv_mib, 1 * lv_gib, 3, 1.0, 4);
    for (auto &c : d.curves)
      c.median = true; // single-point medians: no plateau detector
    const auto a = detectors(d);
    EXPECT_TRUE(a.levels.empty());
    for (const auto &c : a.candidates)
      EXPECT_EQ(c.existence.rfind("small", 0), 0u) << c.existence;
  }
}

// A stride below the alias range's 2 MiB chunk sweeps no more hops than the 2 MiB stride does
// (sweep_plan::max_hops): the committed full sweeps of an H100 and an H200 cut so give
// the same levels, pages, structure and penalties as whole.
TEST(TlbLevels, SmallStridesCutAtTheChunkStridesHopsGiveTheSameLevels) {
  // Sweeps made before the cut (the runs kept for the tests): today's sweeps are cut already.
  for (const char *unit : {"nvidia-h100-80gb-hbm3-bba9cd54", "nvidia-h200-b337e4ad"}) {
    SCOPED_TRACE(unit);
    const auto path =
        std::string(GPUPROBE_SOURCE_DIR) + "/tests/fixtures/runs/" + unit + "/raw/tlb.json";
    const auto whole = load_tlb_inputs({path});
    auto cut = whole;
    const double chunk = 2 * lv_mib, max_hops = 512 * lv_gib / chunk;
    std::size_t dropped = 0;
    for (auto &c : cut.curves) {
      if (c.stride_bytes >= chunk)
        continue;
      tlb_curve kept = c;
      kept.footprint_bytes.clear(), kept.cycles.clear(), kept.mean_cycles.clear();
      for (std::size_t i = 0; i < c.footprint_bytes.size(); ++i)
        if (c.footprint_bytes[i] <= max_hops * c.stride_bytes) {
          kept.footprint_bytes.push_back(c.footprint_bytes[i]);
          kept.cycles.push_back(c.cycles[i]);
          kept.mean_cycles.push_back(c.mean_cycles[i]);
        } else {
          ++dropped;
        }
      c = kept;
    }
    EXPECT_GT(dropped, 100u) << "the small strides' long laps";
    const auto a = detectors(whole), b = detectors(cut);
    ASSERT_EQ(a.levels.size(), 3u);
    ASSERT_EQ(b.levels.size(), a.levels.size());
    EXPECT_EQ(b.candidates.size(), a.candidates.size());
    for (std::size_t k = 0; k < a.levels.size(); ++k) {
      const auto &x = a.levels[k], &y = b.levels[k];
      EXPECT_EQ(y.entries, x.entries) << "L" << k + 1;
      EXPECT_EQ(y.coverage_bytes, x.coverage_bytes) << "L" << k + 1;
      EXPECT_EQ(y.bound, x.bound) << "L" << k + 1;
      EXPECT_EQ(y.structure.fit.ways, x.structure.fit.ways) << "L" << k + 1;
      EXPECT_EQ(y.structure.fit.sets, x.structure.fit.sets) << "L" << k + 1;
      EXPECT_EQ(y.miss_penalty_cycles, x.miss_penalty_cycles) << "L" << k + 1;
      EXPECT_EQ(y.confidence, x.confidence) << "L" << k + 1;
    }
  }
}
