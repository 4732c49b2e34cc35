// Allocator logic that runs on the CPU: occupancy patterns, bitmap packing, queue contents; and
// gpuprobe-bench's list of cases, which must work on a machine without a GPU.
#include "allocators/occupancy.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

using namespace gpuprobe::alloc;

TEST(Occupancy, ExactFreeCountAndRandomPlacement) {
  const auto a = random_occupancy(100000, 500, 1), b = random_occupancy(100000, 500, 2);
  EXPECT_EQ(std::count(a.begin(), a.end(), 0), 500);
  EXPECT_NE(a, b);  // the seed changes the pattern
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

TEST(Occupancy, BitmapPackingAndQueueIds) {
  std::vector<std::uint8_t> used(70, 0);
  used[0] = used[33] = used[69] = 1;
  const auto w32 = pack_bitmap<std::uint32_t>(used);
  ASSERT_EQ(w32.size(), 3u);
  EXPECT_EQ(w32[0], 1u);
  EXPECT_EQ(w32[1], 2u);
  EXPECT_EQ(w32[2], ~0u << 5);  // bits 64..68 free, 69 used, 70.. past the end: set
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

TEST(Bench, ListsEveryCaseWithoutAGpu) {
  std::string out;
  FILE* p = popen((std::string(GPUPROBE_BENCH) + " --benchmark_list_tests 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << out;
  for (const char* a : {"rw", "rw_bm32", "rw_bm64", "corw32", "corw64", "crw", "queue", "queue_warp", "bump", "cuda_malloc"})
    EXPECT_NE(out.find(std::string("BM_getpage/") + a + "/threads:1024/free_permille:500"), std::string::npos) << a;
  EXPECT_NE(out.find("BM_getpage/corw32/threads:1048576/free_permille:5"), std::string::npos);
  EXPECT_EQ(out.find("BM_getpage/cuda_malloc/threads:1048576"), std::string::npos) << "cuda_malloc is capped at 2^18 threads";
}
