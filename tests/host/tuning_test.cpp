// tune's measurement-driven decisions: regions from the profile's shared TLB level (or one
// region, said why), and the bitmap word size from measured times.
#include "analysis/tuning.hpp"

#include <gtest/gtest.h>

using namespace gpuprobe::analysis;
using nlohmann::json;

TEST(Tuning, RegionsFollowTheLargestSharedLevel) {
  const json profile = {
      {"tlb",
       {{"levels",
         {{{"reach_bytes", 11e6},
           {"page_bytes", 1048576},
           {"sharing", {{"scope", "inconclusive"}}}}}},
        {"candidates",
         {{{"reach_bytes", 69289902080.0},
           {"page_bytes", 33554432.0},
           {"sharing", {{"scope", "groups"}, {"groups", {{0, 1, 48, 49}, {2, 3, 50, 51}}}}}}}}}}};
  const auto d = decide_regions(profile);
  EXPECT_EQ(d.regions, 2);
  EXPECT_EQ(d.level, "C1");
  EXPECT_DOUBLE_EQ(d.max_region_bytes, 2065.0 * 33554432.0) << "whole 32 MiB pages";
  EXPECT_EQ(d.sm_region[48], 0);
  EXPECT_EQ(d.sm_region[3], 1);
  EXPECT_GE(d.sm_region[4], 0) << "SMs in no group still get a region";
  EXPECT_NE(d.reason.find("2 SM groups"), std::string::npos) << d.reason;
}

TEST(Tuning, NoSharedLevelKeepsOneRegionAndSaysWhy) {
  const auto d =
      decide_regions(json{{"tlb", {{"levels", json::array()}, {"candidates", json::array()}}}});
  EXPECT_EQ(d.regions, 1);
  EXPECT_DOUBLE_EQ(d.max_region_bytes, 0);
  EXPECT_NE(d.reason.find("one region"), std::string::npos);
  EXPECT_THROW(decide_regions(json{{"schema", "gpuprobe.profile/1"}}), std::exception)
      << "a profile without tlb";
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

TEST(Tuning, ScopeIsTheLargestLevelElseACandidateElseOnePass) {
  const json with_level = {
      {"tlb",
       {{"levels",
         {{{"reach_bytes", 8.0 * 1048576}, {"page_bytes", 2097152}},
          {{"reach_bytes", 3.5 * 1073741824}, {"page_bytes", 2097152}}}},
        {"candidates", {{{"reach_bytes", 64.0 * 1073741824}, {"page_bytes", 33554432}}}}}}};
  const auto a = decide_tlb_scope(with_level);
  EXPECT_EQ(a.bytes, 3584ull << 20) << "the largest level, not the larger candidate";
  EXPECT_EQ(a.level, "L2");
  const json only_candidate = {
      {"tlb",
       {{"levels", json::array()},
        {"candidates", {{{"reach_bytes", 69289902080.0}, {"page_bytes", 33554432.0}}}}}}};
  const auto b = decide_tlb_scope(only_candidate);
  EXPECT_EQ(b.bytes, 2065ull * 33554432ull) << "whole 32 MiB pages of the candidate";
  EXPECT_NE(b.reason.find("candidate"), std::string::npos) << b.reason;
  const auto c = decide_tlb_scope(json{{"tlb", json::object()}});
  EXPECT_EQ(c.bytes, 0u);
  EXPECT_NE(c.reason.find("one pass"), std::string::npos);
  EXPECT_THROW(decide_tlb_scope(json::object()), std::exception);
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

TEST(Tuning, MeasuredScopeIsTheFastestOptionElseOnePass) {
  const json profile = {{"tlb",
                         {{"levels", {{{"reach_bytes", 268435456.0}, {"page_bytes", 16777216.0}}}},
                          {"candidates",
                           {{{"reach_bytes", 69289902080.0}, {"page_bytes", 33554432.0}},
                            {{"reach_bytes", 268435456.0}, {"page_bytes", 16777216.0}}}}}}};
  const auto opts = scope_options(profile);
  ASSERT_EQ(opts.size(), 2u) << "one option per distinct reach";
  EXPECT_EQ(opts[0].bytes, 2065ull * 33554432ull) << "largest first";
  EXPECT_EQ(opts[0].level, "C1");
  EXPECT_EQ(opts[1].level, "L1");
  const std::uint64_t big = opts[0].bytes, small = opts[1].bytes, fp = 72ull << 30;
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
