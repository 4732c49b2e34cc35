// validate's rows: medians, CI, Mann-Whitney with Holm across measured workloads, verdicts;
// workloads the tuning does not change are listed as "not tuned" and left out of Holm.
#include "analysis/significance.hpp"
#include "analysis/validation.hpp"
#include "common/json_io.hpp"
#include "tune/measure.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace gpuprobe::analysis;

namespace {
std::vector<double> around(double m, int n, double spread) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i)
    v.push_back(m + spread * ((i * 7) % 11 - 5) / 5.0);
  return v;
}
} // namespace

TEST(Validation, VerdictsFollowTheDataAndHolmCoversMeasuredRowsOnly) {
  std::vector<workload_samples> w = {
      {{"fast", "vmm", "a", "b", true}, around(10, 15, 0.2), around(5, 15, 0.2)},
      {{"same", "vmm", "a", "b", true}, around(10, 15, 1.0), around(10.05, 15, 1.0)},
      {{"slow", "cudamalloc", "a", "b", true}, around(10, 15, 0.2), around(12, 15, 0.2)},
      {{"untouched", "cudamalloc", "a", "a", false}, {}, {}},
  };
  const auto rows = validation_rows(w);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].verdict, "faster");
  EXPECT_NEAR(*rows[0].ratio, 0.5, 0.01);
  EXPECT_LT(*rows[0].ci_high, 1.0);
  EXPECT_EQ(rows[1].verdict, "no significant difference");
  EXPECT_LE(*rows[1].ci_low, 1.0);
  EXPECT_GE(*rows[1].ci_high, 1.0);
  EXPECT_EQ(rows[2].verdict, "slower");
  EXPECT_EQ(rows[3].verdict, "not tuned");
  EXPECT_FALSE(rows[3].p_holm);
  EXPECT_FALSE(to_json(rows[3]).contains("p_holm"));
  // Holm over the three measured p-values, as stats::holm gives them.
  std::vector<double> p;
  for (int i = 0; i < 3; ++i)
    p.push_back(*rows[i].p);
  const auto adj = holm(p);
  for (int i = 0; i < 3; ++i)
    EXPECT_DOUBLE_EQ(*rows[i].p_holm, adj[i]);
  EXPECT_EQ(*rows[0].reps, 15u);
  EXPECT_EQ(verdict_summary(rows), "1 faster, 1 no significant difference, 1 slower, 1 not tuned");
}

TEST(Validation, TooFewSamplesIsAnError) {
  EXPECT_THROW(validation_rows({{{"w", "vmm", "a", "b", true}, {1.0}, {1.0, 2.0}}}),
               std::exception);
  EXPECT_NO_THROW(validation_rows({{{"w", "vmm", "a", "a", false}, {}, {}}}));
}

// A decision validate finds slower on a workload is recorded as a trade-off with its numbers,
// charged to the typed decisions the row's configurations differ in: the committed H100
// validation's two "slower" rows (hash join, 64-bit words) on both pools give its own trade-offs.
TEST(Validation, SlowerWorkloadsAreTheTradeOffsOfTheirDecisions) {
  using gpuprobe::model::decision;
  auto v = gpuprobe::model::read_validation(
      std::string(GPUPROBE_SOURCE_DIR) +
      "/tests/fixtures/runs/nvidia-h100-80gb-hbm3-bba9cd54/validation.json");
  EXPECT_TRUE(gpuprobe::analysis::tradeoffs(v.workloads).empty())
      << "rows without typed changes (a file before them) are charged to nothing";
  for (auto &r : v.workloads) // what validate_workloads gives these rows on a 64-bit tuning
    if (r.config_tuned.find("64-bit") != std::string::npos)
      r.changes = {{{decision::word_size, "32-bit", "64-bit"}}};
  const auto t = gpuprobe::analysis::tradeoffs(v.workloads);
  ASSERT_EQ(t.size(), 2u);
  for (const auto &x : t) {
    EXPECT_EQ(x.decision, "word_size");
    EXPECT_EQ(x.workload, "hash_join/4M");
    EXPECT_GT(x.ratio, 1.07);
  }
  EXPECT_EQ(t[0].line.rfind(
                "word_size (32-bit -> 64-bit): hash_join/4M on cudamalloc is 8.3 % slower", 0),
            0u)
      << t[0].line;
  ASSERT_TRUE(v.tradeoffs) << "the file's own trade-offs are the ones derived here";
  ASSERT_EQ(v.tradeoffs->size(), t.size());
  for (std::size_t i = 0; i < t.size(); ++i)
    EXPECT_EQ(gpuprobe::model::to_json((*v.tradeoffs)[i]), gpuprobe::model::to_json(t[i]));
  // Regions and TLB scope are charged the same way, whatever the configurations' words say;
  // rows that are not slower, or name no change, are not.
  const nlohmann::json row_docs = {
      {{"verdict", "slower"},
       {"workload", "w"},
       {"pool", "vmm"},
       {"config_default", "a"},
       {"config_tuned", "b"},
       {"ratio", 1.2},
       {"changes", {{{"decision", "regions"}, {"from", "one"}, {"to", "24"}}}}},
      {{"verdict", "slower"},
       {"workload", "s"},
       {"pool", "vmm"},
       {"config_default", "one pass"},
       {"config_tuned", "2 passes of 64.53 GiB"},
       {"ratio", 1.1},
       {"changes",
        {{{"decision", "tlb_scope"}, {"from", "one pass"}, {"to", "2 passes of 64.53 GiB"}}}}},
      {{"verdict", "slower"},
       {"workload", "CRW start thread -> warp, no changes recorded"},
       {"config_default", "CRW start thread"},
       {"config_tuned", "CRW start warp"},
       {"ratio", 1.3}},
      {{"verdict", "faster"},
       {"workload", "f"},
       {"config_default", "CoRW 32-bit, one region"},
       {"config_tuned", "CoRW 64-bit, one region"},
       {"ratio", 0.9},
       {"changes", {{{"decision", "word_size"}, {"from", "32-bit"}, {"to", "64-bit"}}}}}};
  std::vector<gpuprobe::model::validation_row> rows;
  for (const auto &r : row_docs)
    rows.push_back(gpuprobe::model::validation_row_from_json(r));
  const auto u = gpuprobe::analysis::tradeoffs(rows);
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0].decision, "regions");
  EXPECT_NE(u[0].line.find("(one -> 24)"), std::string::npos) << u[0].line;
  EXPECT_EQ(u[1].decision, "tlb_scope");
  // The changes are written back as read; an unknown decision is refused.
  EXPECT_EQ(gpuprobe::model::to_json(rows[0]).at("changes"), row_docs[0].at("changes"));
  EXPECT_FALSE(gpuprobe::model::to_json(rows[2]).contains("changes"));
  nlohmann::json bad = row_docs[0];
  bad["changes"][0]["decision"] = "clock";
  EXPECT_THROW(gpuprobe::model::validation_row_from_json(bad), std::exception);
}

// Issue 48: validate runs each pool kind's rows in turn and, within a kind, the smaller pools
// first, so the TLB-sized workloads share one mapped pool; the rows keep their order. Over seeded
// lists of kinds and sizes, in runs or interleaved: the order is a permutation, the kinds come in
// the order they first appear, the sizes never fall within a kind, and equal sizes keep the list's
// order. On validate's own list (8 GiB rows around a 72 GiB getpage, then 70/72 GiB TLB rows) the
// 8 GiB hash join runs before every TLB-sized row of its kind.
TEST(Validation, WorkloadsRunByPoolKindSmallerPoolsFirstAndRowsKeepTheirOrder) {
  using gpuprobe::tune::workload;
  std::mt19937 rng(48);
  const std::uint64_t gib = 1ull << 30;
  const std::vector<std::uint64_t> sizes = {8 * gib, 70 * gib, 72 * gib};
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<workload> w(1 + rng() % 30);
    for (auto &x : w) {
      x.pool = rng() % 2 ? "vmm" : "cudamalloc";
      x.pool_bytes = sizes[rng() % sizes.size()];
    }
    const auto order = gpuprobe::tune::run_order(w);
    ASSERT_EQ(order.size(), w.size());
    EXPECT_EQ(std::set<std::size_t>(order.begin(), order.end()).size(), w.size());
    std::map<std::string, std::size_t> first;
    for (std::size_t i = 0; i < w.size(); ++i)
      first.emplace(w[i].pool, i);
    for (std::size_t k = 1; k < order.size(); ++k) {
      const auto &a = w[order[k - 1]], &b = w[order[k]];
      ASSERT_LE(first[a.pool], first[b.pool]) << "trial " << trial;
      if (a.pool == b.pool) {
        ASSERT_LE(a.pool_bytes, b.pool_bytes) << "trial " << trial;
        if (a.pool_bytes == b.pool_bytes) {
          ASSERT_LT(order[k - 1], order[k]) << "trial " << trial;
        }
      }
    }
  }
  std::vector<workload> list;
  for (const char *pool : {"cudamalloc", "vmm"})
    for (std::uint64_t b : {8, 8, 8, 8, 72, 8, 8, 8, 72, 70, 72, 70}) {
      list.emplace_back();
      list.back().pool = pool;
      list.back().pool_bytes = b * gib;
    }
  const auto order = gpuprobe::tune::run_order(list);
  const std::vector<std::size_t> cuda = {0, 1, 2, 3, 5, 6, 7, 9, 11, 4, 8, 10};
  for (std::size_t k = 0; k < cuda.size(); ++k) {
    EXPECT_EQ(order[k], cuda[k]);
    EXPECT_EQ(order[k + 12], cuda[k] + 12);
  }
}

// Issue 48: with a pool kept from tune (gpuprobe run), the rows of its kind that it holds (within
// 10 % below its bytes) run first, before anything else needs its memory, and the rest run as
// without one. Over seeded lists and kept pools (kinds, sizes, a kept pool no row fits).
TEST(Validation, RowsThatTakeTheKeptPoolRunFirstAndTheRestAsBefore) {
  using gpuprobe::tune::workload;
  std::mt19937 rng(4848);
  const std::uint64_t gib = 1ull << 30;
  const std::vector<std::uint64_t> sizes = {8 * gib, 70 * gib, 72 * gib, 131 * gib, 133 * gib};
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<workload> w(1 + rng() % 30);
    for (auto &x : w) {
      x.pool = rng() % 2 ? "vmm" : "cudamalloc";
      x.pool_bytes = sizes[rng() % sizes.size()];
    }
    const std::string kept = rng() % 2 ? "vmm" : "cudamalloc";
    const std::uint64_t kept_bytes = sizes[rng() % sizes.size()] + (rng() % 3 == 0 ? 40 * gib : 0);
    const auto takes = [&](const workload &x) {
      return x.pool == kept && x.pool_bytes <= kept_bytes && x.pool_bytes * 10 >= kept_bytes * 9;
    };
    const auto order = gpuprobe::tune::run_order(w, kept, kept_bytes);
    ASSERT_EQ(order.size(), w.size());
    EXPECT_EQ(std::set<std::size_t>(order.begin(), order.end()).size(), w.size());
    std::size_t first_rest = 0;
    while (first_rest < order.size() && takes(w[order[first_rest]]))
      ++first_rest;
    for (std::size_t k = first_rest; k < order.size(); ++k)
      ASSERT_FALSE(takes(w[order[k]])) << "trial " << trial << ": a kept-pool row after the rest";
    for (std::size_t k = 1; k < first_rest; ++k)
      ASSERT_LE(w[order[k - 1]].pool_bytes, w[order[k]].pool_bytes);
    // the rest: as run_order orders them without a kept pool
    std::vector<workload> rest;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < w.size(); ++i)
      if (!takes(w[i]))
        rest.push_back(w[i]), index.push_back(i);
    const auto plain = gpuprobe::tune::run_order(rest);
    ASSERT_EQ(plain.size(), order.size() - first_rest);
    for (std::size_t k = 0; k < plain.size(); ++k)
      ASSERT_EQ(order[first_rest + k], index[plain[k]]) << "trial " << trial;
    if (kept_bytes > 133 * gib + 20 * gib) {
      EXPECT_EQ(first_rest, 0u) << "no row fits within 10 % of a pool that large";
    }
  }
}
