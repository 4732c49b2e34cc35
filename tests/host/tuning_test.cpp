// tune's measurement-driven decisions: regions from the profile's shared TLB level (or one
// region, said why), and the bitmap word size from measured times.
#include "allocators/load_tuning.hpp"
#include "common/json_io.hpp"
#include "test_util.hpp"
#include "tune/decisions.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace gpuprobe::tune;
using gpuprobe::test::tlb_of;
using nlohmann::json;

// A level or candidate shared by SM groups cuts a region per group (SMs in no group spread over
// them), each at most its reach in whole pages.
TEST(Tuning, ASharedLevelCutsARegionPerSmGroup) {
  const json profile = {
      {"tlb",
       {{"levels",
         {{{"reach_bytes", 11e6},
           {"coverage_bytes", 1048576},
           {"sharing", {{"scope", "inconclusive"}}}}}},
        {"candidates",
         {{{"reach_bytes", 69289902080.0},
           {"coverage_bytes", 33554432.0},
           {"sharing", {{"scope", "groups"}, {"groups", {{0, 1, 48, 49}, {2, 3, 50, 51}}}}}}}}}}};
  const double GiB = double(1ull << 30);
  const auto opts = region_options(tlb_of(profile), 52, 8 * GiB, 72 * GiB);
  const auto c1 =
      std::find_if(opts.begin(), opts.end(), [](const auto &o) { return o.level == "C1"; });
  ASSERT_NE(c1, opts.end());
  const auto &d = c1->regions;
  EXPECT_TRUE(c1->skip.empty()) << c1->skip;
  EXPECT_EQ(d.regions, 2);
  EXPECT_EQ(d.level, "C1");
  EXPECT_DOUBLE_EQ(d.max_region_bytes, 2065.0 * 33554432.0) << "whole 32 MiB pages";
  EXPECT_EQ(d.sm_region[48], 0);
  EXPECT_EQ(d.sm_region[3], 1);
  EXPECT_GE(d.sm_region[4], 0) << "SMs in no group still get a region";
  // Measured to pay, they are the decision.
  const auto chosen = decide_regions_measured(opts, {{"C1", 2.0, 1.5}});
  EXPECT_EQ(chosen.regions, 2);
  EXPECT_NE(chosen.reason.find("C1's regions chosen"), std::string::npos) << chosen.reason;
}

TEST(Tuning, NoSharedLevelKeepsOneRegionAndSaysWhy) {
  const double GiB = double(1ull << 30);
  const auto d = decide_regions_measured(
      region_options(
          tlb_of(json{{"tlb", {{"levels", json::array()}, {"candidates", json::array()}}}}), 132,
          8 * GiB, 72 * GiB),
      {});
  EXPECT_EQ(d.regions, 1);
  EXPECT_DOUBLE_EQ(d.max_region_bytes, 0);
  EXPECT_NE(d.reason.find("one region"), std::string::npos);
}

TEST(Tuning, WordSizeByGeometricMeanWithATieBand) {
  EXPECT_EQ(decide_word_size({{0.5, 0.037, 0.065, 1, 1}, {0.005, 1.42, 0.649, 20, 10}}).word_bits,
            64)
      << "0.649/1.42 outweighs 0.065/0.037";
  EXPECT_EQ(decide_word_size({{0.5, 0.040, 0.070, 1, 1}}).word_bits, 32);
  const auto tie = decide_word_size({{0.5, 1.0, 1.02, 1, 1}});
  EXPECT_EQ(tie.word_bits, 32);
  EXPECT_NE(tie.reason.find("32 kept"), std::string::npos);
  EXPECT_THROW(decide_word_size({}), std::exception);
  EXPECT_THROW(decide_word_size({{0.5, 0, 1, 1, 1}}), std::exception);
}

TEST(Tuning, CrwPlacementKeepsTheDefaultInsideTheTieBand) {
  const std::vector<crw_point> clear = {{"thread", 0.5, 2.0},  {"warp", 0.5, 1.0},
                                        {"warp_vm", 0.5, 1.1}, {"thread", 0.1, 4.0},
                                        {"warp", 0.1, 2.2},    {"warp_vm", 0.1, 2.6}};
  const auto d = decide_crw_placement(clear);
  EXPECT_EQ(d.start, "warp")
      << d.reason; // warp: sqrt(0.5 * 0.55) = 0.524; warp_vm: sqrt(0.55 * 0.65) = 0.598
  EXPECT_LT(d.geomean_ratio, 0.6);
  const auto tie = decide_crw_placement({{"thread", 0.5, 1.0}, {"warp", 0.5, 0.98}});
  EXPECT_EQ(tie.start, "thread");
  EXPECT_NE(tie.reason.find("thread kept"), std::string::npos) << tie.reason;
  const auto worse = decide_crw_placement({{"thread", 0.5, 1.0}, {"warp", 0.5, 1.5}});
  EXPECT_EQ(worse.start, "thread");
  EXPECT_THROW(decide_crw_placement({{"warp", 0.5, 1.0}}), std::exception) << "no default measured";
  EXPECT_THROW(decide_crw_placement({{"thread", 0.5, 1.0}, {"warp", 0.1, 1.0}}), std::exception)
      << "fractions differ";
}

namespace {
// Every committed run's CRW placement times (tests/fixtures/crw_placements.json).
std::vector<std::pair<std::string, std::vector<crw_point>>> committed_crw_runs() {
  const json f = gpuprobe::read_json_file(std::string(GPUPROBE_SOURCE_DIR) +
                                          "/tests/fixtures/crw_placements.json");
  std::vector<std::pair<std::string, std::vector<crw_point>>> out;
  for (const auto &r : f.at("runs")) {
    std::vector<crw_point> pts;
    for (const auto &p : r.at("points"))
      pts.push_back({p.at(0).get<std::string>(), p.at(1).get<double>(), p.at(2).get<double>()});
    out.emplace_back(r.at("run").get<std::string>(), pts);
  }
  return out;
}
} // namespace

// The tie is past the noise: no committed run (none gained: validate saw no difference) chooses
// another start; the same runs with one start made faster by more than the tie, at each free
// fraction by its own seeded amount, choose it.
TEST(Tuning, CrwTieIsPastEveryMeasuredRunAndAGainPastItIsTaken) {
  const auto runs = committed_crw_runs();
  ASSERT_GE(runs.size(), 40u);
  std::mt19937_64 rng(47);
  std::uniform_real_distribution<double> gain(crw_tie + 0.03, 0.4);
  int taken = 0, tried = 0;
  for (const auto &[name, pts] : runs) {
    const auto d = decide_crw_placement(pts);
    EXPECT_EQ(d.start, "thread") << name << ": " << d.reason;
    for (const char *start : {"warp", "warp_vm"}) {
      auto faster = pts;
      for (auto &p : faster)
        if (p.start == start)
          p.ms *= 1 - gain(rng);
      ++tried;
      taken += decide_crw_placement(faster).start == start;
    }
  }
  // The other start's own noise is within 3 % of thread's (0.970 at worst), so a gain of at
  // least the tie + 3 % beats both it and the tie.
  EXPECT_EQ(taken, tried);
}

TEST(Tuning, MeasuredScopeIsTheFastestOptionElseOnePass) {
  const json profile = {
      {"tlb",
       {{"levels", {{{"reach_bytes", 268435456.0}, {"coverage_bytes", 16777216.0}}}},
        {"candidates",
         {{{"reach_bytes", 69289902080.0}, {"coverage_bytes", 33554432.0}},
          {{"reach_bytes", 268435456.0}, {"coverage_bytes", 16777216.0}}}}}}};
  const auto opts = scope_options(tlb_of(profile), 72ull << 30); // no level reaches an eighth of it
  ASSERT_EQ(opts.size(), 2u) << "one option per distinct reach";
  EXPECT_EQ(opts[0].bytes(), 2065ull * 33554432ull) << "largest first";
  EXPECT_EQ(opts[0].name(), "C1");
  EXPECT_EQ(opts[1].name(), "L1");
  const std::uint64_t big = opts[0].bytes(), small = opts[1].bytes(), fp = 72ull << 30;
  // The H100 case: a small level's 288 passes are 20-36x slower, the candidate's 2 passes faster.
  const std::vector<scope_point> pts = {{0, "cudamalloc", 9.8},   {small, "cudamalloc", 352},
                                        {big, "cudamalloc", 9.1}, {0, "vmm", 18.5},
                                        {small, "vmm", 352},      {big, "vmm", 9.1}};
  const auto d = decide_tlb_scope_measured(opts, pts, fp);
  EXPECT_EQ(d.bytes, big) << d.reason;
  EXPECT_EQ(d.level, "C1");
  EXPECT_EQ(d.measurements.size(), 6u);
  EXPECT_NE(d.reason.find("L1"), std::string::npos) << "every option's ratio is in the reason";
  // Within the tie band of one pass: one pass.
  const auto tie = decide_tlb_scope_measured(opts, {{0, "vmm", 10}, {big, "vmm", 9.9}}, fp);
  EXPECT_EQ(tie.bytes, 0u);
  EXPECT_NE(tie.reason.find("one pass kept"), std::string::npos) << tie.reason;
  // Nothing measured: one pass, and why.
  EXPECT_EQ(decide_tlb_scope_measured({}, {}, fp).bytes, 0u);
  EXPECT_NE(decide_tlb_scope_measured(opts, {}, 16ull << 30).reason.find("at least the footprint"),
            std::string::npos);
  EXPECT_THROW(decide_tlb_scope_measured(opts, {{big, "vmm", 1.0}}, fp), std::exception)
      << "no one-pass time for the pool";
}

// A set-associative level: its scope is searched at and below where its misses begin (random
// access fills its sets unevenly), the curve goes into the decision, and the scope of its former
// capacity (the ramp's middle) is kept for validate to compare against.
TEST(Tuning, ScopeIsSearchedBelowWhereMissesBeginWithTheCurve) {
  const double page = 32.0 * (1 << 20);
  const json profile = {
      {"tlb",
       {{"levels",
         {{{"reach_bytes", 16 * 16.0 * (1 << 20)}, {"coverage_bytes", 16.0 * (1 << 20)}},
          {{"reach_bytes", 2048 * page},
           {"coverage_bytes", page},
           {"structure", {{"resolved", true}, {"midpoint_reach_bytes", 2163 * page}}}}}}}}};
  const std::uint64_t fp = 72ull << 30;
  const auto opts = scope_options(tlb_of(profile), fp);
  ASSERT_EQ(opts.size(), 8u) << "L2 at 1, 15/16, 7/8, 13/16, 3/4, 5/8, 1/2 of its reach; L1";
  EXPECT_EQ(opts[0].bytes(), 2048 * std::uint64_t(page));
  EXPECT_EQ(opts[2].bytes(), 1792 * std::uint64_t(page));
  EXPECT_EQ(opts[2].name(), "L2 x0.875");
  EXPECT_EQ(opts[2].midpoint_bytes(), 2163 * std::uint64_t(page));
  EXPECT_EQ(opts[7].name(), "L1");
  std::vector<scope_point> pts = {{0, "vmm", 9.79}};
  const double ms[] = {9.20, 9.07, 8.71, 8.90, 9.10};
  for (int k = 0; k < 5; ++k)
    pts.push_back({opts[std::size_t(k)].bytes(), "vmm", ms[k]});
  const auto d = decide_tlb_scope_measured(opts, pts, fp);
  EXPECT_EQ(d.bytes, 1792 * std::uint64_t(page)) << d.reason;
  EXPECT_EQ(d.level, "L2 x0.875");
  EXPECT_EQ(d.midpoint_bytes, 2163 * std::uint64_t(page));
  EXPECT_EQ(d.measurements.size(), 6u);
  EXPECT_EQ(d.measurements[3]["fraction_of_reach"], 0.875);
  const auto block = gpuprobe::alloc::allocator_block_json(allocator_tuning({}, {}, {}, d));
  EXPECT_EQ(block["tlb_scope_midpoint_bytes"], 2163 * std::uint64_t(page));
}

// No model's numbers in the footprints: a 141 GB H200 gets more than the 72 GiB an H100 allowed,
// an 80 GB H100 what it has; --quick a quarter of it, not a fixed 16 GiB.
TEST(Tuning, TlbFootprintFollowsTheFreeMemory) {
  const std::uint64_t gib = 1ull << 30;
  EXPECT_EQ(tlb_footprint_for(139 * gib + 123, false), 133 * gib);
  EXPECT_GT(tlb_footprint_for(139 * gib, false), 72 * gib);
  EXPECT_EQ(tlb_footprint_for(79 * gib, false), 73 * gib);
  EXPECT_EQ(tlb_footprint_for(139 * gib, true), 33 * gib);
  EXPECT_EQ(tlb_footprint_for(79 * gib, true), 18 * gib);
  EXPECT_EQ(tlb_footprint_for(4 * gib, false), gib) << "a small GPU: at least 1 GiB";
  EXPECT_EQ(tlb_footprint_for(4 * gib, true), gib);
}

namespace {
// L1 private (16 x 16 MiB), L2 shared by two SM groups (2163 x 32 MiB), L3 global (272 GiB).
json three_level_profile() {
  const double MiB = 1 << 20;
  return {{"tlb",
           {{"levels",
             {{{"entries", 16},
               {"coverage_bytes", 16 * MiB},
               {"reach_bytes", 256 * MiB},
               {"sharing", {{"scope", "private"}}}},
              {{"entries", 2163},
               {"coverage_bytes", 32 * MiB},
               {"reach_bytes", 2163 * 32 * MiB},
               {"sharing", {{"scope", "groups"}, {"groups", {{0, 2}, {1, 3}}}}}},
              {{"entries", 4350},
               {"coverage_bytes", 64 * MiB},
               {"reach_bytes", 4350 * 64 * MiB},
               {"sharing", {{"scope", "global"}}}}}}}}};
}
} // namespace

TEST(Tuning, RegionOptionsPerLevelFollowTheSharingAndTheDeviceSize) {
  const double GiB = double(1ull << 30);
  const auto h100 = region_options(tlb_of(three_level_profile()), 4, 8 * GiB, 72 * GiB);
  ASSERT_EQ(h100.size(), 3u);
  EXPECT_EQ(h100[0].scope(), "private");
  EXPECT_EQ(h100[0].regions.regions, 4) << "one region per SM";
  EXPECT_EQ(h100[0].regions.sm_region, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(h100[0].pool_bytes, 8 * GiB) << "the small pool already exceeds 256 MiB";
  EXPECT_TRUE(h100[0].skip.empty());
  EXPECT_EQ(h100[1].regions.regions, 2) << "one region per SM group";
  EXPECT_EQ(h100[1].regions.sm_region, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(h100[1].pool_bytes, 72 * GiB) << "a pool larger than the 67.6 GiB reach";
  EXPECT_NE(h100[2].skip.find("shared by every SM"), std::string::npos) << h100[2].skip;
  // A 141 GB GPU measures L2's regions on its own largest pool; a 64 GiB one cannot exceed it.
  EXPECT_EQ(region_options(tlb_of(three_level_profile()), 4, 8 * GiB, 130 * GiB)[1].pool_bytes,
            130 * GiB);
  EXPECT_NE(
      region_options(tlb_of(three_level_profile()), 4, 8 * GiB, 60 * GiB)[1].skip.find("not below"),
      std::string::npos);
}

TEST(Tuning, RegionsOnlyWhereTheyMeasurablyPay) {
  const double GiB = double(1ull << 30);
  const auto opts = region_options(tlb_of(three_level_profile()), 4, 8 * GiB, 72 * GiB);
  const auto none = decide_regions_measured(opts, {{"L1", 1.00, 1.01}, {"L2", 2.0, 1.99}});
  EXPECT_EQ(none.regions, 1);
  EXPECT_NE(none.reason.find("no level's regions pay"), std::string::npos) << none.reason;
  ASSERT_EQ(none.per_level.size(), 3u);
  EXPECT_EQ(none.per_level[0]["decision"], "no gain");
  EXPECT_EQ(none.per_level[2]["decision"], "not applicable");
  const auto l2 = decide_regions_measured(opts, {{"L1", 1.00, 0.98}, {"L2", 2.0, 1.6}});
  EXPECT_EQ(l2.regions, 2) << "L2's 0.80x beats L1's 0.98x (within the 3 % tie)";
  EXPECT_EQ(l2.level, "L2");
  EXPECT_EQ(l2.per_level[1]["decision"], "gain");
  EXPECT_THROW(decide_regions_measured(opts, {{"L1", 1.0, 1.0}}), std::exception)
      << "an applicable level left unmeasured";
}

TEST(Tuning, WordSizeTradeOffsAreWrittenIntoTheDecision) {
  // 64-bit wins when the pool is nearly full and loses on an empty pool and in the hash join.
  std::vector<word_point> pts = {
      {1.0, 0.020, 0.0216, 1, 1}, {0.01, 0.19, 0.107, 6, 3.5}, {0.005, 0.33, 0.188, 12, 6.6}};
  const auto d = decide_word_size(pts, 0.03, {{"hash_join/4M", 1.00, 1.08}});
  EXPECT_EQ(d.word_bits, 64);
  ASSERT_EQ(d.tradeoffs.size(), 2u);
  EXPECT_NE(d.tradeoffs[0].find("at 100 % free (an empty pool): 64-bit 1.080x"), std::string::npos)
      << d.tradeoffs[0];
  EXPECT_NE(d.tradeoffs[1].find("hash_join/4M: 64-bit 1.080x"), std::string::npos)
      << d.tradeoffs[1];
  EXPECT_NE(d.reason.find("trade-off"), std::string::npos) << d.reason;
  EXPECT_EQ(d.decision(pts).detail["tradeoffs"].size(), 2u);
  EXPECT_TRUE(decide_word_size(pts, 0.03, {{"hash_join/4M", 1.00, 1.01}}).tradeoffs.size() == 1);
}

// The H100's scope curve is flat from 40 to 56 GiB (within 0.5 %, the noise), and the fastest
// scope moved between runs (52 or 56 GiB on GPU-9ef05279 and GPU-c7c2dadc): the largest
// scope within the tie of the fastest is the same in all four runs, and in the committed H100 run;
// the committed H200 run's steeper curve keeps its 52 GiB, near its fastest 48.
TEST(Tuning, ScopeOnAFlatBottomIsTheSameEveryRun) {
  const auto committed = [](const std::string &unit) {
    const std::string dir = gpuprobe::test::committed_run(unit);
    const auto tuning = gpuprobe::read_json_file(dir + "/tuning.json");
    std::vector<scope_point> pts;
    for (const auto &m : tuning["decisions"]["tlb_scope"]["measurements"])
      pts.push_back({m["scope_bytes"].get<std::uint64_t>(), m["pool"].get<std::string>(),
                     m["ms"].get<double>()});
    return std::make_pair(tlb_of(gpuprobe::read_json_file(dir + "/profile.json")), pts);
  };
  const std::uint64_t fp = 72ull << 30, gib = 1ull << 30;
  const auto [h100, h100_points] = committed("nvidia-h100-80gb-hbm3-bba9cd54");
  const auto opts = scope_options(h100, fp);
  const auto d = decide_tlb_scope_measured(opts, h100_points, fp);
  EXPECT_EQ(d.bytes, 60 * gib) << d.reason;
  EXPECT_NE(d.reason.find("the largest scope within 3% of the fastest"), std::string::npos)
      << d.reason;
  // Four runs of H100s (cudamalloc then vmm: one pass, 64, 60, 56, 52, 48, 40, 32, 0.25 GiB).
  const double runs[4][18] = {{9.817, 9.053, 8.785, 8.694, 8.656, 8.713, 8.692, 9.049, 352.214,
                               18.45, 9.06, 8.729, 8.696, 8.674, 8.751, 8.747, 9.037, 352.108},
                              {9.771, 9.006, 8.786, 8.72, 8.665, 8.721, 8.708, 9.048, 352.139,
                               18.473, 9.063, 8.763, 8.713, 8.667, 8.704, 8.688, 9.024, 352.185},
                              {9.792, 9.103, 8.745, 8.681, 8.695, 8.713, 8.697, 9.07, 352.188,
                               18.466, 9.048, 8.79, 8.686, 8.69, 8.697, 8.744, 9.085, 352.048},
                              {9.769, 9.067, 8.779, 8.746, 8.692, 8.725, 8.739, 9.064, 352.034,
                               18.411, 9.036, 8.768, 8.676, 8.712, 8.704, 8.725, 9.04, 352.037}};
  const std::uint64_t scopes[9] = {0,        64 * gib, 60 * gib, 56 * gib,    52 * gib,
                                   48 * gib, 40 * gib, 32 * gib, 256ull << 20};
  for (const auto &run : runs) {
    std::vector<scope_point> pts;
    for (int k = 0; k < 18; ++k)
      pts.push_back({scopes[k % 9], k < 9 ? "cudamalloc" : "vmm", run[k]});
    EXPECT_EQ(decide_tlb_scope_measured(opts, pts, fp).bytes, 60 * gib);
  }
  const auto [h200, h200_points] = committed("nvidia-h200-bc72dbee");
  const auto h = decide_tlb_scope_measured(scope_options(h200, 0), h200_points, 133 * gib);
  EXPECT_EQ(h.bytes, 52 * gib) << h.reason;
}

// validate's rows record the decisions their configurations differ in, typed: the trade-offs are
// charged from these, never from the configurations' words.
TEST(Tuning, ARowsChangesAreTheDecisionsItsConfigurationsDifferIn) {
  using gpuprobe::model::decision;
  EXPECT_TRUE(gpuprobe::tune::words_regions_changes(32, 1).empty());
  const auto both = gpuprobe::tune::words_regions_changes(64, 24);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].what, decision::word_size);
  EXPECT_EQ(both[0].from + " -> " + both[0].to, "32-bit -> 64-bit");
  EXPECT_EQ(both[1].what, decision::regions);
  EXPECT_EQ(both[1].from + " -> " + both[1].to, "one -> 24");
  const auto regions = gpuprobe::tune::words_regions_changes(32, 3);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].what, decision::regions);
}
