// Tuned allocators on the GPU: TLB-scoped regions keep each SM's pages (and rw_malloc's blocks)
// in its region and still fall back to the whole pool; CRW's warp placements give contiguous
// pages; tune's measurements run and check out; tune -> validate end to end on a small subset.
#include "allocators/allocators.cuh"
#include "common/device_info.hpp"
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "gpu_test_util.hpp"
#include "probes/device_util.cuh"
#include "tests/common/binary_path.hpp"
#include "tune/measure.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

using namespace gpuprobe;
using alloc::page_t;

namespace {

template <class H> __global__ void get_with_sm(H h, page_t *out, unsigned *sm) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = h.get_page();
  sm[t] = probes::smid();
}

__global__ void malloc_with_sm(alloc::rw_malloc_handle h, void **out, unsigned *sm) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = h.malloc(256);
  sm[t] = probes::smid();
}

// Four regions, SM s in region s % 4 (a map longer than any GPU's SM ids).
alloc::tuning four_regions() {
  alloc::tuning t;
  t.regions = 4;
  t.region_align_bytes = 2u << 20;
  for (unsigned s = 0; s < 1024; ++s)
    t.sm_region.push_back(std::uint16_t(s % 4));
  return t;
}

template <class A> void expect_pages_in_own_region() {
  const unsigned n = 1u << 16;
  alloc::device_array<char> memory(std::size_t(1) << 30);
  alloc::pool_config c;
  c.page_bytes = 1024;
  c.pages = 1u << 20; // 1 GiB: four regions of 256 MiB
  c.memory = memory.get();
  const auto t = four_regions();
  A a(c, t);
  ASSERT_EQ(a.regions().regions, 4u);
  ASSERT_EQ(a.handle().data, memory.get()) << "the pages are the caller's memory";
  a.prefill(c.pages / 2, 3);
  alloc::device_array<page_t> out(n);
  alloc::device_array<unsigned> sm(n);
  get_with_sm<<<n / alloc::k_block, alloc::k_block>>>(a.handle(), out.get(), sm.get());
  test::sync_or_throw();
  std::vector<page_t> p(n);
  std::vector<unsigned> s(n);
  out.download(p.data(), n);
  sm.download(s.data(), n);
  const std::uint64_t region_pages = (256ull << 20) / c.page_bytes;
  std::uint64_t outside = 0;
  for (unsigned i = 0; i < n; ++i)
    outside += p[i] == alloc::invalid_page || p[i] / region_pages != t.sm_region[s[i]];
  EXPECT_EQ(outside, 0u) << "every page in its SM's region";
  std::sort(p.begin(), p.end());
  EXPECT_EQ(std::adjacent_find(p.begin(), p.end()), p.end());
  // Untuned: the same pool spreads an SM's pages over all of it.
  A u(c);
  u.prefill(c.pages / 2, 3);
  get_with_sm<<<n / alloc::k_block, alloc::k_block>>>(u.handle(), out.get(), sm.get());
  test::sync_or_throw();
  out.download(p.data(), n);
  sm.download(s.data(), n);
  outside = 0;
  for (unsigned i = 0; i < n; ++i)
    outside += p[i] / region_pages != t.sm_region[s[i]];
  EXPECT_GT(outside, n / 2) << "about 3/4 of untuned pages lie outside the SM's region";
}

} // namespace

TEST(Tuned, CorwAndRwBmPagesStayInTheSmRegion) {
  GPUPROBE_REQUIRE_GPU();
  expect_pages_in_own_region<alloc::corw<std::uint32_t>>();
  expect_pages_in_own_region<alloc::corw<unsigned long long>>();
  expect_pages_in_own_region<alloc::rw_bm<unsigned long long>>();
}

TEST(Tuned, AFullRegionFallsBackToTheWholePoolExactly) {
  GPUPROBE_REQUIRE_GPU();
  alloc::pool_config c;
  c.page_bytes = 1024;
  c.pages = 1u << 16; // 64 MiB: two regions of 32 MiB
  c.max_random_steps = 64;
  alloc::tuning t;
  t.regions = 2;
  t.sm_region.assign(1024, 0); // every SM in region 0, which is full
  alloc::corw<std::uint32_t> a(c, t);
  std::vector<std::uint8_t> used(c.pages, 1);
  for (std::size_t i = c.pages / 2; i < c.pages; i += 2)
    used[i] = 0; // 16384 free pages, all in region 1
  a.load(used);
  const unsigned n = 1u << 15; // twice what is free
  alloc::device_array<page_t> out(n);
  alloc::device_array<unsigned> sm(n);
  get_with_sm<<<n / alloc::k_block, alloc::k_block>>>(a.handle(), out.get(), sm.get());
  test::sync_or_throw();
  std::vector<page_t> p(n);
  out.download(p.data(), n);
  EXPECT_EQ(std::count(p.begin(), p.end(), alloc::invalid_page), 16384)
      << "exactly the free pages were served";
  std::sort(p.begin(), p.end());
  EXPECT_EQ(std::adjacent_find(p.begin(), p.begin() + 16384), p.begin() + 16384);
  EXPECT_GE(p.front(), c.pages / 2);
}

TEST(Tuned, RwMallocBlocksStayInTheSmRegion) {
  GPUPROBE_REQUIRE_GPU();
  alloc::device_array<char> memory(std::size_t(1) << 30);
  alloc::malloc_config c;
  c.pool_bytes = 1ull << 30;
  c.memory = memory.get();
  const auto t = four_regions();
  alloc::rw_malloc a(c, t);
  ASSERT_EQ(a.regions().regions, 4u);
  const unsigned n = 1u << 16;
  alloc::device_array<void *> out(n);
  alloc::device_array<unsigned> sm(n);
  malloc_with_sm<<<n / alloc::k_block, alloc::k_block>>>(a.handle(), out.get(), sm.get());
  test::sync_or_throw();
  std::vector<void *> p(n);
  std::vector<unsigned> s(n);
  out.download(p.data(), n);
  sm.download(s.data(), n);
  std::uint64_t bad = 0;
  for (unsigned i = 0; i < n; ++i)
    bad += !p[i] || std::uint64_t(static_cast<char *>(p[i]) - memory.get()) / (256ull << 20) !=
                        t.sm_region[s[i]];
  EXPECT_EQ(bad, 0u);
}

TEST(Tuned, CrwWarpPlacementGivesContiguousPagesPerWarp) {
  GPUPROBE_REQUIRE_GPU();
  for (auto start : {alloc::crw_start::warp, alloc::crw_start::warp_vm}) {
    alloc::pool_config c;
    c.page_bytes = 1024;
    c.pages = 1u << 20;
    alloc::tuning t;
    t.crw = start;
    const unsigned n = 1u << 12;
    alloc::crw a(c, n, t);
    alloc::device_array<page_t> out(n);
    alloc::device_array<unsigned> sm(n);
    std::vector<page_t> first(n), second(n);
    get_with_sm<<<n / alloc::k_block, alloc::k_block>>>(a.handle(), out.get(), sm.get());
    test::sync_or_throw();
    out.download(first.data(), n);
    get_with_sm<<<n / alloc::k_block, alloc::k_block>>>(a.handle(), out.get(), sm.get());
    test::sync_or_throw();
    out.download(second.data(), n);
    unsigned contiguous = 0, stepped = 0;
    for (unsigned w = 0; w < n; w += 32) {
      bool block = true;
      for (unsigned l = 0; l < 32; ++l)
        block = block && first[w + l] == first[w] + l && first[w] % 32 == 0;
      contiguous += block;
    }
    for (unsigned i = 0; i < n; ++i)
      stepped += second[i] == first[i] + 32;
    EXPECT_GE(contiguous, n / 32 * 9 / 10)
        << alloc::to_string(start)
        << ": warps on one 32-page block (an empty pool; few collisions)";
    EXPECT_GE(stepped, n * 9 / 10) << alloc::to_string(start) << ": the next launch steps by 32";
    std::vector<page_t> all(first);
    all.insert(all.end(), second.begin(), second.end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
    EXPECT_NE(all.front(), alloc::invalid_page);
    EXPECT_LT(all.back(), c.pages);
  }
}

TEST(Tuned, TuneMeasurementsRunAndCheckOut) {
  GPUPROBE_REQUIRE_GPU();
  const auto w = tune::measure_word_size("corw", 0.01, 4096, 3, 1);
  EXPECT_EQ(w.ms32.size(), 3u);
  EXPECT_EQ(w.ms64.size(), 3u);
  EXPECT_GT(w.free_pages, w.threads);
  for (double m : w.ms32)
    EXPECT_GT(m, 0);
  const auto c = tune::measure_crw_placements(0.5, 4096, 2, 3, 1);
  ASSERT_EQ(c.size(), 3u);
  for (const auto &s : c)
    EXPECT_EQ(s.ms.size(), 3u);
  EXPECT_THROW(tune::measure_word_size("queue", 0.5, 4096, 3, 1), std::exception);
}

TEST(Tuned, TuneThenValidateEndToEnd) {
  GPUPROBE_REQUIRE_GPU();
  // A profile with a 1 GiB candidate (2 MiB pages) shared by two SM groups (even / odd SMs): the
  // 8 GiB pools exceed its reach, so tune measures two regions of 1 GiB against one region and
  // keeps them only where they pay.
  nlohmann::json groups = {nlohmann::json::array(), nlohmann::json::array()};
  for (int s = 0; s < 256; ++s)
    groups[s % 2].push_back(s);
  // Measured on this unit (its UUID): a profile of another unit would drop the region map.
  const nlohmann::json profile = {{"schema", "gpuprobe.profile/1"},
                                  {"device", {{"name", "test"}, {"uuid", query_device(0).uuid}}},
                                  {"tlb",
                                   {{"levels", nlohmann::json::array()},
                                    {"candidates",
                                     {{{"reach_bytes", 1073741824.0},
                                       {"page_bytes", 2097152.0},
                                       {"sharing", {{"scope", "groups"}, {"groups", groups}}}}}}}}};
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/tv_profile.json") << profile.dump();
  int rc = 0;
  const std::string bin = test::gpuprobe_binary(); // relocatable: beside the build folder
  const std::string tout = test::shell(bin + " tune --quick --reps 3 --profile " + dir +
                                           "/tv_profile.json --out " + dir + "/tv_tuning.json 2>&1",
                                       &rc);
  ASSERT_EQ(rc, 0) << tout;
  const auto tuning = read_json_file(dir + "/tv_tuning.json");
  EXPECT_EQ(tuning["schema"], gpuprobe::schema::tuning.id());
  const auto &per_level = tuning["decisions"]["regions"]["per_level"];
  ASSERT_EQ(per_level.size(), 1u) << tout;
  EXPECT_EQ(per_level[0]["level"], "C1");
  EXPECT_GT(per_level[0]["ms_one_region"].get<double>(), 0);
  EXPECT_GT(per_level[0]["ms_regions"].get<double>(), 0);
  const int regions = per_level[0]["decision"] == "gain" ? 2 : 1;
  EXPECT_EQ(tuning["allocator"]["regions"], regions) << per_level[0].dump();
  for (const char *d : {"word_size", "regions", "crw_placement", "tlb_scope"})
    EXPECT_FALSE(tuning["decisions"][d].value("reason", "").empty()) << d;
  EXPECT_EQ(tuning["decisions"]["word_size"]["measurements"].size(), 6u)
      << "2 allocators x 3 free fractions (an empty pool included)";
  EXPECT_EQ(tuning["decisions"]["word_size"]["workloads"].size(), 1u) << "the hash join";
  const std::string vout = test::shell(
      bin + " validate --quick --reps 10 --only getpage_write/free:50 hash_join --tuning " + dir +
          "/tv_tuning.json --out " + dir + "/tv_validation.json 2>&1",
      &rc);
  ASSERT_EQ(rc, 0) << vout;
  const auto v = read_json_file(dir + "/tv_validation.json");
  EXPECT_EQ(v["schema"], "gpuprobe.validation/1");
  std::size_t base = 0, ablated = 0;
  for (const auto &r : v["workloads"])
    (r["workload"].get<std::string>().find(" [") == std::string::npos ? base : ablated) += 1;
  EXPECT_EQ(base, 4u) << "2 workloads x 2 pools";
  const bool wide = tuning["allocator"]["word_bits"] == 64;
  EXPECT_EQ(ablated, wide && regions > 1 ? 8u : 0u)
      << "words alone and regions alone, where both change";
  for (const auto &r : v["workloads"]) {
    EXPECT_EQ(r["measured"].get<bool>(), wide || regions > 1)
        << "both workloads change with either";
    if (!r["measured"].get<bool>())
      continue;
    EXPECT_EQ(r["default_ms"].size(), 10u);
    EXPECT_EQ(r["tuned_ms"].size(), 10u);
    EXPECT_LE(r["ci_low"].get<double>(), r["ratio"].get<double>());
    EXPECT_GE(r["ci_high"].get<double>(), r["ratio"].get<double>());
    EXPECT_FALSE(r["verdict"].get<std::string>().empty());
  }
}
