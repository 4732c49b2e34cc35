// The per-SM pass (tlb-per-sm) on seeded, generated families: its plan for any
// hierarchy, the profile's per-SM view of a measured result (each SM's hit and penalty recovered,
// the SMs apart named and no other), the reader's refusals, and compare naming where two maps
// differ.
#include "common/json_io.hpp"
#include "common/results_folder.hpp"
#include "findings/compare.hpp"
#include "model/fields.hpp"
#include "model/result_levels.hpp"
#include "probes/level_target.hpp"
#include "probes/per_sm/driver.hpp"
#include "probes/per_sm/probe.hpp"
#include "probes/tlb/levels.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>

namespace {

namespace fs = std::filesystem;
using gpuprobe::model::tlb_hierarchy;
using gpuprobe::model::tlb_level;
using gpuprobe::probes::per_sm_options;
using nlohmann::json;

tlb_hierarchy random_hierarchy(std::mt19937 &rng) {
  std::uniform_real_distribution<double> u(0, 1);
  tlb_hierarchy h;
  double page = double(1 << 21) * double(1 << int(u(rng) * 4));
  const int n = 1 + int(u(rng) * 4);
  for (int k = 0; k < n; ++k) {
    tlb_level L;
    L.entries = std::round(2 + u(rng) * 6000);
    L.coverage_bytes = page;
    L.reach_bytes = page * *L.entries;
    if (u(rng) < 0.5)
      L.full_miss_bytes = L.reach_bytes * (1 + u(rng) * 0.3);
    L.miss_penalty_cycles = 5 + u(rng) * 500;
    h.levels.push_back(L);
    page *= double(1 << int(u(rng) * 3));
  }
  return h;
}

TEST(PerSm, ThePlanWalksBelowEachLevelAndPastItsEndOverGeneratedHierarchies) {
  std::mt19937 rng(47);
  int measured = 0, skipped = 0;
  for (int c = 0; c < 300; ++c) {
    const auto h = random_hierarchy(rng);
    per_sm_options o;
    o.range_bytes = (64ull + rng() % 512) << 30;
    const auto t = gpuprobe::probes::plan_per_sm(h, o);
    ASSERT_EQ(t.size(), h.levels.size());
    for (std::size_t k = 0; k < t.size(); ++k) {
      const auto &L = h.levels[k];
      const double full =
          std::max(*L.entries + 1, L.full_miss_bytes.value_or(0) / L.coverage_bytes);
      if (!t[k].skipped.empty()) {
        ++skipped;
        EXPECT_GT(std::ceil(o.above * full) * L.coverage_bytes, double(o.range_bytes)) << c;
        EXPECT_NE(t[k].skipped.find("range"), std::string::npos) << t[k].skipped;
        continue;
      }
      ++measured;
      EXPECT_GE(t[k].below_pages, 2u);
      EXPECT_LE(double(t[k].below_pages), *L.entries) << "the level holds the walk below";
      EXPECT_GT(double(t[k].above_pages), full) << "every hop of the walk above misses";
      EXPECT_LE(double(t[k].bytes()), double(o.range_bytes));
      EXPECT_GE(t[k].below_pages * t[k].laps_below, o.min_hops);
      EXPECT_GE(t[k].above_pages * t[k].laps_above, o.min_hops);
    }
  }
  EXPECT_GT(measured, 100);
  EXPECT_GT(skipped, 20);
}

// A measured result over a committed H100 profile's levels: SM i's hit and penalty drawn around
// the level's, each rep with noise of `rep_sigma`; `bump` added to one SM's miss walks of one
// level (-1: none).
struct generated {
  gpuprobe::probes::per_sm_result r;
  std::vector<std::vector<double>> hit, pen; // [level][SM]: the truth
};
generated make_result(const tlb_hierarchy &h, std::mt19937 &rng, int bump_level, int bump_sm,
                      double bump, double rep_sigma) {
  generated g;
  per_sm_options o;
  const auto targets = gpuprobe::probes::plan_per_sm(h, o);
  std::normal_distribution<double> sm_spread(0, 1.0), rep(0, rep_sigma);
  g.r.reps = 2;
  g.r.device = {{"name", "NVIDIA H100 80GB HBM3"}, {"uuid", "GPU-1"}};
  for (std::size_t k = 0; k < targets.size(); ++k) {
    gpuprobe::probes::per_sm_level_result l;
    l.target = targets[k];
    std::vector<double> hit, pen;
    for (int sm = 0; sm < 132; ++sm) {
      l.sms.push_back(sm);
      hit.push_back(280 + 10 * double(k) + 3 * sm_spread(rng));
      pen.push_back(h.levels[k].miss_penalty_cycles.value_or(10) + 0.2 * sm_spread(rng));
    }
    if (int(k) == bump_level)
      pen[std::size_t(bump_sm)] += bump;
    for (int r = 0; r < 2; ++r) {
      std::vector<double> b, a;
      for (std::size_t i = 0; i < hit.size(); ++i) {
        b.push_back(hit[i] + rep(rng));
        a.push_back(hit[i] + pen[i] + rep(rng));
      }
      l.below.push_back(b);
      l.above.push_back(a);
    }
    g.r.levels.push_back(l);
    g.hit.push_back(hit);
    g.pen.push_back(pen);
  }
  return g;
}

gpuprobe::model::profile committed_h100() {
  return gpuprobe::model::read_profile(
      gpuprobe::test::committed_run("nvidia-h100-80gb-hbm3-bba9cd54") + "/profile.json");
}

// The profile after the probe's part (profile.cpp) read `r` from a scratch folder's raw/.
gpuprobe::model::profile contributed(const gpuprobe::probes::per_sm_result &r) {
  // This process's own scratch: the tests run in parallel, each in a process of its own.
  const gpuprobe::results_folder f{gpuprobe::test::temp_path("per-sm-test")};
  fs::remove_all(f.dir);
  fs::create_directories(f.raw());
  gpuprobe::write_json_atomic(f.raw(gpuprobe::results_folder::raw_file::tlb_per_sm).string(),
                              to_json(r));
  auto p = committed_h100();
  gpuprobe::probes::per_sm::contribute(f, p);
  fs::remove_all(f.dir);
  return p;
}

TEST(PerSm, TheProfileHoldsEachSmsPenaltyAndNamesOnlyTheSmsApart) {
  const auto base = committed_h100();
  ASSERT_EQ(base.tlb.levels.size(), 3u);
  std::mt19937 rng(3);
  int bumped = 0, found = 0, false_apart = 0, levels_seen = 0;
  for (int c = 0; c < 60; ++c) {
    const int bump_level = c % 2 ? int(rng() % 3) : -1, bump_sm = int(rng() % 132);
    const double pen =
        base.tlb.levels[std::size_t(std::max(0, bump_level))].miss_penalty_cycles.value_or(10);
    // Past the bar: 1 % of the penalty and 0.5 cycles, 4 x the noise, 5 robust sigmas.
    const double bump = std::max(2.5, 0.03 * pen);
    const auto g = make_result(base.tlb, rng, bump_level, bump_sm, bump, 0.1);
    const auto p = contributed(g.r);
    for (std::size_t k = 0; k < 3; ++k) {
      const auto &L = p.tlb.levels[k];
      ASSERT_TRUE(L.per_sm) << "level " << k << " of case " << c;
      const auto &s = *L.per_sm;
      ASSERT_EQ(s.sms.size(), 132u);
      ++levels_seen;
      for (std::size_t i = 0; i < 132; ++i) {
        EXPECT_NEAR(s.hit_cycles[i], g.hit[k][i], 0.5);
        EXPECT_NEAR(s.penalty_cycles[i], g.pen[k][i], 0.7);
      }
      ASSERT_TRUE(s.noise_cycles);
      EXPECT_LT(*s.noise_cycles, 0.5);
      ASSERT_TRUE(s.apart_sms);
      const std::set<int> apart(s.apart_sms->begin(), s.apart_sms->end());
      if (int(k) == bump_level) {
        ++bumped;
        found += apart.count(bump_sm) ? 1 : 0;
      }
      for (int sm : apart)
        false_apart += !(int(k) == bump_level && sm == bump_sm);
      EXPECT_EQ(s.detail["source"], "raw/tlb_per_sm.json");
    }
    // What the profile writes it reads back the same.
    const json j = to_json(p);
    EXPECT_EQ(to_json(gpuprobe::model::profile_from_json(j, "generated")), j);
  }
  EXPECT_EQ(found, bumped) << "every SM moved past the bar is named";
  EXPECT_EQ(false_apart, 0) << "no other SM of " << levels_seen * 132;
  EXPECT_GT(bumped, 20);
}

TEST(PerSm, AMalformedPerSmBlockIsRefusedInOneLine) {
  const json good = {{"sms", {0, 1, 2}},
                     {"hit_cycles", {1.0, 2.0, 3.0}},
                     {"penalty_cycles", {9.0, 9.5, 10.0}},
                     {"noise_cycles", 0.1},
                     {"apart_sms", json::array()}};
  EXPECT_NO_THROW(gpuprobe::model::level_per_sm_from_json(good));
  EXPECT_EQ(gpuprobe::model::to_json(gpuprobe::model::level_per_sm_from_json(good)), good);
  std::mt19937 rng(11);
  int refused = 0;
  for (int c = 0; c < 200; ++c) {
    json bad = good;
    switch (c % 5) {
    case 0:
      bad["hit_cycles"].erase(rng() % 3);
      break;
    case 1:
      bad["sms"][rng() % 3] = int(gpuprobe::model::k_max_sm_count + int(rng() % 100));
      break;
    case 2:
      bad["sms"][rng() % 3] = -1 - int(rng() % 10);
      break;
    case 3:
      bad["noise_cycles"] = -1.0 - double(rng() % 10);
      break;
    default:
      bad["apart_sms"] = {int(gpuprobe::model::k_max_sm_count + 1)};
    }
    try {
      gpuprobe::model::level_per_sm_from_json(bad);
    } catch (const gpuprobe::model::impossible_value &e) {
      ++refused;
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
  EXPECT_EQ(refused, 200);
}

TEST(PerSm, CompareNamesTheSmsWhereTwoMapsDiffer) {
  const auto base = committed_h100();
  std::mt19937 rng(5);
  int same_pairs = 0, caught = 0, cases = 0;
  for (int c = 0; c < 40; ++c) {
    const int bump_sm = int(rng() % 132), bump_level = int(rng() % 3);
    const double pen = base.tlb.levels[std::size_t(bump_level)].miss_penalty_cycles.value_or(10);
    const auto ga = make_result(base.tlb, rng, -1, 0, 0, 0.1);
    // B: A's SMs again, each value moved by run-to-run noise of the size of the rep noise.
    auto gb = ga;
    std::normal_distribution<double> noise(0, 0.1);
    for (auto &l : gb.r.levels)
      for (auto *reps : {&l.below, &l.above})
        for (auto &rep : *reps)
          for (auto &x : rep)
            x += noise(rng);
    gpuprobe::model::run_folder a, b;
    a.prof = contributed(ga.r);
    b.prof = contributed(gb.r);
    a.prof.device["uuid"] = b.prof.device["uuid"] = "GPU-1";
    const auto same = gpuprobe::findings::compare_runs(a, b);
    int per_sm = 0;
    for (const auto &f : same.findings)
      if (f.area == "per-SM") {
        ++per_sm;
        same_pairs += f.verdict == "SAME";
      }
    EXPECT_EQ(per_sm, 6) << "hit and penalty for each of 3 levels";
    // One SM's penalty 5 % dearer in B, and at least 2 cycles: one SM's value holds the noise
    // of its own two rounds only, so the bar is 4 x that (about 1 cycle here), not 1 %.
    const double bump = std::max(0.05 * pen, 2.0);
    for (auto &rep : gb.r.levels[std::size_t(bump_level)].above)
      rep[std::size_t(bump_sm)] += bump;
    b.prof = contributed(gb.r);
    const auto moved = gpuprobe::findings::compare_runs(a, b);
    ++cases;
    for (const auto &f : moved.findings) {
      if (f.area != "per-SM")
        continue;
      const bool here = f.item == gpuprobe::model::level_label(false, std::size_t(bump_level)) +
                                      " per-SM miss penalty";
      if (here) {
        EXPECT_EQ(f.verdict, "DIFFERENT") << f.why;
        EXPECT_NE(f.why.find("SM " + std::to_string(bump_sm) + " +"), std::string::npos) << f.why;
        caught += f.verdict == "DIFFERENT";
      } else {
        EXPECT_EQ(f.verdict, "SAME") << f.item << ": " << f.why;
      }
    }
  }
  EXPECT_EQ(same_pairs, 40 * 6) << "no per-SM finding differs between runs that differ by noise";
  EXPECT_EQ(caught, cases);
  // One run by a build before the pass: a NOTE, not a difference (the method's).
  gpuprobe::model::run_folder a, b;
  a.prof = contributed(make_result(base.tlb, rng, -1, 0, 0, 0.1).r);
  b.prof = committed_h100();
  b.prof.meta["git_commit"] = "a build before the tlb-per-sm stage";
  const auto one = gpuprobe::findings::compare_runs(a, b);
  int notes = 0;
  for (const auto &f : one.findings)
    if (f.area == "per-SM") {
      EXPECT_EQ(f.verdict, "NOTE");
      ++notes;
    }
  EXPECT_EQ(notes, 3);
  // The same build and mode, one run without the maps: missing data, which a gate counts.
  b.prof = committed_h100();
  int missing = 0;
  for (const auto &f : gpuprobe::findings::compare_runs(a, b).findings)
    if (f.area == "per-SM")
      missing += f.verdict == "MISSING";
  EXPECT_EQ(missing, 3);
}

} // namespace

namespace {

// Every committed stage result with a "levels" list reads into rows with the keys that match
// them to a level; a mistyped key is refused naming it, in one line (seeded mutations).
TEST(ResultLevels, RowsAreReadTypedAndMistypedKeysRefused) {
  std::mt19937 rng(46);
  int files = 0, rows = 0, refused = 0;
  for (const auto &unit : gpuprobe::test::committed_run_folders())
    for (const char *stage : {"tlb_conflict", "tlb_coverage", "tlb_per_sm"}) {
      const auto path = unit / "raw" / (std::string(stage) + ".json");
      if (!fs::exists(path))
        continue;
      const json doc = gpuprobe::read_json_file(path.string());
      const auto got = gpuprobe::model::result_levels(doc, stage);
      ++files;
      ASSERT_EQ(got.size(), doc[stage]["levels"].size()) << path;
      for (std::size_t i = 0; i < got.size(); ++i) {
        ++rows;
        EXPECT_EQ(got[i].id.label, doc[stage]["levels"][i]["level"]);
        EXPECT_EQ(got[i].id.coverage_bytes,
                  doc[stage]["levels"][i]["coverage_bytes"].get<double>());
        EXPECT_EQ(got[i].row, doc[stage]["levels"][i]);
      }
      for (int m = 0; m < 20; ++m) {
        json bad = doc;
        auto &row = bad[stage]["levels"][rng() % bad[stage]["levels"].size()];
        const char *key = std::array{"level", "coverage_bytes", "entries"}[rng() % 3];
        row[key] = std::string(key) == "level" ? json(7) : json("many");
        try {
          gpuprobe::model::result_levels(bad, stage);
        } catch (const gpuprobe::error &e) {
          ++refused;
          EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
          EXPECT_NE(std::string(e.what()).find(std::string("\"") + key + "\""), std::string::npos)
              << e.what();
        }
      }
    }
  EXPECT_GE(files, 6);
  EXPECT_GE(rows, 15);
  EXPECT_EQ(refused, files * 20);
}

// A stage's rows reach the profile's levels by their id alone (model::level_id): on seeded profiles
// and result files whose rows name a level with its geometry, or with one a little off, or another
// label, for_each_matched_level hands each level exactly the rows of its label, page and entries
// (within half an entry), once each.
TEST(ResultLevels, RowsReachTheLevelTheirIdNames) {
  std::mt19937 rng(79);
  const fs::path dir = fs::temp_directory_path() / "gpuprobe_level_id_test";
  for (int c = 0; c < 100; ++c) {
    fs::remove_all(dir);
    fs::create_directories(dir / "raw");
    tlb_hierarchy tlb;
    const int levels = 1 + int(rng() % 4);
    for (int k = 0; k < levels; ++k) {
      tlb_level L;
      L.coverage_bytes = double(1ull << (12 + rng() % 14));
      L.entries = double(16 << (rng() % 8)) + (rng() % 2 ? 0.25 : 0.0);
      tlb.levels.push_back(L);
    }
    json rows = json::array();
    std::vector<int> expected(levels, 0);
    for (int r = 0, n = int(rng() % 8); r < n; ++r) {
      const int k = int(rng() % levels);
      const auto &L = tlb.levels[k];
      double page = L.coverage_bytes, entries = *L.entries;
      std::string label = gpuprobe::model::level_label(false, k);
      const auto kind = rng() % 5;
      switch (kind) {
      case 0:
        page *= 2;
        break; // another page: no level's
      case 1:
        entries += 0.5 + double(rng() % 100) / 10.0;
        break; // half an entry or more off
      case 2:
        entries += double(rng() % 49) / 100.0;
        break; // under half an entry: this level's
      case 3:
        label = gpuprobe::model::level_label(false, levels + int(rng() % 3));
        break;
      default:
        break;
      }
      expected[k] += kind == 2 || kind == 4; // by how the row was made, not by the rule

      rows.push_back({{"level", label}, {"coverage_bytes", page}, {"entries", entries}, {"n", r}});
    }
    json doc = {{"schema", "gpuprobe.result/1"},
                {"probe", "tlb-per-sm"},
                {"tlb_per_sm", {{"levels", rows}}}};
    gpuprobe::write_json_atomic((dir / "raw" / "stage.json").string(), doc);
    std::vector<int> got(levels, 0);
    std::set<int> seen;
    gpuprobe::probes::for_each_matched_level(gpuprobe::results_folder{dir}, "stage.json",
                                             "tlb_per_sm", tlb, [&](tlb_level &L, const json &row) {
                                               got[&L - tlb.levels.data()]++;
                                               EXPECT_TRUE(seen.insert(row["n"].get<int>()).second)
                                                   << "a row handed twice";
                                             });
    EXPECT_EQ(got, expected) << "case " << c;
  }
  fs::remove_all(dir);
}

} // namespace

// A level's penalty is stated against its spread over SMs. Over generated maps
// the words name the median, the least and the greatest SM penalty with their SMs, and the SM the
// headline was measured on with its own value; without a per-SM map they say nothing.
TEST(PerSm, APenaltyIsStatedAgainstItsSpreadOverSms) {
  std::mt19937 rng(77);
  for (int c = 0; c < 200; ++c) {
    tlb_level L;
    L.coverage_bytes = 32 << 20;
    L.reach_bytes = 64.0 * (1ull << 30);
    gpuprobe::model::level_per_sm m;
    const int n = 1 + int(rng() % 144);
    for (int i = 0; i < n; ++i) {
      m.sms.push_back(2 * i + int(rng() % 2));
      m.penalty_cycles.push_back(double(50 + rng() % 200));
      m.hit_cycles.push_back(300);
    }
    const auto lo = std::min_element(m.penalty_cycles.begin(), m.penalty_cycles.end());
    const auto hi = std::max_element(m.penalty_cycles.begin(), m.penalty_cycles.end());
    const int head = int(rng() % std::size_t(n));
    EXPECT_EQ(gpuprobe::probes::penalty_spread_words(L), "") << "no per-SM map, no words";
    L.per_sm = m;
    L.detail["measured_on_sm"] = m.sms[std::size_t(head)];
    const std::string w = gpuprobe::probes::penalty_spread_words(L);
    char want[200];
    std::snprintf(want, sizeof want, "over %d SMs median ", n);
    EXPECT_EQ(w.rfind(want, 0), 0u) << w;
    std::snprintf(want, sizeof want,
                  ", %.1f (SM %d) to %.1f (SM %d); the headline is SM %d's (%.1f", *lo,
                  m.sms[std::size_t(lo - m.penalty_cycles.begin())], *hi,
                  m.sms[std::size_t(hi - m.penalty_cycles.begin())], m.sms[std::size_t(head)],
                  m.penalty_cycles[std::size_t(head)]);
    EXPECT_NE(w.find(want), std::string::npos) << w << " lacks " << want;
    L.detail["measured_on_sm"] = 1000; // no SM has that id here
    EXPECT_NE(gpuprobe::probes::penalty_spread_words(L).find("the headline's SM 1000 is not among "
                                                             "them"),
              std::string::npos);
    L.detail.erase("measured_on_sm");
    EXPECT_NE(gpuprobe::probes::penalty_spread_words(L).find("the headline's SM not recorded"),
              std::string::npos);
  }
}

// The sweep records the SM it ran on, and every level of its profile carries it.
TEST(PerSm, EveryLevelOfACommittedSweepNamesTheSmItWasMeasuredOn) {
  const auto d = gpuprobe::probes::load_tlb_inputs(
      std::vector<std::string>{std::string(GPUPROBE_SOURCE_DIR) +
                               "/tests/fixtures/runs/nvidia-h100-80gb-hbm3-5dc71e3e/raw/tlb.json"});
  ASSERT_GE(d.sm, 0);
  const auto h = gpuprobe::probes::analyze_tlb(d);
  ASSERT_FALSE(h.levels.empty());
  for (const auto &L : h.levels)
    EXPECT_EQ(L.detail.value("measured_on_sm", -1), d.sm);
}
