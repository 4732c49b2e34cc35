// The tuning profile as allocators take it: tuning.json written by tune's decisions reads back
// into alloc::tuning, bad files give one-line errors, and the region layout of a pool.
#include "allocators/load_tuning.hpp"
#include "common/json_io.hpp"
#include "test_util.hpp"
#include "tune/decisions.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace gpuprobe;
using gpuprobe::test::write_temp;
using nlohmann::json;

namespace {
json two_group_profile() {
  return {{"tlb",
           {{"levels", json::array()},
            {"candidates",
             {{{"reach_bytes", 69289902080.0},
               {"coverage_bytes", 33554432.0},
               {"sharing", {{"scope", "groups"}, {"groups", {{0, 1, 4}, {2, 3}}}}}}}}}}};
}
// The candidate's two SM groups, measured to pay.
tune::region_decision regions(const model::tlb_hierarchy &tlb) {
  const double gib = double(1ull << 30);
  return tune::decide_regions_measured(tune::region_options(tlb, 5, 8 * gib, 72 * gib),
                                       {{"C1", 2.0, 1.5}});
}
// The candidate's reach as the scope, measured to pay (tune's one rule).
tune::scope_decision scope(const model::tlb_hierarchy &tlb) {
  const auto options = tune::scope_options(tlb);
  return tune::decide_tlb_scope_measured(
      options, {{0, "vmm", 2.0}, {options.front().bytes(), "vmm", 1.0}}, 72ull << 30);
}
json tuning_doc() {
  const json p = two_group_profile();
  const auto w = tune::decide_word_size({{0.5, 1.0, 0.5, 1, 1}});
  const auto c = tune::decide_crw_placement({{"thread", 0.5, 1.0}, {"warp", 0.5, 0.5}});
  return {{"schema", "gpuprobe.tuning/1"},
          {"allocator", alloc::allocator_block_json(tune::allocator_tuning(
                            w, regions(test::tlb_of(p)), c, scope(test::tlb_of(p))))}};
}
} // namespace

TEST(AllocatorTuning, DecisionsRoundTripThroughTuningJson) {
  const auto t = alloc::load_tuning(write_temp("tuning_ok.json", tuning_doc().dump()));
  EXPECT_EQ(t.word_bits, 64);
  EXPECT_EQ(t.regions, 2u);
  EXPECT_EQ(t.max_region_bytes, 2065ull * 33554432ull);
  EXPECT_EQ(t.region_align_bytes, 33554432ull);
  ASSERT_EQ(t.sm_region.size(), 5u);
  EXPECT_EQ(t.sm_region[4], 0);
  EXPECT_EQ(t.sm_region[3], 1);
  EXPECT_EQ(t.crw, alloc::crw_start::warp);
  EXPECT_EQ(t.tlb_scope_bytes, 2065ull * 33554432ull);
  EXPECT_TRUE(t.scoped());
  EXPECT_EQ(alloc::with_word(t, [](auto w) { return int(sizeof(w)); }), 8);
  EXPECT_FALSE(alloc::tuning{}.scoped()) << "the default is the untuned allocator";
  EXPECT_EQ(alloc::with_word(alloc::tuning{}, [](auto w) { return int(sizeof(w)); }), 4);
}

TEST(AllocatorTuning, BadFilesGiveOneLineErrors) {
  auto message = [](const std::string &path) {
    try {
      alloc::load_tuning(path);
    } catch (const std::exception &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string missing = message(test::temp_path("no_such_tuning.json"));
  EXPECT_NE(missing.find("cannot open"), std::string::npos) << missing;
  const std::string broken =
      message(write_temp("tuning_broken.json", "{\"schema\": \"gpuprobe.tuning/1\", "));
  EXPECT_NE(broken.find("not valid JSON"), std::string::npos) << broken;
  json future = tuning_doc();
  future["schema"] = "gpuprobe.tuning/3";
  const std::string newer = message(write_temp("tuning_future.json", future.dump()));
  EXPECT_NE(newer.find("newer than this build"), std::string::npos) << newer;
  const std::string other =
      message(write_temp("tuning_profile.json", json{{"schema", "gpuprobe.profile/1"}}.dump()));
  EXPECT_NE(other.find("expected gpuprobe.tuning/N"), std::string::npos) << other;
  json bad_word = tuning_doc();
  bad_word["allocator"]["word_bits"] = 48;
  EXPECT_NE(message(write_temp("tuning_w48.json", bad_word.dump())).find("32 or 64"),
            std::string::npos);
  json bad_map = tuning_doc();
  bad_map["allocator"]["sm_region"] = {0, 7};
  EXPECT_NE(message(write_temp("tuning_map.json", bad_map.dump())).find("sm_region"),
            std::string::npos);
  json no_block = tuning_doc();
  no_block.erase("allocator");
  EXPECT_NE(message(write_temp("tuning_noblock.json", no_block.dump())).find("allocator"),
            std::string::npos);
  for (const auto &m : {missing, broken, newer, other})
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

TEST(AllocatorTuning, RegionLayoutIsAlignedAndBoundedByReachAndPool) {
  alloc::tuning t;
  t.regions = 24;
  t.sm_region.assign(132, 0);
  t.region_align_bytes = 32ull << 20;
  t.max_region_bytes = 64ull << 30;
  // A pool within the reach fits every group's TLB as it is: not scoped.
  EXPECT_EQ(alloc::layout_regions(t, 8ull << 30, 32 * 1024).regions, 1u);
  EXPECT_EQ(alloc::layout_regions(t, 64ull << 30, 32 * 1024).regions, 1u);
  // 72 GiB / 24 = 3 GiB (a multiple of 32 MiB pages), in 32 KiB units (1 KiB pages x 32-bit words).
  auto l = alloc::layout_regions(t, 72ull << 30, 32 * 1024);
  EXPECT_EQ(l.regions, 24u);
  EXPECT_EQ(l.span_units, (3ull << 30) / (32 * 1024));
  // 70 GiB / 24 = 2986.7 MiB -> 2976 MiB, whole 32 MiB pages.
  EXPECT_EQ(alloc::layout_regions(t, 70ull << 30, 32 * 1024).span_units,
            (2976ull << 20) / (32 * 1024));
  EXPECT_LE(l.regions * l.span_units * 32 * 1024, 72ull << 30);
  // A reach smaller than pool / regions bounds the region.
  t.max_region_bytes = 64ull << 20;
  EXPECT_EQ(alloc::layout_regions(t, 8ull << 30, 32 * 1024).span_units,
            (64ull << 20) / (32 * 1024));
  // Too small a pool for one aligned region per group: not scoped.
  EXPECT_EQ(alloc::layout_regions(t, 256ull << 20, 32 * 1024).regions, 1u);
  // Unscoped tuning or ids-only pools (unit 0): one region.
  EXPECT_EQ(alloc::layout_regions(alloc::tuning{}, 8ull << 30, 32 * 1024).regions, 1u);
  EXPECT_EQ(alloc::layout_regions(t, 8ull << 30, 0).regions, 1u);
}

// SM slices (gpuprobe-bench --gpuprobe_rw_sm_slices) over generated (slices, SMs, pool) triples:
// every SM names a slice below the count, the SMs spread over the slices within one of each other
// (every slice used where there are as many SMs), and the laid-out slices lie inside the pool;
// one slice, none or no SMs: not scoped.
TEST(AllocatorTuning, SmSlicesSpreadTheSmsEvenlyOverSlicesInsideThePool) {
  std::mt19937_64 rng(49);
  const std::uint64_t region = 2048ull * 256; // rw_malloc's bitmap region at 256 B units
  for (int i = 0; i < 3000; ++i) {
    const unsigned slices = unsigned(rng() % 300), sms = unsigned(rng() % 200);
    const std::uint64_t pool = (1ull + rng() % 64) << 30;
    const auto t = alloc::sm_slices(slices, sms);
    if (slices <= 1 || sms == 0) {
      EXPECT_FALSE(t.scoped()) << slices << " " << sms;
      EXPECT_EQ(alloc::layout_regions(t, pool, region).regions, 1u);
      continue;
    }
    ASSERT_TRUE(t.scoped());
    ASSERT_EQ(t.sm_region.size(), sms);
    std::vector<unsigned> per(slices, 0);
    for (const auto r : t.sm_region) {
      ASSERT_LT(r, slices);
      ++per[r];
    }
    const auto [lo, hi] = std::minmax_element(per.begin(), per.end());
    EXPECT_LE(*hi - *lo, 1u) << slices << " slices, " << sms << " SMs";
    if (sms >= slices) {
      EXPECT_GE(*lo, 1u);
    }
    const auto l = alloc::layout_regions(t, pool, region);
    if (l.regions > 1) {
      EXPECT_EQ(l.regions, slices);
      EXPECT_GT(l.span_units, 0u);
      EXPECT_LE(l.regions * l.span_units * region, pool);
      EXPECT_EQ(l.span_units * region % (2ull << 20), 0u); // whole 2 MiB pages
    }
  }
}

// A tuning is bound to the unit its SM groups were measured on: on that GPU everything applies;
// on another unit of the same model the SM -> region map is dropped (its groups differ) with one
// line naming both GPUs and the commands that re-derive it; the word size and the rest stay.
TEST(AllocatorTuning, AnotherUnitDropsTheRegionMapWithOneLine) {
  json doc = tuning_doc();
  doc["device"] = {{"uuid", "GPU-aaaa"}};
  doc["profile"] = {{"device_uuid", "GPU-aaaa"}};
  const auto path = write_temp("tuning_unit.json", doc.dump());
  std::string note;
  auto same = alloc::load_tuning(path, "GPU-aaaa", note);
  EXPECT_EQ(note, "");
  ASSERT_TRUE(same.scoped());
  EXPECT_EQ(same.regions, 2u);
  auto other = alloc::load_tuning(path, "GPU-bbbb", note);
  EXPECT_FALSE(other.scoped());
  EXPECT_EQ(other.regions, 1u);
  EXPECT_TRUE(other.sm_region.empty());
  EXPECT_EQ(other.word_bits, same.word_bits);
  EXPECT_EQ(other.crw, same.crw);
  EXPECT_EQ(other.tlb_scope_bytes, same.tlb_scope_bytes);
  EXPECT_EQ(note.find('\n'), std::string::npos);
  EXPECT_NE(note.find("measured on GPU-aaaa, running on GPU-bbbb: its SM -> region map (2 "
                      "regions) is dropped"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("`gpuprobe characterize` and `gpuprobe tune` on this GPU"),
            std::string::npos);
  // The profile's unit wins over the device tune ran on (the map comes from the profile).
  doc["device"] = {{"uuid", "GPU-bbbb"}};
  auto t = alloc::tuning_from_json(doc);
  EXPECT_EQ(t.measured_on, "GPU-aaaa");
  // A file that records no unit is applied as it is (files of earlier versions).
  auto old = alloc::tuning_from_json(tuning_doc());
  EXPECT_EQ(alloc::bind_to_gpu(old, "GPU-bbbb"), "");
  EXPECT_TRUE(old.scoped());
  // Bad files keep their one-line errors.
  EXPECT_THROW(alloc::load_tuning(write_temp("tuning_bad.json", "{"), "GPU-aaaa", note),
               std::runtime_error);
}

// The allocator block of each committed tuning.json (written before the block had one writer)
// reads into an alloc::tuning and is written back by allocator_block_json to the same JSON.
TEST(AllocatorTuning, CommittedBlocksRoundTripUnchanged) {
  for (const char *run : {"nvidia-h100-80gb-hbm3-bba9cd54", "nvidia-h200-bc72dbee"}) {
    const std::string path =
        gpuprobe::test::committed_run(run) + "/tuning.json";
    const json doc = read_json_file(path);
    const auto t = alloc::tuning_from_json(doc, path);
    EXPECT_EQ(alloc::allocator_block_json(t).dump(), doc["allocator"].dump()) << run;
    EXPECT_FALSE(t.measured_on.empty()) << run;
  }
}
