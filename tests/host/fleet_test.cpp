// gpuprobe fleet on generated unit folders: two models kept apart, an outlier planted in a copy of
// a unit, a unit whose characterize failed, and the one-line refusals (an empty folder, one GPU
// in two folders).
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "findings/compare.hpp"
#include "findings/fleet.hpp"
#include "report/report.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

namespace fs = std::filesystem;
using namespace gpuprobe;
using nlohmann::json;

namespace {

// A unit's profile.json as characterize writes it (the parts fleet reads).
json profile(const std::string &model, const std::string &uuid, double l2_penalty,
             const json &groups) {
  const double MiB = 1 << 20;
  return {{"schema", "gpuprobe.profile/1"},
          {"device", {{"name", model}, {"uuid", uuid}}},
          {"tlb",
           {{"levels",
             {{{"entries", 16},
               {"coverage_bytes", 16 * MiB},
               {"reach_bytes", 256 * MiB},
               {"miss_penalty_cycles", 11},
               {"sharing", {{"scope", "private"}}}},
              {{"entries", 2163},
               {"coverage_bytes", 32 * MiB},
               {"reach_bytes", 2163 * 32 * MiB},
               {"miss_penalty_cycles", l2_penalty},
               {"sharing", {{"scope", "groups"}, {"groups", groups}}}}}}}},
          {"atomics",
           {{"variants",
             {{{"variant", "same_u32"},
               {"fit", {{"model", "line"}, {"slope_cycles_per_thread", 0.69}}}}}}}}};
}

std::string unit(const std::string &root, const std::string &name, const json &p) {
  const fs::path d = fs::path(root) / name;
  fs::create_directories(d / "raw");
  write_json_atomic((d / "profile.json").string(), p);
  return d.string();
}

std::string fresh_fleet_dir(const std::string &name) {
  const auto root = test::temp_path(name);
  fs::remove_all(root);
  fs::create_directories(root);
  return root;
}

const json k_groups = {{0, 1, 44, 45}, {2, 3, 46, 47}};

} // namespace

TEST(Fleet, ModelsApartOutlierFlaggedFailedUnitListed) {
  const auto root = fresh_fleet_dir("fleet_models");
  // Four H200 units (one with a +152-cycle L2 miss and another SM map), one H100, at two depths.
  unit(root + "/node1", "h200-a", profile("NVIDIA H200", "GPU-aaaa", 96, k_groups));
  unit(root + "/node1", "h200-b", profile("NVIDIA H200", "GPU-bbbb", 97, k_groups));
  unit(root + "/node2/x", "h200-c", profile("NVIDIA H200", "GPU-cccc", 96, k_groups));
  unit(root + "/node2/x", "h200-d",
       profile("NVIDIA H200", "GPU-dddd", 152, json{{0, 1, 44, 45, 2, 3}, {46, 47}}));
  unit(root + "/node3", "h100-a", profile("NVIDIA H100 80GB HBM3", "GPU-1111", 94, k_groups));
  // A GPU whose characterize failed before writing a result: only its log.
  fs::create_directories(root + "/node3/h100-b");
  std::ofstream(root + "/node3/h100-b/characterize.log")
      << "gpuprobe characterize: NVIDIA H100 80GB HBM3 (GPU-2222) -> x\n"
         "[1/6+] tlb running\n"
         "gpuprobe: error: stage tlb failed (cd x && gpuprobe tlb)\n";
  const auto units = findings::find_units({root});
  ASSERT_EQ(units.size(), 6u);
  const json f = model::to_json(findings::merge_fleet(units));
  EXPECT_EQ(f["schema"], gpuprobe::schema::fleet.id());
  ASSERT_EQ(f["models"].size(), 2u);
  const json &h200 = f["models"]["NVIDIA H200"];
  EXPECT_EQ(h200["complete"], 4);
  const json &pen = h200["parameters"]["L2.penalty_cycles"];
  EXPECT_DOUBLE_EQ(pen["median"].get<double>(), 96.5);
  ASSERT_EQ(pen["outliers"].size(), 1u) << pen.dump();
  EXPECT_EQ(pen["outliers"][0]["uuid"], "GPU-dddd");
  EXPECT_NE(pen["outliers"][0]["why"].get<std::string>().find("L2.penalty_cycles = 152"),
            std::string::npos);
  EXPECT_TRUE(h200["parameters"]["L2.entries"]["outliers"].empty()) << "equal entries";
  std::string diffs = h200["differences"].dump();
  EXPECT_NE(diffs.find("L2.group_map differs"), std::string::npos) << diffs;
  EXPECT_NE(diffs.find("L2.group_sizes differs"), std::string::npos) << diffs;
  const json &h100 = f["models"]["NVIDIA H100 80GB HBM3"];
  EXPECT_EQ(h100["units"].size(), 2u);
  EXPECT_EQ(h100["complete"], 1);
  bool failed_listed = false;
  for (const auto &u : h100["units"])
    if (u["uuid"] == "GPU-2222") {
      failed_listed = true;
      EXPECT_EQ(
          u["status"].get<std::string>().rfind("failed: gpuprobe: error: stage tlb failed", 0), 0u)
          << u["status"];
    }
  EXPECT_TRUE(failed_listed);
}

// An unfinished characterize (raw/ results, no profile.json) is a unit, incomplete, with the
// stages it has; it takes no part in the medians.
TEST(Fleet, UnfinishedUnitIsIncompleteWithItsStages) {
  const auto root = fresh_fleet_dir("fleet_unfinished");
  unit(root, "a", profile("NVIDIA H200", "GPU-aaaa", 96, k_groups));
  fs::create_directories(root + "/b/raw");
  write_json_atomic(root + "/b/raw/tlb.json",
                    {{"schema", "gpuprobe.result/1"},
                     {"probe", "tlb"},
                     {"device", {{"name", "NVIDIA H200"}, {"uuid", "GPU-bbbb"}}}});
  const auto units = findings::find_units({root});
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[1].status.rfind("incomplete: no profile.json (raw/ has tlb)", 0), 0u)
      << units[1].status;
  const json f = model::to_json(findings::merge_fleet(units));
  EXPECT_EQ(f["models"]["NVIDIA H200"]["complete"], 1);
  EXPECT_EQ(f["models"]["NVIDIA H200"]["parameters"]["L2.entries"]["n"], 1);
}

TEST(Fleet, BadInputIsAOneLineError) {
  const auto empty = fresh_fleet_dir("fleet_empty");
  auto msg = [](const std::vector<std::string> &in) {
    try {
      findings::find_units(in);
    } catch (const error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg({empty}).find("no unit folder"), std::string::npos) << msg({empty});
  EXPECT_NE(msg({empty + "/nope"}).find("is not a folder"), std::string::npos);
  const auto twice = fresh_fleet_dir("fleet_twice");
  unit(twice, "run1", profile("NVIDIA H200", "GPU-aaaa", 96, k_groups));
  unit(twice, "run2", profile("NVIDIA H200", "GPU-aaaa", 96, k_groups));
  const auto m = msg({twice});
  EXPECT_NE(m.find("GPU-aaaa is in two folders"), std::string::npos) << m;
  EXPECT_NE(m.find("give one folder per GPU"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
  // Through the binary: exit 1, one line, nothing written.
  const auto out = fresh_fleet_dir("fleet_out");
  const auto r = test::run_gpuprobe("fleet --input " + twice + " --out " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("two folders"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out + "/fleet.json"));
}

// Any results tree: a folder that is not a unit (gpuprobe-bench results without a
// GPU's UUID, an empty raw/, a broken profile) is listed under "not units" with its reason and
// the fleet is built from the rest; the committed examples, peers included, make a fleet.
TEST(Fleet, AnyResultsTreeListsWhatIsNotAUnit) {
  const auto root = fresh_fleet_dir("fleet_any_tree");
  unit(root, "node1/gpu0", profile("NVIDIA H200", "GPU-aaaa", 96, k_groups));
  fs::create_directories(root + "/node1/empty/raw");
  fs::create_directories(root + "/bench/unit");
  std::ofstream(root + "/bench/unit/profile.json") << "{}";
  std::vector<std::string> not_units;
  const auto units = findings::find_units({root}, &not_units);
  ASSERT_EQ(units.size(), 1u);
  ASSERT_EQ(not_units.size(), 2u);
  std::string all;
  for (const auto &n : not_units)
    all += n + "\n";
  EXPECT_NE(all.find(root + "/node1/empty: raw/ holds no gpuprobe result"), std::string::npos)
      << all;
  EXPECT_NE(all.find(root + "/bench/unit: "), std::string::npos) << all;
  EXPECT_NE(all.find("schema"), std::string::npos) << all;
  // Nothing but non-units: one line.
  const auto none = fresh_fleet_dir("fleet_no_unit");
  fs::create_directories(none + "/a/raw");
  EXPECT_THROW(findings::find_units({none}, &not_units), error);
  // The committed units (the examples, the fixtures' runs and fleet units) and the peer harness'
  // folders, which have no UUID and are listed; the rest is a fleet, and the command is done with
  // something left out: exit 3, as report's.
  const std::string src = GPUPROBE_SOURCE_DIR;
  const auto out = fresh_fleet_dir("fleet_examples_out");
  const auto r = test::run_gpuprobe("fleet --input " + src + "/reports/examples/runs --input " +
                                    src + "/tests/fixtures/runs --input " + src +
                                    "/tests/fixtures/fleet/units --input " + src +
                                    "/tests/fixtures/peers --out " + out);
  ASSERT_EQ(r.exit_code, 3) << r.err;
  // Failed or incomplete: a fleet unit that failed, and the fixture that keeps only an H200's
  // sweeps (raw/ without a profile).
  EXPECT_NE(r.err.find("4 folder(s) not units, 2 unit(s) failed or incomplete"), std::string::npos)
      << r.err;
  const json f = read_json_file(out + "/fleet.json");
  ASSERT_EQ(f["not_units"].size(), 4u) << f["not_units"].dump();
  const std::string listed = f["not_units"].dump();
  for (const char *peers : {"nvidia-h100-80gb-hbm3-f7c5e047", "nvidia-h100-80gb-hbm3-9ee96e87",
                            "nvidia-h100-80gb-hbm3-4748ab49", "nvidia-h200-40528cae"})
    EXPECT_NE(listed.find(std::string("peers/") + peers + ": does not record its GPU's UUID"),
              std::string::npos)
        << peers << " in " << listed;
  EXPECT_GE(f["units"].size(), 8u);
  EXPECT_NE(r.out.find("## Not units"), std::string::npos);
}

// The command writes fleet.json and fleet.md and prints the table.
TEST(Fleet, CommandWritesTheTable) {
  const auto root = fresh_fleet_dir("fleet_cmd");
  unit(root, "a", profile("NVIDIA H200", "GPU-aaaa", 96, k_groups));
  unit(root, "b", profile("NVIDIA H200", "GPU-bbbb", 97, k_groups));
  const auto out = fresh_fleet_dir("fleet_cmd_out");
  const auto r = test::run_gpuprobe("fleet --input " + root + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find("| GPU-aaaa | 16 x 16 MiB, +11, private | 2163 x 32 MiB, +96, 2 groups (2 x 4)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fewer than 3 complete units"), std::string::npos);
  EXPECT_EQ(read_json_file(out + "/fleet.json")["units"].size(), 2u);
  EXPECT_TRUE(fs::exists(out + "/fleet.md"));
}

// `gpuprobe report` on a fleet folder: a table per model, the spread figures, the SM -> group
// maps side by side (a row per unit), and none of a unit's parts listed as missing.
TEST(Fleet, ReportRendersAFleetFolder) {
  const auto root = fresh_fleet_dir("fleet_report_units");
  unit(root, "a", profile("NVIDIA H200", "GPU-aaaa", 96, k_groups));
  unit(root, "b", profile("NVIDIA H200", "GPU-bbbb", 97, json{{0, 1, 44, 45, 2, 3}, {46, 47}}));
  const auto out = fresh_fleet_dir("fleet_report");
  write_json_atomic(out + "/fleet.json",
                    model::to_json(findings::merge_fleet(findings::find_units({root}))));
  const auto c = report::build_report(out);
  // Provenance (a row a unit), the model's units, its outliers and differences (a row each).
  ASSERT_EQ(c.tables.size(), 3u);
  EXPECT_EQ(c.tables[0].title, "Fleet: provenance of each unit");
  ASSERT_EQ(c.tables[0].rows.size(), 2u);
  EXPECT_EQ(c.tables[0].rows[0][0], "GPU-aaaa");
  EXPECT_EQ(c.tables[1].title, "Fleet: NVIDIA H200 (2 units)");
  EXPECT_EQ(c.tables[2].title, "Fleet: NVIDIA H200, outliers and differences");
  bool differs = false;
  for (const auto &row : c.tables[2].rows)
    differs |= row.back().find("L2.group_map differs") != std::string::npos;
  EXPECT_TRUE(differs);
  EXPECT_NE(c.provenance.find("Fleet of 2 units of 1 model(s)"), std::string::npos) << c.provenance;
  EXPECT_TRUE(c.missing.empty());
  bool groups = false, spread = false;
  for (const auto &f : c.figures) {
    if (f.id == "fleet_groups_L2") {
      groups = true;
      EXPECT_EQ(f.kind, "groupmap");
      EXPECT_NE(f.csv.find("\"aaaa NVIDIA H200\",0,0,1,1,-1"), std::string::npos) << f.csv;
      EXPECT_NE(f.csv.find("\"bbbb NVIDIA H200\",0,0,0,0,-1"), std::string::npos) << f.csv;
    }
    if (f.id == "fleet_L2_penalty_cycles") { // a point a unit, named by its UUID's first digits
      spread = true;
      EXPECT_EQ(f.kind, "spread");
      EXPECT_NE(f.csv.find("\"NVIDIA H200\",\"aaaa\",96"), std::string::npos) << f.csv;
      EXPECT_EQ(f.ylabel, "L2 miss penalty (cycles)");
    }
  }
  EXPECT_TRUE(groups);
  EXPECT_TRUE(spread);
}

// The fleet's outlier rule and compare use one bar for a miss penalty. Over 400
// seeded fleets of one model (4-9 units whose L1-sized penalties, 8-12 cycles, agree to a few
// hundredths of a cycle, one unit moved by up to 2 cycles), a penalty outlier is flagged exactly
// where the robust score passes the limit and the unit's distance from the median passes compare's
// bar: a 0.3-cycle L1 difference is no outlier however small the others' spread, a 1.5-cycle one
// is.
TEST(Fleet, APenaltyOutlierIsOneCompareWouldCallDifferent) {
  std::mt19937_64 rng(4705);
  std::uniform_real_distribution<double> u01(0, 1);
  int flagged = 0, spared = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 4 + int(rng() % 6);
    const double base = std::vector<double>{8, 10, 12}[rng() % 3]; // L1-sized: the floor is small
    std::vector<model::fleet_unit> units(static_cast<std::size_t>(n));
    std::vector<double> xs;
    for (int i = 0; i < n; ++i) {
      auto &u = units[std::size_t(i)];
      u.model = "GPU model";
      u.uuid = "GPU-" + std::to_string(i);
      u.status = "complete";
      double x = base + 0.05 * (u01(rng) - 0.5);
      if (i == 0)
        x += (u01(rng) < 0.5 ? -1 : 1) * 2 * u01(rng);
      u.numbers["L1.penalty_cycles"] = x;
      xs.push_back(x);
    }
    const auto f = findings::merge_fleet(units);
    const auto &p = f.models.at("GPU model").parameters.at("L1.penalty_cycles");
    const auto sp = findings::spread_of(xs, findings::fleet_rule{});
    for (int i = 0; i < n; ++i) {
      const double x = xs[std::size_t(i)];
      const bool want = sp.score(x) > findings::fleet_rule{}.limit &&
                        std::fabs(x - sp.median) > analysis::penalty_bar(x, sp.median);
      const bool got = std::any_of(p.outliers.begin(), p.outliers.end(), [&](const auto &o) {
        return o.uuid == "GPU-" + std::to_string(i);
      });
      EXPECT_EQ(got, want) << "trial " << trial << " unit " << i << " x " << x << " median "
                           << sp.median;
      flagged += got;
      spared += !got && sp.score(x) > findings::fleet_rule{}.limit;
    }
  }
  std::printf("penalty outliers: %d flagged; %d past the spread but within compare's bar, spared\n",
              flagged, spared);
  EXPECT_GT(flagged, 100);
  EXPECT_GE(spared, 10) << "the family must hold differences the old rule flagged";
}

// A unit analysed by another commit than most of its model differs by the method
// as much as by the hardware (the fleet example's H100: L2 2163 at the ramp's middle against 2048);
// over 200 seeded fleets (5-8 units, one moved unit, one unit of another analysis commit, the same
// or another), the moved unit is an outlier exactly where its commit is the majority's, and
// otherwise a "method difference" line of the model's differences.
TEST(Fleet, AUnitOfAnotherAnalysisIsAMethodDifferenceNotAnOutlier) {
  std::mt19937_64 rng(4706);
  int outliers = 0, method = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 5 + int(rng() % 4);
    const int moved = int(rng() % std::uint64_t(n)), other = int(rng() % std::uint64_t(n));
    std::vector<model::fleet_unit> units(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      auto &u = units[std::size_t(i)];
      u.model = "GPU model";
      u.uuid = "GPU-" + std::to_string(i);
      u.status = "complete";
      u.numbers["L2.entries"] = i == moved ? 2163 : 2048;
      u.text["analysis_commit"] = i == other ? "0ld0ld0ld0ld" : "new1new1new1";
    }
    const auto f = findings::merge_fleet(units);
    const auto &fm = f.models.at("GPU model");
    const auto &p = fm.parameters.at("L2.entries");
    const std::string id = "GPU-" + std::to_string(moved);
    const bool flagged = std::any_of(p.outliers.begin(), p.outliers.end(),
                                     [&](const auto &o) { return o.uuid == id; });
    const bool noted =
        std::any_of(fm.differences.begin(), fm.differences.end(), [&](const auto &d) {
          return d.rfind("L2.entries: " + id + " 2163", 0) == 0 &&
                 d.find("a method difference") != std::string::npos;
        });
    EXPECT_EQ(flagged, moved != other) << "trial " << trial;
    EXPECT_EQ(noted, moved == other) << "trial " << trial;
    outliers += flagged;
    method += noted;
  }
  std::printf("moved units: %d outliers (the majority's analysis), %d method differences\n",
              outliers, method);
  EXPECT_GT(outliers, 100);
  EXPECT_GT(method, 10);
}
