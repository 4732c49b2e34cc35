// TLB sharing: the 2017 fixtures classify as the TLB paper published them, and generated
// matrices with a baseline (gpuprobe's format) cover the cases the fixtures do not.
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "probes/sharing/analysis.hpp"
#include "probes/sharing/driver.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

using namespace gpuprobe::probes;
using gpuprobe::test::fixture;

namespace {

sharing_analysis analyze_sharing_fixture(const std::string &rel) {
  return analyze_sharing(load_sharing_input(fixture(rel)));
}

using groups_t = std::vector<std::vector<int>>;

// A matrix with a baseline: `groups` share, diagonal +pos, Gaussian noise sigma.
sharing_matrix make_matrix(int n, const groups_t &groups, double base, double pos, double sigma,
                           unsigned seed = 1, double shared_fraction = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0, sigma);
  std::vector<int> unit(n, -1);
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int id : groups[g])
      unit[id] = int(g);
  sharing_matrix m;
  m.format = "gpuprobe";
  for (int i = 0; i < n; ++i) {
    m.sm_ids.push_back(i);
    m.baseline.push_back(base + noise(rng));
    std::vector<double> row;
    for (int k = 0; k < n; ++k) {
      double v = base;
      if (k == i)
        v += pos;
      else if (unit[i] >= 0 && unit[i] == unit[k])
        v += pos * shared_fraction;
      row.push_back(v + noise(rng));
    }
    m.cycles.push_back(row);
  }
  return m;
}

} // namespace

TEST(SharingFixtures, K80L1IsPrivate) {
  const auto a = analyze_sharing_fixture("K80/TLBsharing-128-16.txt");
  EXPECT_EQ(to_string(a.scope), "private") << a.reason;
  EXPECT_TRUE(a.groups.empty());
  EXPECT_FALSE(a.has_baseline);
  EXPECT_GT(a.control_cycles, 5);
}

TEST(SharingFixtures, K80L2IsGroupsOfTwoOrThree) {
  const auto a = analyze_sharing_fixture("K80/TLBsharing-2048-65.txt");
  EXPECT_EQ(to_string(a.scope), "groups") << a.reason;
  EXPECT_EQ(a.groups, (groups_t{{0, 5}, {1, 6}, {2, 7, 10}, {3, 8, 11}, {4, 9, 12}}));
  EXPECT_NE(a.structure.find("interleaved"), std::string::npos) << a.structure;
}

TEST(SharingFixtures, K80L3IsGlobal) {
  const auto a = analyze_sharing_fixture("K80/TLBsharing-2048-1032.txt");
  EXPECT_EQ(to_string(a.scope), "global") << a.reason;
}

TEST(SharingFixtures, P100L1IsTpcPairs) {
  const auto a = analyze_sharing_fixture("P100/TLBsharing-2048-16.txt");
  EXPECT_EQ(to_string(a.scope), "groups") << a.reason;
  groups_t pairs;
  for (int j = 0; j < 56; j += 2)
    pairs.push_back({j, j + 1});
  EXPECT_EQ(a.groups, pairs);
  EXPECT_NE(a.structure.find("one TPC"), std::string::npos) << a.structure;
}

TEST(SharingFixtures, P100L2IsSixGpcGroups) {
  const auto a = analyze_sharing_fixture("P100/TLBsharing-32768-65.txt");
  EXPECT_EQ(to_string(a.scope), "groups") << a.reason;
  const groups_t expect = {
      {0, 1, 12, 13, 24, 25, 36, 37, 44, 45}, {2, 3, 14, 15, 26, 27, 38, 39, 46, 47},
      {4, 5, 16, 17, 28, 29, 40, 41, 48, 49}, {6, 7, 18, 19, 30, 31, 42, 43, 52, 53},
      {8, 9, 20, 21, 32, 33, 50, 51},         {10, 11, 22, 23, 34, 35, 54, 55}};
  EXPECT_EQ(a.groups, expect);
  EXPECT_NE(a.structure.find("union of TPC pairs"), std::string::npos) << a.structure;
  EXPECT_NE(a.structure.find("unequal"), std::string::npos) << a.structure;
}

// The tool's two H100 runs (2 MiB stride x 16 hops, 32 MiB x 65) printed the same bytes; one is
// kept (tests/fixtures/cuda-gpu-tlb/README.md).
TEST(SharingFixtures, H100NaivePortIsInconclusive) {
  const auto a = analyze_sharing_fixture("H100/TLBsharing-2048-16.txt");
  EXPECT_EQ(to_string(a.scope), "inconclusive");
  EXPECT_NE(a.reason.find("L1"), std::string::npos) << a.reason;
}

TEST(SharingGenerated, BaselineMatricesGiveEachScope) {
  const int n = 24;
  const auto priv = analyze_sharing(make_matrix(n, {}, 300, 90, 2));
  EXPECT_EQ(to_string(priv.scope), "private") << priv.reason;

  groups_t all(1);
  for (int i = 0; i < n; ++i)
    all[0].push_back(i);
  const auto glob = analyze_sharing(make_matrix(n, all, 300, 90, 2));
  EXPECT_EQ(to_string(glob.scope), "global") << glob.reason;

  const groups_t quads = {{0, 1, 2, 3},     {4, 5, 6, 7},     {8, 9, 10, 11},
                          {12, 13, 14, 15}, {16, 17, 18, 19}, {20, 21, 22, 23}};
  const auto g = analyze_sharing(make_matrix(n, quads, 300, 90, 2));
  EXPECT_EQ(to_string(g.scope), "groups") << g.reason;
  EXPECT_EQ(g.groups, quads);
  EXPECT_NE(g.structure.find("contiguous"), std::string::npos) << g.structure;
}

TEST(SharingGenerated, HalfTheSmsInOneGroupStillSplitsWithABaseline) {
  const groups_t halves = {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}};
  const auto a = analyze_sharing(make_matrix(16, halves, 300, 60, 1.5, 3));
  EXPECT_EQ(a.groups, halves) << a.reason;
}

TEST(SharingGenerated, PartialEvictionEverywhereIsGlobal) {
  groups_t all(1);
  for (int i = 0; i < 16; ++i)
    all[0].push_back(i);
  const auto a = analyze_sharing(make_matrix(16, all, 300, 100, 1.5, 5, 0.35));
  EXPECT_EQ(to_string(a.scope), "global") << a.reason;
}

TEST(SharingGenerated, ThresholdFollowsTheDataNotAFixedCycleCount) {
  // A 3-cycle effect at sigma 0.3 is a clean split; a 3-cycle effect at sigma 2 is not data.
  const groups_t pairs = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
  const auto clean = analyze_sharing(make_matrix(8, pairs, 300, 3, 0.3, 7));
  EXPECT_EQ(clean.groups, pairs) << clean.reason;
  const auto noisy = analyze_sharing(make_matrix(8, pairs, 300, 3, 2.0, 7));
  EXPECT_EQ(to_string(noisy.scope), "inconclusive") << noisy.reason;
}

TEST(SharingGenerated, FailedPositiveControlIsInconclusive) {
  const auto a = analyze_sharing(make_matrix(12, {}, 320, 0, 1.0));
  EXPECT_EQ(to_string(a.scope), "inconclusive");
  EXPECT_NE(a.reason.find("positive control"), std::string::npos) << a.reason;
}

TEST(SharingGenerated, OneDirectionalRiseIsNotSharing) {
  auto m = make_matrix(8, {{0, 1}}, 300, 80, 1.0);
  m.cycles[5][2] += 80; // only 5<-2 rises
  const auto a = analyze_sharing(m);
  EXPECT_EQ(a.groups, (groups_t{{0, 1}}));
  EXPECT_EQ(a.asymmetric_pairs, 1);
}

TEST(SharingGenerated, StructureDescribesPairsAndFloorSweeping) {
  EXPECT_NE(describe_structure({{0, 1}, {2, 3}}, 4).find("one TPC"), std::string::npos);
  const auto s = describe_structure({{0, 1, 6, 7}, {2, 3, 8, 9}, {4, 5}}, 10);
  EXPECT_NE(s.find("union of TPC pairs"), std::string::npos) << s;
  EXPECT_NE(s.find("unequal"), std::string::npos) << s;
}

TEST(SharingParse, MalformedFilesGiveFileAndLine) {
  const std::string head =
      "#GPU X: cuda 9.0\n, reduction mode: min\n#--- absolute values ---\n#   000 001\n";
  EXPECT_THROW(parse_tlbsharing_txt(head + "000 20 abc\n001 20 20\n", "f.txt"), gpuprobe::error);
  try {
    parse_tlbsharing_txt(head + "000 20 abc\n001 20 20\n", "f.txt");
  } catch (const gpuprobe::error &e) {
    EXPECT_NE(std::string(e.what()).find("f.txt:5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_tlbsharing_txt(head + "000 20 20\n", "f.txt"), gpuprobe::error); // not square
  EXPECT_THROW(parse_tlbsharing_txt(head + "000 20\n001 20 20\n", "f.txt"), gpuprobe::error);
  EXPECT_THROW(parse_tlbsharing_txt("just text\n", "f.txt"), gpuprobe::error);
  const auto m = parse_tlbsharing_txt(head + "000 20 21\n001 22 23\n", "f.txt");
  EXPECT_EQ(m.device_name, "GPU X");
  EXPECT_EQ(m.cycles[1][0], 22);
}

TEST(SharingParse, GpuprobeResultNeedsItsFields) {
  nlohmann::json doc = {{"schema", "gpuprobe.result/1"},
                        {"probe", "tlb-sharing"},
                        {"device", {{"name", "G"}}},
                        {"meta", nlohmann::json::object()},
                        {"sharing",
                         {{"sm_ids", {0, 1}},
                          {"mean_cycles", {{300, 300}, {300, 390}}},
                          {"median_cycles", {{300, 300}, {300, 390}}},
                          {"baseline_mean_cycles", {300, 300}},
                          {"baseline_median_cycles", {300, 300}},
                          {"baseline_drift_cycles", {0, 0}},
                          {"wall_seconds", 1.0},
                          {"params", nlohmann::json::object()}}}};
  EXPECT_NO_THROW(parse_sharing_result(doc, "r.json"));
  auto bad = doc;
  bad["sharing"].erase("median_cycles"); // what the probe writes, its reader requires
  EXPECT_THROW(parse_sharing_result(bad, "r.json"), gpuprobe::error);
  bad = doc;
  bad["sharing"]["mean_cycles"] = {{300, 300}};
  EXPECT_THROW(parse_sharing_result(bad, "r.json"), gpuprobe::error);
  bad = doc;
  bad["schema"] = "gpuprobe.result/9";
  EXPECT_THROW(parse_sharing_result(bad, "r.json"), gpuprobe::error);
  bad = doc;
  bad["probe"] = "tlb";
  EXPECT_THROW(parse_sharing_result(bad, "r.json"), gpuprobe::error);
}

// tlb-sharing's sample (characterize's full mode: 16 SMs spread over the GPU, every SM only where
// the sample is not global), on the committed full 132 x 132 matrices of an H200 and an H100:
// the spread sample of L3 is global, as the whole matrix is; the samples of L1 (private) and L2
// (groups of TPC pairs) are not, so every SM is measured for them. The same decision as the full
// sweep on every level, from 16 of 132 victims where the level is global.
// Spread samples of 8 (the GPU test's) and 16 SMs (characterize's) of the committed matrices.
TEST(SharingSample, TheSpreadSampleDecidesAsTheWholeMatrixOnCommittedRuns) {
  EXPECT_EQ(
      gpuprobe::probes::spread_sm_indices(132, 16),
      (std::vector<std::size_t>{0, 8, 16, 24, 33, 41, 49, 57, 66, 74, 82, 90, 99, 107, 115, 123}));
  EXPECT_EQ(gpuprobe::probes::spread_sm_indices(4, 16).size(), 4u);
  int matrices = 0;
  for (const std::size_t sms : {std::size_t(8), std::size_t(16)})
    for (const auto &unit : gpuprobe::test::committed_run_folders())
      for (int level = 1; level <= 3; ++level) {
        const std::string path =
            (unit / ("raw/sharing_L" + std::to_string(level) + ".json")).string();
        if (!std::filesystem::exists(path))
          continue;
        const auto full =
            gpuprobe::probes::sharing_result_from_json(gpuprobe::read_json_file(path));
        if (full.sm_ids.size() != 132u) // a quick run's sample: not the whole matrix
          continue;
        ++matrices;
        const std::string name = unit.filename().string();
        // The sample's victims and disruptors: the spread rows and columns of the whole matrix.
        gpuprobe::probes::sharing_result sample = full;
        const auto pick = gpuprobe::probes::spread_sm_indices(full.sm_ids.size(), sms);
        sample.sm_ids.clear();
        sample.mean_cycles.assign(pick.size(), {});
        sample.baseline_mean_cycles.clear();
        for (std::size_t i = 0; i < pick.size(); ++i) {
          sample.sm_ids.push_back(full.sm_ids[pick[i]]);
          sample.baseline_mean_cycles.push_back(full.baseline_mean_cycles[pick[i]]);
          for (const std::size_t k : pick)
            sample.mean_cycles[i].push_back(full.mean_cycles[pick[i]][k]);
        }
        const auto whole = analyze_sharing(matrix_of(full, path)).scope;
        SCOPED_TRACE(std::to_string(sms) + " SMs, " + name + " L" + std::to_string(level) +
                     ": the whole matrix says " + to_string(whole));
        EXPECT_EQ(whole, level == 1   ? sharing_scope::private_
                         : level == 2 ? sharing_scope::groups
                                      : sharing_scope::global);
        EXPECT_EQ(sample_is_global(sample), level == 3);
      }
  // Both sample sizes over the whole matrices committed: the H200 example's L1 and L2 (its full
  // run sampled L3, which is global) and the H100 fixture's L2, at least.
  EXPECT_GE(matrices, 2 * 3);
}

// A sample's verdict says it was a sample, in the reason the profile and the report carry.
TEST(SharingSample, ASampledVerdictSaysSo) {
  const std::string path =
      gpuprobe::test::committed_run("nvidia-h200-bc72dbee") + "/raw/sharing_L3.json";
  auto r = gpuprobe::probes::sharing_result_from_json(gpuprobe::read_json_file(path));
  r.params.erase("sample"); // the run sampled this global level: read it as a whole matrix first
  EXPECT_EQ(analyze_sharing(matrix_of(r, path)).reason.find("spread"), std::string::npos);
  const std::size_t n = r.sm_ids.size();
  r.params["sample"] = {{"sms", n}, {"of", 264}, {"finding", "global"}};
  const auto a = analyze_sharing(matrix_of(r, path));
  EXPECT_NE(a.reason.find("; measured on " + std::to_string(n) + " of 264 SMs spread over the GPU"),
            std::string::npos)
      << a.reason;
}

// 8 SMs that all share the level (diagonal +480 cycles, noise sigma), the disruptors from SM
// `from` on `shift` cycles off the diagonal's rise (a far L2 half, say).
namespace {
sharing_analysis all_shared_shifted(int from, double shift, double sigma) {
  std::vector<int> all(8);
  for (int i = 0; i < 8; ++i)
    all[std::size_t(i)] = i;
  auto m = make_matrix(8, {all}, 400, 480, sigma);
  for (int i = 0; i < 8; ++i)
    for (int k = from; k < 8; ++k)
      if (k != i)
        m.cycles[std::size_t(i)][std::size_t(k)] += shift;
  return analyze_sharing(m);
}
} // namespace

// Every pair shares, but half the disruptors evict a little more than the others (x ~1.0 and
// ~1.13 of the diagonal's rise): two raised clusters are one verdict, global, not a split.
TEST(SharingGenerated, TwoRaisedClustersAreAllShared) {
  const auto a = all_shared_shifted(4, 60, 1.0);
  EXPECT_EQ(to_string(a.scope), "global") << a.reason;
  EXPECT_EQ(a.shared_pairs, 28) << a.reason;
}

// Every pair shares, most at the diagonal's rise and a quarter of the disruptors 5 % below it, in
// a tight cluster: one raised cluster, global, not the majority alone.
TEST(SharingGenerated, AMinorityEvictingALittleLessIsStillShared) {
  const auto a = all_shared_shifted(6, -24, 0.5);
  EXPECT_EQ(to_string(a.scope), "global") << a.reason;
  EXPECT_EQ(a.shared_pairs, 28) << a.reason;
}

// A victim's whole row drifts off its baseline over the round (up to 2 cycles on an H200); the
// cells within a row are tight. The drift is not noise: L1's +9.7-cycle diagonal stands out.
TEST(SharingGenerated, ARowsDriftOffItsBaselineIsNotNoise) {
  auto m = make_matrix(16, {}, 300, 9.7, 0.5, 11);
  for (int i = 0; i < 16; ++i)
    for (auto &v : m.cycles[i])
      v += (i % 5 - 2) * 1.0; // rows -2 .. +2 cycles off their baseline
  const auto a = analyze_sharing(m);
  EXPECT_EQ(to_string(a.scope), "private") << a.reason;
  EXPECT_LT(a.noise_cycles, 1.0) << a.reason;
}

// The recorded H200 matrix that called L1 inconclusive (positive control +9.7 over a pooled noise
// of 1.6): within its rows the noise is 0.7, and the level is private as every full run said.
TEST(SharingFixtures, H200QuickL1WithRowDriftIsPrivate) {
  const auto a = analyze_sharing(load_sharing_input(
      std::string(GPUPROBE_FIXTURES_DIR) + "/gpuprobe-results/sharing_L1_h200_drift.json"));
  EXPECT_EQ(to_string(a.scope), "private") << a.reason;
  EXPECT_NEAR(a.control_cycles, 9.65, 0.1);
  EXPECT_LT(a.noise_cycles, 1.0);
}

// A near-global matrix names its exceptions: 100 seeded matrices of 8-24 SMs where every pair
// shares but 1-3 random pairs, each lowered to x ~0.1 in one direction or both. The note counts
// them and names each (both directions' x), in id order; a matrix with no exception has no note.
TEST(SharingGenerated, TheFewPairsThatDoNotShareAreNamed) {
  std::mt19937 rng(48);
  for (int c = 0; c < 100; ++c) {
    const int n = 8 + int(rng() % 17);
    groups_t all(1);
    for (int i = 0; i < n; ++i)
      all[0].push_back(i);
    auto m = make_matrix(n, all, 400, 480, 2.0, unsigned(1000 + c));
    const int k = c % 4; // 0 (the control: no note) to 3 exceptions
    std::set<std::pair<int, int>> low;
    while (int(low.size()) < k) {
      const int a = int(rng() % unsigned(n)), b = int(rng() % unsigned(n));
      if (a != b)
        low.insert({std::min(a, b), std::max(a, b)});
    }
    for (const auto &[a, b] : low) {
      const int dir = int(rng() % 3); // a<-b, b<-a, or both
      if (dir != 1)
        m.cycles[std::size_t(a)][std::size_t(b)] -= 0.9 * 480;
      if (dir != 0)
        m.cycles[std::size_t(b)][std::size_t(a)] -= 0.9 * 480;
    }
    const auto r = analyze_sharing(m);
    SCOPED_TRACE("case " + std::to_string(c) + ", " + std::to_string(n) + " SMs: " + r.reason);
    EXPECT_EQ(r.shared_pairs, r.pairs - k);
    std::string note;
    for (const auto &s : r.notes)
      if (s.find("not shared, x") != std::string::npos)
        note = s;
    if (k == 0) {
      EXPECT_EQ(note, "");
      continue;
    }
    EXPECT_EQ(note.rfind(std::to_string(k) + " pair(s) not shared", 0), 0u) << note;
    std::size_t at = 0;
    for (const auto &[a, b] : low) { // each named, in id order, with its low direction's x
      const std::string named = std::to_string(a) + "<-" + std::to_string(b) + " ";
      const std::size_t where = note.find(named, at);
      ASSERT_NE(where, std::string::npos) << named << " in " << note;
      at = where + named.size();
    }
  }
}
