// The workloads on small inputs, each against its simple correct baseline: the hash join's pool
// holds exactly the n result tuples (count and checksum), the growable arrays hold 0..n-1 and
// then 2i + 1, and TLB-scoped passes give the same sums and counts as one pass.
#include "allocators/allocators.cuh"
#include "allocators/workloads/growable_array.cuh"
#include "allocators/workloads/hash_join.cuh"
#include "allocators/workloads/tlb_scoped.cuh"
#include "gpu_test_util.hpp"

#include <algorithm>
#include <map>
#include <vector>

using namespace gpuprobe;
using gpuprobe::test::sync_or_throw;

namespace {

template <class A> std::string join_with(unsigned n, std::uint32_t page_bytes) {
  alloc::pool_config c;
  c.pages = alloc::page_t((std::uint64_t(n) * 5 / 4 + 63) / 64 * 64);
  c.page_bytes = page_bytes;
  A a(c);
  alloc::cuda_or_throw(cudaMemset(a.handle().data, 0, std::size_t(c.pages) * page_bytes), "memset");
  workloads::hash_join j(n);
  j.run(a.handle(), page_bytes);
  sync_or_throw();
  return j.verify(a.handle().data, std::uint64_t(c.pages) * page_bytes);
}

// GGArray of `elements` over handle h: failures, sum after insert, sum after read/write.
template <class H>
std::vector<unsigned long long> grow(H h, unsigned elements, unsigned vectors,
                                     unsigned rounds = 4) {
  alloc::device_array<workloads::lf_vector> vecs(vectors);
  vecs.zero();
  alloc::device_array<unsigned long long> acc(1);
  const unsigned per = elements / rounds;
  for (unsigned r = 0; r < rounds; ++r)
    workloads::gg_insert<<<alloc::blocks_for(per), alloc::k_block>>>(h, vecs.get(), vectors, per,
                                                                     std::uint64_t(r) * per);
  sync_or_throw();
  std::vector<workloads::lf_vector> hv(vectors);
  vecs.download(hv.data(), vectors);
  unsigned long long failed = 0, size = 0;
  std::map<unsigned, unsigned> failed_buckets; // bucket -> vectors whose bucket found no memory
  for (const auto &v : hv) {
    failed += v.failed, size += v.size;
    for (unsigned k = 0; k < workloads::detail::lfv_max_buckets; ++k)
      if (reinterpret_cast<unsigned long long>(v.bucket[k]) == workloads::detail::lfv_failed)
        ++failed_buckets[k];
  }
  for (const auto &[k, n] : failed_buckets)
    std::printf("bucket %u (%llu B): no memory in %u vectors\n", k, 1024ull << k, n);
  std::vector<unsigned long long> out = {failed, size};
  if (failed)
    return out;
  acc.zero();
  workloads::gg_sum<<<64, alloc::k_block>>>(vecs.get(), vectors, acc.get());
  sync_or_throw();
  unsigned long long s = 0;
  acc.download(&s, 1);
  out.push_back(s);
  workloads::gg_read_write<<<64, alloc::k_block>>>(vecs.get(), vectors);
  acc.zero();
  workloads::gg_sum<<<64, alloc::k_block>>>(vecs.get(), vectors, acc.get());
  sync_or_throw();
  acc.download(&s, 1);
  out.push_back(s);
  workloads::gg_release<<<alloc::blocks_for(vectors), alloc::k_block>>>(h, vecs.get(), vectors);
  sync_or_throw();
  return out;
}
} // namespace

TEST(Workloads, HashJoinWritesEveryResultTupleOnce) {
  GPUPROBE_REQUIRE_GPU();
  for (std::uint32_t page : {32u, 2048u}) {
    EXPECT_EQ(join_with<alloc::bump>(1u << 16, page), "") << "bump, page " << page;
    EXPECT_EQ(join_with<alloc::corw<std::uint32_t>>(1u << 16, page), "") << "corw32, page " << page;
    EXPECT_EQ(join_with<alloc::rw_bm<std::uint32_t>>(1u << 16, page), "")
        << "rw_bm32, page " << page;
    EXPECT_EQ(join_with<alloc::rw>(1u << 16, page), "") << "rw, page " << page;
    EXPECT_EQ(join_with<alloc::queue>(1u << 16, page), "") << "queue, page " << page;
  }
  // Too few pages: the join says so instead of losing tuples silently.
  alloc::pool_config c;
  c.pages = 1024;
  c.page_bytes = 32;
  alloc::bump a(c);
  workloads::hash_join j(1u << 14);
  j.run(a.handle(), 32);
  sync_or_throw();
  EXPECT_NE(j.verify(a.handle().data, 1024 * 32).find("found no page"), std::string::npos);
}

TEST(Workloads, GrowableArrayOverRwMallocAndCudaMalloc) {
  GPUPROBE_REQUIRE_GPU();
  GPUPROBE_IN_FRESH_PROCESS(); // its own device malloc heap
  const unsigned n = 1u << 20;
  alloc::malloc_config mc;
  mc.pool_bytes = 64u << 20;
  mc.unit_bytes = 4096;
  alloc::rw_malloc a(mc);
  const auto r = grow(a.handle(), n, 64);
  ASSERT_EQ(r[0], 0u) << "elements without memory (rw_malloc)";
  EXPECT_EQ(r[1], n);
  EXPECT_EQ(r[2], workloads::expected_insert_sum(n));
  EXPECT_EQ(r[3], workloads::expected_rw_sum(n));
  EXPECT_EQ(a.free_units(), a.units()) << "buckets released";
  alloc::pool_config pc;
  pc.pages = 1;
  alloc::cuda_malloc m(pc, 1.0);
  alloc::ensure_malloc_heap(256u << 20);
  const auto q = grow(m.handle(), n, 64);
  ASSERT_EQ(q[0], 0u) << "elements without memory (cuda_malloc)";
  EXPECT_EQ(q[2], workloads::expected_insert_sum(n));
  EXPECT_EQ(q[3], workloads::expected_rw_sum(n));
}

// The benchmark's size: 2^26 elements in 8 rounds over 1024 vectors, buckets up to 256 KiB.
TEST(Workloads, GrowableArrayAtBenchmarkScaleOverRwMalloc) {
  GPUPROBE_REQUIRE_GPU();
  for (std::uint32_t unit : {4096u, 256u}) {
    alloc::malloc_config mc;
    mc.pool_bytes = 1ull << 30;
    mc.unit_bytes = unit;
    alloc::rw_malloc a(mc);
    const auto r = grow(a.handle(), 1u << 26, 1024, 8);
    std::printf("unit %u: %llu elements without memory, %.1f%% of the pool used\n", unit, r[0],
                100.0 * double(a.units() - a.free_units()) / double(a.units()));
    EXPECT_EQ(r[0], 0u) << "unit " << unit;
  }
}

TEST(Workloads, TlbScopedPassesEqualOnePass) {
  GPUPROBE_REQUIRE_GPU();
  const std::uint64_t bytes = 64u << 20, n = bytes / 8, scope = 16u << 20;
  alloc::device_array<std::uint64_t> data(n);
  workloads::scoped_fill<<<256, alloc::k_block>>>(data.get(), n);
  const unsigned threads = 1u << 14;
  alloc::device_array<unsigned long long> one(threads), many(threads);
  one.zero();
  many.zero();
  workloads::scoped_sample<<<threads / alloc::k_block, alloc::k_block>>>(data.get(), n, 64, 0, n,
                                                                         one.get());
  const std::uint64_t passes = workloads::scope_passes(bytes, scope);
  EXPECT_EQ(passes, 4u);
  for (std::uint64_t p = 0; p < passes; ++p)
    workloads::scoped_sample<<<threads / alloc::k_block, alloc::k_block>>>(
        data.get(), n, 64, p * (scope / 8), std::min(n, (p + 1) * (scope / 8)), many.get());
  sync_or_throw();
  std::vector<unsigned long long> a(threads), b(threads);
  one.download(a.data(), threads);
  many.download(b.data(), threads);
  EXPECT_EQ(a, b);
  // Grouping: a table of 2^20 slots, 4 scopes.
  const std::uint64_t slots = 1u << 20, input = 1u << 22;
  alloc::device_array<std::uint32_t> values(input);
  workloads::scoped_values<<<256, alloc::k_block>>>(values.get(), input, std::uint32_t(slots / 2));
  alloc::device_array<workloads::group_slot> t1(slots), t4(slots);
  t1.zero();
  t4.zero();
  workloads::scoped_group<<<256, alloc::k_block>>>(values.get(), input, t1.get(), slots, 0, slots);
  for (std::uint64_t p = 0; p < 4; ++p)
    workloads::scoped_group<<<256, alloc::k_block>>>(values.get(), input, t4.get(), slots,
                                                     p * slots / 4, (p + 1) * slots / 4);
  alloc::device_array<unsigned long long> c1(3), c4(3);
  c1.zero();
  c4.zero();
  workloads::group_checksum<<<256, alloc::k_block>>>(t1.get(), slots, c1.get());
  workloads::group_checksum<<<256, alloc::k_block>>>(t4.get(), slots, c4.get());
  sync_or_throw();
  unsigned long long h1[3], h4[3];
  c1.download(h1, 3);
  c4.download(h4, 3);
  EXPECT_EQ(h1[1], input) << "every value counted once";
  EXPECT_EQ(h1[0], h4[0]);
  EXPECT_EQ(h1[1], h4[1]);
  EXPECT_EQ(h1[2], h4[2]);
}

// grouping_run's check (the values' own count on the device, no table) agrees with a host count
// of the same values, passes a table grouped in passes, and fails one with a count changed.
TEST(Workloads, GroupingCheckIsTheValuesOwnCount) {
  GPUPROBE_REQUIRE_GPU();
  const std::uint64_t bytes = 32u << 20, input = 1u << 21; // 2^21 slots, 2^20 groups
  alloc::device_array<workloads::group_slot> table(bytes / sizeof(workloads::group_slot));
  workloads::grouping_run g(table.get(), bytes, input);
  g.reset();
  g.launch(8u << 20); // 4 passes
  EXPECT_EQ(g.verify(), "");
  // The host's count of the same values: the table's occupied slots and total.
  alloc::device_array<std::uint32_t> values(input);
  workloads::scoped_values<<<256, alloc::k_block>>>(values.get(), input, g.groups());
  sync_or_throw();
  std::vector<std::uint32_t> hv(input);
  values.download(hv.data(), input);
  std::vector<std::uint8_t> seen(g.groups(), 0);
  std::uint64_t distinct = 0;
  for (auto v : hv)
    distinct += !seen[v], seen[v] = 1;
  std::vector<workloads::group_slot> ht(bytes / sizeof(workloads::group_slot));
  table.download(ht.data(), ht.size());
  std::uint64_t occupied = 0, total = 0;
  for (const auto &s : ht)
    occupied += s.key != 0, total += s.count;
  EXPECT_EQ(occupied, distinct);
  EXPECT_EQ(total, input);
  // One count off by one: the check must fail.
  auto it = std::find_if(ht.begin(), ht.end(), [](const auto &s) { return s.key != 0; });
  ASSERT_NE(it, ht.end());
  ++it->count;
  table.upload(ht.data(), ht.size());
  EXPECT_NE(g.verify(), "");
}
