// characterize's host logic: the default folder name, the stage plan (full and quick, sharing per
// level or for the largest candidate), resume detection, and the profile assembled from the
// stages' files.
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "findings/characterize.hpp"
#include "pipeline/stage_plan.hpp"
#include "probes/atomics/driver.hpp"
#include "probes/tlb/cross_check.hpp"
#include "test_util.hpp"

#include "common/results_folder.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

namespace fs = std::filesystem;
using namespace gpuprobe::findings;
using namespace gpuprobe::probes; // the cross-check (probes/tlb/cross_check.hpp)
using namespace gpuprobe::pipeline;
using gpuprobe::test::tlb_of;
using nlohmann::json;

TEST(Characterize, DefaultFolderIsNameSlugAndUuidPrefix) {
  EXPECT_EQ(default_results_dir("NVIDIA H100 80GB HBM3", "GPU-df40c491-aaaa-bbbb"),
            "results/nvidia-h100-80gb-hbm3-df40c491");
  EXPECT_EQ(default_results_dir("  ", ""), "results/gpu-unknown");
}

// The hierarchy comes from the aliased chase (past the device memory); the real-memory chase
// is its cross-check; each analysis reads its sweep, so it reruns when that sweep does.
TEST(Characterize, PlanIsTheAliasedSweepWithARealMemoryCrossCheck) {
  const auto full = plan_stages(false, 0), quick = plan_stages(true, 1);
  // Found by name, not position: a probe that adds a stage to the plan does not break this test.
  const auto named = [](const std::vector<stage> &plan, const std::string &name) -> const stage & {
    const auto it =
        std::find_if(plan.begin(), plan.end(), [&](const stage &st) { return st.name == name; });
    if (it == plan.end())
      throw std::runtime_error("the plan has no stage " + name);
    return *it;
  };
  const auto arg = [](const stage &st, const std::string &flag) {
    const auto it = std::find(st.args.begin(), st.args.end(), flag);
    return it == st.args.end() ? std::string("(none)") : *(it + 1);
  };
  const auto at = [&](const std::string &name) {
    return std::find_if(full.begin(), full.end(),
                        [&](const stage &st) { return st.name == name; }) -
           full.begin();
  };
  for (const auto &plan : {full, quick})
    for (const auto &st : plan) { // a stage's file is its name under raw/, spelt once
      EXPECT_EQ(st.output, gpuprobe::results_folder::raw_rel(
                               gpuprobe::results_folder::raw_file::of_stage(st.name)))
          << st.name;
      for (const auto &r : st.reads) // what it reads is planned before it
        EXPECT_LT(at(r), at(st.name)) << st.name << " reads " << r;
    }
  EXPECT_EQ(full[0].name, "tlb") << "the aliased sweep first";
  EXPECT_EQ(arg(named(full, "tlb"), "--alloc"), "alias");
  EXPECT_EQ(arg(named(full, "tlb_real"), "--alloc"), "cudamalloc");
  EXPECT_EQ(named(full, "tlb_profile").args[0], "analyze");
  EXPECT_EQ(named(full, "tlb_profile").reads, std::vector<std::string>{"tlb"});
  EXPECT_EQ(named(full, "tlb_real_profile").reads, std::vector<std::string>{"tlb_real"});
  EXPECT_EQ(named(full, "tlb_sampling").reads, std::vector<std::string>{"tlb_profile"});
  EXPECT_EQ(arg(named(full, "tlb_sampling"), "--profile"), "raw/tlb_profile.json");
  EXPECT_EQ(named(full, "tlb_conflict").reads, std::vector<std::string>{"tlb_profile"});
  EXPECT_EQ(arg(named(full, "tlb_conflict"), "--windows"), "(none)");
  EXPECT_EQ(arg(named(quick, "tlb_conflict"), "--windows"), "2");
  EXPECT_EQ(named(full, "tlb_coverage").reads, std::vector<std::string>{"tlb_profile"});
  EXPECT_THROW(named(quick, "tlb_coverage"), std::runtime_error) << "full runs only";
  EXPECT_NO_THROW(named(full, "atomics"));
  // The order and the clock as data on the stages: atomics after the sharing stages;
  // the SM clock from the aliased sweep's and atomics' results.
  for (const auto *plan : {&full, &quick})
    for (const auto &st : *plan) {
      EXPECT_EQ(st.runs_last, st.name == "atomics") << st.name;
      EXPECT_EQ(st.clock_witness, st.name == "tlb" || st.name == "atomics") << st.name;
    }
  EXPECT_EQ(arg(named(quick, "tlb"), "--points-per-octave"), "4") << "quick is coarser";
  EXPECT_EQ(arg(named(quick, "tlb"), "--samples"), "4096")
      << "quick times as many hops a point as the full sweep: the ramps' ends need a whole lap";
  EXPECT_EQ(arg(named(full, "tlb"), "--samples"), "(none)");
  EXPECT_EQ(arg(named(quick, "tlb_sampling"), "--device"), "1");
}

// --map-late (a node's neighbours map at different times): the stages that map no alias
// range are those that read real memory or nothing of the TLB's; of them atomics alone moves first,
// since tlb_real's curve moves with what was allocated before it (stage::keeps_place).
TEST(Characterize, MapLateRunsTheAliasFreeStagesFirst) {
  // Commands whose stage maps the alias range (the tlb sweep with --alloc alias is the other).
  const std::vector<std::string> mapping = {"tlb-conflict", "tlb-coverage", "tlb-per-sm",
                                            "tlb-sharing"};
  for (const bool quick : {false, true}) {
    const auto plan = plan_stages(quick, 0);
    std::map<std::string, bool> free_of;
    for (const auto &st : plan) {
      const bool maps = std::find(mapping.begin(), mapping.end(), st.args[0]) != mapping.end() ||
                        std::find(st.args.begin(), st.args.end(), "alias") != st.args.end();
      bool reads_free = true;
      for (const auto &r : st.reads)
        reads_free = reads_free && free_of.at(r);
      free_of[st.name] = st.alias_free;
      if (st.alias_free) {
        EXPECT_TRUE(!maps && reads_free) << st.name << " is alias-free but maps or reads a range";
      }
    }
    std::vector<std::string> alias_free;
    for (const auto &st : order_stages(plan, true).first)
      if (st.alias_free)
        alias_free.push_back(st.name);
    EXPECT_EQ(alias_free, (std::vector<std::string>{"atomics", "tlb_real", "tlb_real_profile"}));
    const auto late = order_stages(plan, true).first;
    EXPECT_EQ(late[0].name, "atomics") << "the one stage that moves";
    EXPECT_EQ(late[1].name, "tlb") << "tlb_real keeps its place after the aliased sweep";
    EXPECT_EQ(late[2].name, "tlb_real");
    EXPECT_TRUE(order_stages(plan, true).last.empty()) << "atomics moved first";
    const auto plain = order_stages(plan, false);
    EXPECT_EQ(plain.first[0].name, "tlb") << "without it the aliased sweep is first";
    ASSERT_EQ(plain.last.size(), 1u);
    EXPECT_EQ(plain.last[0].name, "atomics");
  }
}

// The order rule on generated plans: any stages, reads and flags a probe may give (seeded).
TEST(Characterize, OrderStagesKeepsEveryStageAfterWhatItReads) {
  std::mt19937 rng(48);
  for (int c = 0; c < 500; ++c) {
    std::vector<stage> plan;
    const int n = 1 + int(rng() % 12);
    for (int i = 0; i < n; ++i) {
      stage st{"s" + std::to_string(i), "raw/s" + std::to_string(i) + ".json", {"x"}, {}};
      bool reads_free = true;
      for (int j = 0; j < i; ++j)
        if (rng() % 4 == 0) {
          st.reads.push_back(plan[std::size_t(j)].name);
          reads_free = reads_free && plan[std::size_t(j)].alias_free;
        }
      st.alias_free = reads_free && rng() % 2 == 0;
      st.keeps_place = rng() % 4 == 0;
      // runs_last only on stages nothing planned reads (atomics): its readers would wait
      st.runs_last = rng() % 5 == 0;
      plan.push_back(st);
    }
    for (auto &st : plan) // a stage read by a later one is not runs_last
      for (const auto &r : st.reads)
        for (auto &o : plan)
          if (o.name == r)
            o.runs_last = false;
    for (const bool late : {false, true}) {
      const auto o = order_stages(plan, late);
      std::vector<std::string> seen;
      for (const auto *part : {&o.first, &o.last})
        for (const auto &st : *part) {
          for (const auto &r : st.reads)
            EXPECT_NE(std::find(seen.begin(), seen.end(), r), seen.end())
                << "case " << c << ": " << st.name << " before " << r;
          seen.push_back(st.name);
        }
      ASSERT_EQ(seen.size(), plan.size()) << "case " << c << ": every stage once";
      // Under late, first: the alias-free stages that neither keep their place nor read (at any
      // depth) one that does or that maps; then plan order.
      std::map<std::string, bool> moves;
      for (const auto &st : plan) {
        bool m = late && st.alias_free && !st.keeps_place;
        for (const auto &r : st.reads)
          m = m && moves.at(r);
        moves[st.name] = m;
      }
      std::vector<std::string> expect;
      for (const auto &st : plan)
        if (moves[st.name])
          expect.push_back(st.name);
      for (const auto &st : plan)
        if (!moves[st.name] && !st.runs_last)
          expect.push_back(st.name);
      for (const auto &st : plan)
        if (!moves[st.name] && st.runs_last)
          expect.push_back(st.name);
      EXPECT_EQ(seen, expect) << "case " << c << (late ? " --map-late" : "");
    }
  }
}

TEST(Characterize, SharingPerLevelElseTheLargestCandidate) {
  json p = {{"tlb",
             {{"levels",
               {{{"reach_bytes", 1e9}, {"coverage_bytes", 2097152}},
                {{"reach_bytes", 2e9}, {"coverage_bytes", 2097152}}}},
              {"candidates", json::array()}}}};
  auto s = sharing_stages(tlb_of(p), false, 0);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].name, "sharing_L2");
  p["tlb"]["candidates"] = {
      {{"reach_bytes", 1.5e9}, {"coverage_bytes", 2097152}},
      {{"reach_bytes", 6.9e10}, {"coverage_bytes", 2097152}}}; // beyond every level: tested too
  s = sharing_stages(tlb_of(p), false, 0);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[2].name, "sharing_C2");
  p["tlb"]["candidates"] = {
      {{"reach_bytes", 1.5e9}, {"coverage_bytes", 2097152}}}; // inside a level's reach: not tested
  EXPECT_EQ(sharing_stages(tlb_of(p), false, 0).size(), 2u);
  p["tlb"]["candidates"] = json::array();
  EXPECT_EQ(*(std::find(s[1].args.begin(), s[1].args.end(), "--level") + 1), "2");
  p = {{"tlb",
        {{"levels", json::array()},
         {"candidates",
          {{{"reach_bytes", 1e9}, {"coverage_bytes", 2097152}},
           {{"reach_bytes", 6.9e10}, {"coverage_bytes", 2097152}}}}}}};
  s = sharing_stages(tlb_of(p), true, 0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].name, "sharing_C2");
  EXPECT_NE(std::find(s[0].args.begin(), s[0].args.end(), "--max-sms"), s[0].args.end())
      << "quick: 16 SMs";
  EXPECT_TRUE(sharing_stages(tlb_of(json{{"tlb", json::object()}}), false, 0).empty());
}

TEST(Characterize, ResumeKeepsFinishedFilesAndProfileJoinsTheStages) {
  const fs::path dir = gpuprobe::test::temp_path("characterize");
  fs::remove_all(dir);
  fs::create_directories(dir / "raw");
  EXPECT_FALSE(stage_done((dir / "raw/tlb.json").string()));
  std::ofstream(dir / "raw/tlb.json")
      << "{\"schema\": \"gpuprobe.result/1\""; // cut short: not done
  EXPECT_FALSE(stage_done((dir / "raw/tlb.json").string()));
  std::ofstream(dir / "raw/tlb.json") << R"({"schema": "gpuprobe.result/9"})"; // newer: not read
  EXPECT_FALSE(stage_done((dir / "raw/tlb.json").string()));
  std::ofstream(dir / "raw/tlb.json") << R"({"schema": "gpuprobe.result/1"})"; // older: read
  EXPECT_TRUE(stage_done((dir / "raw/tlb.json").string()));
  std::ofstream(dir / "raw/tlb_profile.json") << json{
      {"schema", "gpuprobe.profile/1"},
      {"device", {{"name", "X"}}},
      {"tlb",
       {{"levels", {{{"entries", 2039}, {"coverage_bytes", 33554432}, {"reach_bytes", 6.84e10}}}},
        {"candidates", json::array()}}}}.dump();
  gpuprobe::probes::atomics_result atomics; // as the atomics stage writes it, with its fit
  atomics.device = {{"name", "NVIDIA H100"}};
  atomics.variants.push_back({gpuprobe::probes::parse_atomic_variant("same_u32"),
                              0,
                              false,
                              {},
                              {{"fit", {{"slope_cycles_per_thread", 0.69}}}}});
  std::ofstream(dir / "raw/atomics.json") << gpuprobe::probes::to_json(atomics).dump();
  const json p = gpuprobe::model::to_json(
      assemble_profile(dir.string(), json::array(), json{{"throttled", false}}));
  EXPECT_EQ(p["schema"], gpuprobe::schema::profile.id());
  EXPECT_EQ(p["device"]["name"], "NVIDIA H100");
  EXPECT_EQ(p["tlb"]["levels"][0]["sharing"]["scope"], "not measured");
  EXPECT_EQ(p["atomics"]["variants"][0]["fit"]["slope_cycles_per_thread"], 0.69);
  EXPECT_FALSE(p["tlb"]["levels"][0].contains("coverage")) << "no tlb-coverage stage: nothing";
  // A tlb-coverage result: its verdict joins the level of the same label and geometry only.
  const json verdict = {{"tag", "aligned"}, {"finding", "one entry covers 32 MiB: ..."}};
  std::ofstream(dir / "raw/tlb_coverage.json") << json{
      {"schema", "gpuprobe.result/1"},
      {"probe", "tlb-coverage"},
      {"tlb_coverage",
       {{"levels",
         {{{"level", "L1"}, {"coverage_bytes", 33554432}, {"entries", 2039}, {"verdict", verdict}},
          {{"level", "L2"}, {"coverage_bytes", 33554432}, {"entries", 2039}, {"verdict", verdict}},
          {{"level", "L1"},
           {"coverage_bytes", 16777216},
           {"entries", 2039},
           {"verdict",
            {{"tag", "other geometry"}}}}}}}}}.dump();
  const json pc = gpuprobe::model::to_json(
      assemble_profile(dir.string(), json::array(), json{{"throttled", false}}));
  ASSERT_TRUE(pc["tlb"]["levels"][0].contains("coverage"));
  EXPECT_EQ(pc["tlb"]["levels"][0]["coverage"]["tag"], "aligned");
  EXPECT_EQ(pc["tlb"]["levels"][0]["coverage"]["source"], "raw/tlb_coverage.json");
  EXPECT_EQ(gpuprobe::model::profile_from_json(pc, "test").tlb.levels[0].coverage_finding(),
            "one entry covers 32 MiB: ...")
      << "the profile's reader keeps it";
  std::ofstream(dir / "raw/tlb_profile.json") << R"({"schema": "gpuprobe.profile/7"})";
  EXPECT_THROW(assemble_profile(dir.string(), json::array(), json::object()), std::exception);
}

// A profile's coverage block is typed (finding, coverage_bytes, fill, source) and keeps the rest:
// every committed profile's blocks read and write back unchanged, and each typed field of the
// wrong type is refused in one line.
TEST(Characterize, CoverageBlocksRoundTripTypedAndMistypedFieldsAreRefused) {
  int blocks = 0, refused = 0;
  for (const char *sub : {"tests/fixtures/runs", "reports/examples"})
    for (const auto &e : fs::recursive_directory_iterator(fs::path(GPUPROBE_SOURCE_DIR) / sub)) {
      if (e.path().filename() != "profile.json")
        continue;
      const json p = gpuprobe::read_json_file(e.path().string());
      for (const auto &L : p["tlb"]["levels"]) {
        if (!L.contains("coverage"))
          continue;
        ++blocks;
        const auto c = gpuprobe::model::level_coverage_from_json(L["coverage"]);
        EXPECT_TRUE(c.finding && c.coverage_bytes && c.source) << e.path();
        EXPECT_EQ(gpuprobe::model::to_json(c), L["coverage"]) << e.path();
        for (const char *key : {"finding", "coverage_bytes", "fill", "source"}) {
          json bad = L["coverage"];
          bad[key] = std::string(key) == "coverage_bytes" ? json("32 MiB") : json(7);
          try {
            gpuprobe::model::level_coverage_from_json(bad);
          } catch (const std::exception &x) {
            ++refused;
            EXPECT_EQ(std::string(x.what()).find('\n'), std::string::npos);
          }
        }
      }
    }
  EXPECT_GE(blocks, 6) << "the committed full runs hold coverage blocks";
  EXPECT_EQ(refused, 4 * blocks);
}

// A stage file records what made it (argv, device UUID, seed, version): resume keeps it only when
// all of that matches the stage planned now, so a quick run's data never passes for a full one's
// and a folder moved to another GPU is measured again.
TEST(Characterize, ResumeRerunsAStageWhoseRecordDiffers) {
  const fs::path dir = gpuprobe::test::temp_path("characterize_stale");
  fs::remove_all(dir);
  fs::create_directories(dir / "raw");
  const auto quick = plan_stages(true, 0, 1), full = plan_stages(false, 0, 1);
  const auto seed7 = plan_stages(true, 0, 7);
  const std::string uuid = "GPU-2dcbe5fe-39cf-ca66-3a9f-03b796af88a2";
  const auto record = [&](const stage &s, const std::string &on, const std::string &version) {
    json argv = json::array({"/somewhere/gpuprobe"});
    for (const auto &a : s.args)
      argv.push_back(a);
    std::ofstream(dir / s.output) << json{{"schema", "gpuprobe.result/1"},
                                          {"probe", "tlb"},
                                          {"device", {{"uuid", on}}},
                                          {"meta",
                                           {{"argv", argv}, {"version", version}, {"seed", 1}}}}
                                         .dump();
  };
  const std::string path = (dir / "raw/tlb.json").string();
  EXPECT_EQ(check_stage(path, quick[0], uuid).reason, "not run yet");
  record(quick[0], uuid, GPUPROBE_VERSION);
  EXPECT_TRUE(check_stage(path, quick[0], uuid).keep) << check_stage(path, quick[0], uuid).reason;
  const auto as_full = check_stage(path, full[0], uuid);
  EXPECT_FALSE(as_full.keep);
  EXPECT_NE(as_full.reason.find("other arguments"), std::string::npos) << as_full.reason;
  EXPECT_NE(as_full.reason.find("--points-per-octave 4"), std::string::npos)
      << "says what made it: " << as_full.reason;
  EXPECT_FALSE(check_stage(path, seed7[0], uuid).keep) << "another seed";
  const auto moved = check_stage(path, quick[0], "GPU-67f63166-0000");
  EXPECT_FALSE(moved.keep);
  EXPECT_NE(moved.reason.find("another GPU (" + uuid + ")"), std::string::npos) << moved.reason;
  record(quick[0], uuid, "0.0.1");
  EXPECT_NE(check_stage(path, quick[0], uuid).reason.find("gpuprobe 0.0.1"), std::string::npos);
  // Every measuring stage passes the seed on, so the record holds it.
  for (const auto &s : quick) {
    if (s.args[0] != "analyze") {
      EXPECT_NE(std::find(s.args.begin(), s.args.end(), "--seed"), s.args.end()) << s.name;
    }
  }
}

// The cross-check names, per aliased level, the real-memory level or candidate that agrees
// (same page, reach within 15 %), or that the level lies beyond what real memory can reach; and
// the real-memory chase's L2 near/far split.
TEST(Characterize, CrossCheckAgainstRealMemory) {
  const json tlb = {
      {"levels",
       {{{"entries", 16}, {"coverage_bytes", 16.0 * (1 << 20)}, {"reach_bytes", 256.0 * (1 << 20)}},
        {{"entries", 2134},
         {"coverage_bytes", 32.0 * (1 << 20)},
         {"reach_bytes", 2134 * 32.0 * (1 << 20)}}}},
      {"candidates",
       {{{"entries", 4350},
         {"coverage_bytes", 64.0 * (1 << 20)},
         {"reach_bytes", 272.0 * (1ull << 30)}}}}};
  const json real = {{"searched_up_to_bytes", 73.0 * (1ull << 30)},
                     {"levels", json::array()},
                     {"candidates",
                      {{{"entries", 16},
                        {"coverage_bytes", 16.0 * (1 << 20)},
                        {"reach_bytes", 256.0 * (1 << 20)},
                        {"miss_penalty_cycles", 11}},
                       {{"entries", 2065},
                        {"coverage_bytes", 32.0 * (1 << 20)},
                        {"reach_bytes", 2065 * 32.0 * (1 << 20)},
                        {"miss_penalty_cycles", 93}}}}};
  gpuprobe::probes::tlb_result result; // the real-memory chase: 2 MiB steps, a near/far split
  result.device = {{"l2_bytes", 50.0 * (1 << 20)}};
  for (std::uint64_t h = 1; h <= 12; ++h)
    result.points.push_back({2u << 20, h * (2u << 20), h, 0, 300, 318, 0, 1, 0, false});
  using gpuprobe::model::tlb_hierarchy_from_json;
  const json c = gpuprobe::model::to_json(
      cross_check(tlb_hierarchy_from_json(tlb), tlb_hierarchy_from_json(real), result, nullptr));
  ASSERT_EQ(c["levels"].size(), 3u);
  EXPECT_EQ(c["levels"][0]["real_memory"].get<std::string>().rfind(
                "agrees: real memory's candidate C1", 0),
            0u)
      << c.dump();
  EXPECT_NE(c["levels"][1]["real_memory"].get<std::string>().find(
                "candidate C2 (2065 x 32 MiB, +93 cycles)"),
            std::string::npos);
  EXPECT_EQ(c["levels"][2]["level"], "C1");
  EXPECT_NE(c["levels"][2]["real_memory"].get<std::string>().find("beyond the real-memory sweep"),
            std::string::npos);
  EXPECT_EQ(c["l2_split"]["points"], 5u) << "8 hops or more, up to half the L2";
  EXPECT_DOUBLE_EQ(c["l2_split"]["split_cycles"].get<double>(), 18);
}

// A level's miss named by what serves it: the real chase's control gives an L2 hit (~290 cycles)
// and a memory access (~700); the H200's third structure (+434) costs a memory access, its L2
// TLB (+96) does not. The sampling verdict of each level joins the cross-check.
TEST(Characterize, MissesNamedByTheMemoryAccessAndSamplingJoins) {
  gpuprobe::probes::tlb_result result; // the real-memory chase's L2 control (128-byte stride)
  result.device = {{"l2_bytes", 60.0 * (1 << 20)}};
  result.control.emplace();
  for (std::uint64_t mib : {1, 4, 10, 30, 45, 130, 200, 240})
    result.control->points.push_back(
        {128, mib << 20, 0, mib <= 15 ? 294.0 : (mib < 120 ? 510.0 : 684.0), 0, 0, 0, 1, 0, false});
  const auto mem = memory_access(result);
  ASSERT_TRUE(mem.has_value());
  EXPECT_DOUBLE_EQ(mem->l2_hit_cycles.value_or(0), 294);
  EXPECT_DOUBLE_EQ(mem->memory_cycles.value_or(0), 684);
  EXPECT_EQ(miss_served_by(434, mem).rfind("memory: a page walk", 0), 0u);
  EXPECT_EQ(miss_served_by(96, mem).rfind("on chip (0.25 x", 0), 0u) << miss_served_by(96, mem);
  EXPECT_EQ(miss_served_by(96, std::nullopt), "");
  gpuprobe::probes::tlb_result no_control;
  no_control.device = {{"l2_bytes", 1e6}};
  EXPECT_FALSE(memory_access(no_control).has_value());

  const json tlb = {{"levels",
                     {{{"entries", 2163},
                       {"coverage_bytes", 32.0 * (1 << 20)},
                       {"reach_bytes", 2163 * 32.0 * (1 << 20)},
                       {"miss_penalty_cycles", 96}},
                      {{"entries", 4350},
                       {"coverage_bytes", 64.0 * (1 << 20)},
                       {"reach_bytes", 4350 * 64.0 * (1 << 20)},
                       {"miss_penalty_cycles", 434}}}}};
  gpuprobe::probes::sampling_result sampling;
  sampling.levels.resize(2);
  sampling.levels[0].target.level = "L1";
  sampling.levels[0].target.below_bytes = 54ull << 30;
  sampling.levels[0].target.above_bytes = 84ull << 30;
  sampling.levels[0].verdict.verdict = "slower by 40.0 %";
  sampling.levels[0].verdict.ratio = 1.4;
  sampling.levels[1].target.level = "L2";
  sampling.levels[1].verdict.verdict = "not tested: beyond";
  const json c = gpuprobe::model::to_json(
      cross_check(gpuprobe::model::tlb_hierarchy_from_json(tlb), {}, result, &sampling));
  ASSERT_EQ(c["levels"].size(), 2u);
  EXPECT_EQ(c["levels"][0]["sampling"]["ratio"], 1.4);
  EXPECT_EQ(c["levels"][0]["sampling"]["above_bytes"], 84.0 * (1ull << 30));
  EXPECT_EQ(c["levels"][1]["miss_served_by"].get<std::string>().rfind("memory", 0), 0u);
  EXPECT_EQ(c["levels"][1]["sampling"]["verdict"], "not tested: beyond");
  EXPECT_DOUBLE_EQ(c["memory_access"]["extra_cycles"].get<double>(), 390);
}

// `gpuprobe run` refuses a folder that holds another GPU's results (it would become a mix).
TEST(Characterize, AFolderOfAnotherGpuIsNamed) {
  const auto dir = gpuprobe::test::temp_path("run_other_gpu");
  fs::remove_all(dir);
  fs::create_directories(dir);
  EXPECT_EQ(other_gpu_results(dir, "GPU-bbbb"), "");
  std::ofstream(dir + "/tuning.json")
      << R"({"schema":"gpuprobe.tuning/1","device":{"uuid":"GPU-aaaa"}})";
  EXPECT_EQ(other_gpu_results(dir, "GPU-aaaa"), "");
  EXPECT_EQ(other_gpu_results(dir, "GPU-bbbb"),
            dir + "/tuning.json was measured on GPU-aaaa, this is GPU-bbbb");
}

// --reanalyze needs no GPU: the analysis stages run again over the measurements in raw/, the
// measurements are kept, a missing one is named, and a sharing file measured for another
// geometry is not attached to a level.
TEST(Characterize, ReanalyzeWithoutAGpu) {
  const auto dir = gpuprobe::test::temp_path("reanalyze");
  fs::remove_all(dir);
  fs::create_directories(dir + "/raw");
  fs::copy_file(std::string(GPUPROBE_FIXTURES_DIR) + "/gpuprobe-alias/h100-alias-2m.json",
                dir + "/raw/tlb.json");
  std::ofstream(dir + "/raw/sharing_L1.json")
      << R"({"schema":"gpuprobe.result/1","probe":"tlb-sharing","device":{},"meta":{},)"
      << R"("sharing":{"params":{"entries":999,"page_bytes":2097152}}})";
  const auto r = gpuprobe::test::run_gpuprobe("characterize --reanalyze --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("tlb              measured earlier"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tlb_real         not measured"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tlb_real_profile not analyzed"), std::string::npos) << r.out;
  const json p = gpuprobe::read_json_file(dir + "/profile.json");
  const json levels = p["tlb"]["levels"];
  ASSERT_EQ(levels.size(), 2u) << "the H100 fixture's sweep ends at 256 GiB: L1 and L2";
  EXPECT_EQ(levels[0]["entries"], 16);
  EXPECT_NEAR(levels[0]["miss_penalty_cycles"].get<double>(), 10, 0.5);
  EXPECT_EQ(levels[0]["sharing"]["scope"], "not measured");
  EXPECT_NE(levels[0]["sharing"].value("note", "").find("measured for 999 x 2 MiB"),
            std::string::npos)
      << levels[0]["sharing"].dump();
  EXPECT_EQ(levels[1]["sharing"]["scope"], "not measured");
  EXPECT_EQ(p["device"]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(fs::exists(dir + "/raw/sharing_L1.json")) << "a measurement is never removed";

  const auto none = gpuprobe::test::temp_path("reanalyze_none");
  fs::remove_all(none);
  const auto e = gpuprobe::test::run_gpuprobe("characterize --reanalyze --out " + none);
  EXPECT_NE(e.exit_code, 0);
  EXPECT_NE(e.err.find("is no folder characterize measured"), std::string::npos) << e.err;
  EXPECT_FALSE(fs::exists(none)) << "a refusal makes no folder";
  fs::create_directories(none); // a folder with no sweep: said, and nothing written
  const auto e2 = gpuprobe::test::run_gpuprobe("characterize --reanalyze --out " + none);
  EXPECT_NE(e2.exit_code, 0);
  EXPECT_NE(e2.err.find("raw/tlb.json does not exist"), std::string::npos) << e2.err;
  EXPECT_FALSE(fs::exists(none + "/profile.json"));
  EXPECT_FALSE(fs::exists(none + "/.gpuprobe.lock"));
}

// The stages run inside the characterize process by default (one context, the alias
// range mapped once), or one child each (GPUPROBE_STAGES=children). Over a committed H100 unit's
// measurements (--reanalyze: its analysis stages run in each way), both write the same files,
// byte for byte but the times, with each stage's own arguments as its argv: so a folder made one
// way is resumed the other way without a stage run again.
TEST(Characterize, StagesInProcessWriteWhatChildStagesWrite) {
  const fs::path unit =
      fs::path(GPUPROBE_SOURCE_DIR) / "tests/fixtures/runs/nvidia-h100-80gb-hbm3-bba9cd54";
  std::map<std::string, std::map<std::string, json>> made; // way -> file -> document
  for (const std::string way : {"here", "children"}) {
    const auto dir = gpuprobe::test::temp_path("stages_" + way);
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy(unit / "raw", fs::path(dir) / "raw");
    ::setenv("GPUPROBE_STAGES", way.c_str(), 1);
    const auto r = gpuprobe::test::run_gpuprobe("characterize --reanalyze --out " + dir);
    ::unsetenv("GPUPROBE_STAGES");
    ASSERT_EQ(r.exit_code, 0) << way << "\n" << r.out << r.err;
    for (const auto &e : fs::directory_iterator(fs::path(dir) / "raw"))
      made[way][e.path().filename().string()] = gpuprobe::read_json_file(e.path().string());
    made[way]["profile.json"] = gpuprobe::read_json_file(dir + "/profile.json");
    const json stage = made[way]["tlb_profile.json"];
    const json argv = stage["meta"]["argv"];
    ASSERT_GE(argv.size(), 2u) << way;
    EXPECT_EQ(argv[1], "analyze") << way << ": the stage's own argv, not characterize's";
  }
  ASSERT_EQ(made["here"].size(), made["children"].size());
  for (const auto &[file, doc] : made["children"]) {
    ASSERT_TRUE(made["here"].count(file)) << file;
    json a = gpuprobe::test::without_times(made["here"][file]),
         b = gpuprobe::test::without_times(doc);
    if (file == "profile.json") { // characterize's own argv: its --out differs, the rest not
      EXPECT_EQ(a["meta"]["argv"].size(), b["meta"]["argv"].size());
      a["meta"].erase("argv");
      b["meta"].erase("argv");
    }
    EXPECT_TRUE(a == b) << file << " differs between stages here and in children: "
                        << json::diff(b, a).dump().substr(0, 2000);
  }
  const auto bad = gpuprobe::test::temp_path("stages_bad");
  fs::remove_all(bad);
  fs::create_directories(bad);
  fs::copy(unit / "raw", fs::path(bad) / "raw");
  ::setenv("GPUPROBE_STAGES", "thread", 1);
  const auto e = gpuprobe::test::run_gpuprobe("characterize --reanalyze --out " + bad);
  ::unsetenv("GPUPROBE_STAGES");
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_NE(e.err.find("GPUPROBE_STAGES='thread'"), std::string::npos) << e.err;
}
