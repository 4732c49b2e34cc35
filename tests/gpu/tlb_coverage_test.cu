// tlb-coverage on the GPU: the slot pool maps what its layout names (distinct chunks hold their
// own bytes, one chunk shows at every slot that maps it, an ordered allocation reads back), and the
// pattern walk times each class and counts hops past its threshold.
#include "common/device_memory.hpp"
#include "common/error.hpp"
#include "gpu_test_util.hpp"
#include "probes/coverage/kernel.hpp"

#include <gtest/gtest.h>

using namespace gpuprobe;

namespace {
constexpr std::uint64_t k_slot = 2ull << 20;

unsigned long long read_word(const char *p) {
  unsigned long long v = 0;
  EXPECT_EQ(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost), cudaSuccess);
  return v;
}
void write_word(char *p, unsigned long long v) {
  EXPECT_EQ(cudaMemcpy(p, &v, sizeof v, cudaMemcpyHostToDevice), cudaSuccess);
}
} // namespace

TEST(TlbCoverageGpu, SlotPoolsMapWhatTheirLayoutNames) {
  GPUPROBE_REQUIRE_GPU();
  slot_layout l; // slots 0 and 2 share chunk 0, slot 1 is chunk 1, slot 3 unmapped
  l.slot_bytes = k_slot;
  l.chunk_of = {0, 1, 0, -1};
  l.chunks = 2;
  {
    slot_pool p(l, 0);
    EXPECT_EQ(p.bytes(), 4 * k_slot);
    EXPECT_EQ(read_word(p.data()), 0ull) << "every chunk starts zeroed";
    write_word(p.data() + 64, 7);
    write_word(p.data() + k_slot + 64, 9);
    EXPECT_EQ(read_word(p.data() + 2 * k_slot + 64), 7ull) << "slot 2 shows chunk 0";
    EXPECT_EQ(read_word(p.data() + k_slot + 64), 9ull) << "slot 1 is a chunk of its own";
  }
  l.chunk_of = {0, 1, 2, 3};
  l.chunks = 4;
  l.one_allocation = true;
  slot_pool ordered(l, 0);
  for (int i = 0; i < 4; ++i)
    write_word(ordered.data() + i * k_slot + 8, 100 + i);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(read_word(ordered.data() + i * k_slot + 8), 100ull + i);
  l.chunk_of = {0, 5};
  EXPECT_THROW(slot_pool(l, 0), gpuprobe::error) << "a slot that names a chunk past the count";
}

TEST(TlbCoverageGpu, PatternWalkTimesEachClassAndCountsMisses) {
  GPUPROBE_REQUIRE_GPU();
  slot_layout l;
  l.slot_bytes = k_slot;
  l.chunk_of.assign(64, 0);
  slot_pool p(l, 0);
  probes::pattern_walk w;
  const probes::walk_pattern pat{4, {0, 3}};
  const auto none = w.measure(p.data(), k_slot, pat, 8, 2, 1e12);
  ASSERT_EQ(none.mean_cycles.size(), 2u);
  for (int j = 0; j < 2; ++j) {
    EXPECT_GT(none.mean_cycles[j], 50) << "a hop that reaches the L2 costs hundreds of cycles";
    EXPECT_LT(none.mean_cycles[j], 5000);
    EXPECT_EQ(none.misses_per_lap[j], 0);
  }
  const auto all = w.measure(p.data(), k_slot, pat, 8, 2, 0);
  EXPECT_EQ(all.misses_per_lap[0], 8) << "every hop is past a threshold of 0";
  EXPECT_EQ(all.misses_per_lap[1], 8);
  EXPECT_GE(all.smid, 0);
  const auto foreign = w.measure(p.data(), k_slot, pat, 8, 2, 1e12, true);
  EXPECT_GT(foreign.mean_cycles[0], 50);
  EXPECT_THROW(w.measure(p.data(), k_slot, probes::walk_pattern{2, {2}}, 1, 1, 0), gpuprobe::error);
}
