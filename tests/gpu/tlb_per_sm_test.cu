// The per-SM pass (tlb-per-sm) on a real GPU: every SM walks once, in turn; a walk the first
// level holds costs less than one past its end on every SM; the watchdog ends a turn that never
// comes; the stage's command writes a result whose levels the profile reads.
#include "common/device_info.hpp"
#include "common/device_memory.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "gpu_test_util.hpp"
#include "probes/per_sm/driver.hpp"
#include "probes/per_sm/kernel.hpp"
#include "tests/common/binary_path.hpp"

#include <algorithm>
#include <cuda_runtime.h>
#include <filesystem>
#include <set>
#include <tuple>

using namespace gpuprobe;

TEST(TlbPerSmGpu, EverySmWalksOnceAndAWalkPastTheFirstLevelCostsMore) {
  GPUPROBE_REQUIRE_GPU();
  const auto dev = query_device(0);
  // 1 GiB of alias range: the first level of every committed Hopper profile is 16 x 16 MiB.
  device_pool pool(alloc_kind::alias, 1ull << 30, 0, 1, 2ull << 20);
  ASSERT_EQ(cudaMemset(pool.data(), 0, pool.alias_bytes()), cudaSuccess);
  probes::per_sm_chase chase(pool.data(), pool.bytes(), 30.0);
  const std::uint64_t page = 16ull << 20;
  const auto hit = chase.measure(page, 12, 200), miss = chase.measure(page, 24, 100);
  ASSERT_EQ(int(hit.size()), dev.sm_count);
  ASSERT_EQ(int(miss.size()), dev.sm_count);
  std::set<int> sms;
  int dearer = 0;
  for (std::size_t i = 0; i < hit.size(); ++i) {
    sms.insert(hit[i].sm);
    EXPECT_EQ(hit[i].sm, miss[i].sm);
    EXPECT_GT(hit[i].cycles_per_hop, 150)
        << "every hop is an L2 hit at least (SM " << hit[i].sm << ")";
    dearer += miss[i].cycles_per_hop > hit[i].cycles_per_hop + 3;
  }
  EXPECT_EQ(int(sms.size()), dev.sm_count) << "each SM once";
  EXPECT_EQ(dearer, dev.sm_count) << "the walk past the first level is dearer on every SM";
  std::printf("  SM %d: %.1f -> %.1f cycles per hop; SM %d: %.1f -> %.1f\n", hit.front().sm,
              hit.front().cycles_per_hop, miss.front().cycles_per_hop, hit.back().sm,
              hit.back().cycles_per_hop, miss.back().cycles_per_hop);
  // Only the SMs below 8 walk.
  const auto some = chase.measure(page, 12, 10, 8);
  ASSERT_EQ(some.size(), 8u);
  EXPECT_EQ(some.back().sm, 7);
}

TEST(TlbPerSmGpu, TheStageWritesEachLevelOfTheProfileOnEverySm) {
  GPUPROBE_REQUIRE_GPU();
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / "gpuprobe-per-sm-gpu-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // The first two levels every committed H100 and H200 profile finds: 16 x 16 MiB (a step,
  // +10 cycles) and 2048 x 32 MiB whose ramp ends at 2304 pages (+95): 90 GiB walked.
  model::profile p;
  p.schema = schema::profile.id();
  for (const auto &[e, page, full, pen] :
       {std::tuple{16.0, 16.0, 0.0, 10.0}, std::tuple{2048.0, 32.0, 2304.0, 95.0}}) {
    model::tlb_level L;
    L.entries = e;
    L.coverage_bytes = page * double(1 << 20);
    L.reach_bytes = e * L.coverage_bytes;
    if (full > 0)
      L.full_miss_bytes = full * L.coverage_bytes;
    L.miss_penalty_cycles = pen;
    p.tlb.levels.push_back(L);
  }
  write_json_atomic((dir / "profile.json").string(), model::to_json(p));
  const auto out = dir / "per_sm.json";
  int rc = -1;
  const std::string said = test::shell(test::gpuprobe_binary() + " tlb-per-sm --profile " +
                                           (dir / "profile.json").string() +
                                           " --range-gib 96 --out " + out.string() + " 2>&1",
                                       &rc);
  ASSERT_EQ(rc, 0) << said;
  std::printf("%s", said.c_str());
  const auto res = probes::per_sm_result_from_json(read_json_file(out.string()));
  ASSERT_EQ(res.levels.size(), 2u);
  const auto dev = query_device(0);
  for (const auto &l : res.levels) {
    ASSERT_TRUE(l.target.skipped.empty()) << l.target.skipped;
    const auto s = probes::summarize_per_sm(l, out.string());
    ASSERT_EQ(int(s.sms.size()), dev.sm_count);
    // Every SM pays for a miss; the penalty differs by SM (an H100's L2 misses cost 89-166
    // cycles by where the SM sits, r41), so only its median is held near the sweep's.
    const double pen = l.target.tested.miss_penalty_cycles.value_or(0);
    for (std::size_t i = 0; i < s.sms.size(); ++i)
      EXPECT_GT(s.penalty_cycles[i], 2.0) << l.target.level << " SM " << s.sms[i];
    std::vector<double> sorted = s.penalty_cycles;
    std::sort(sorted.begin(), sorted.end());
    const double med = sorted[sorted.size() / 2];
    EXPECT_GT(med, 0.5 * pen) << l.target.level;
    EXPECT_LT(med, 2.0 * pen) << l.target.level;
    ASSERT_TRUE(s.noise_cycles);
    EXPECT_LT(*s.noise_cycles, 1.0) << l.target.level << ": one SM's two rounds agree";
  }
  fs::remove_all(dir);
}
