// Golden-JSON tests of each probe's result format, built from the committed H100 run
// (reports/examples): parsing a recorded result and writing it again gives the same document,
// so the drivers' move out of cli/ (and any later change) cannot alter what is written unseen.
// Also the drivers' host logic: planning, the pool policy, the round order, thread counts.
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "probes/atomics/driver.hpp"
#include "probes/conflict/driver.hpp"
#include "probes/per_sm/driver.hpp"
#include "probes/sampling/driver.hpp"
#include "probes/sharing/driver.hpp"
#include "probes/tlb/driver.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <set>

using namespace gpuprobe;
using nlohmann::json;

namespace {
const std::string k_example = std::string(GPUPROBE_FIXTURES_DIR) + "/gpuprobe-results/";

// The keys of every object in `j`, recursively (arrays: their first element), with their paths.
void key_paths(const json &j, const std::string &at, std::set<std::string> &out) {
  if (j.is_object()) {
    for (const auto &[k, v] : j.items()) {
      out.insert(at + "/" + k);
      key_paths(v, at + "/" + k, out);
    }
  } else if (j.is_array() && !j.empty()) {
    key_paths(j.front(), at + "[]", out);
  }
}
} // namespace

TEST(ProbeResults, TlbRoundTripsTheRecordedH100Results) {
  for (const char *f : {"tlb.json", "tlb_tail.json"}) {
    const json doc = read_json_file(k_example + f);
    const auto r = probes::tlb_result_from_json(doc);
    EXPECT_GT(r.points.size(), 100u) << f;
    EXPECT_EQ(probes::to_json(r), doc) << f;
  }
  const auto r = probes::tlb_result_from_json(read_json_file(k_example + "tlb.json"));
  ASSERT_TRUE(r.control.has_value());
  EXPECT_TRUE(r.control->passed);
  EXPECT_EQ(r.control->stride_bytes, 128u);
  // A sweep whose small strides stop early (quick) records where, and reads back so.
  auto cut = r;
  cut.short_below = 8ull << 20;
  cut.short_bytes = 96ull << 30;
  const json c = probes::to_json(cut);
  EXPECT_EQ(c["tlb"]["short_max_bytes"].get<std::uint64_t>(), 96ull << 30);
  EXPECT_EQ(probes::to_json(probes::tlb_result_from_json(c)), c);
  EXPECT_FALSE(probes::to_json(r)["tlb"].contains("short_max_bytes")) << "written only when cut";
  // A control whose laps a block read records how many threads read them, and reads back so.
  EXPECT_EQ(r.control->warm_threads, 1u) << "a file without the key: the chasing thread's lap";
  EXPECT_FALSE(probes::to_json(r)["tlb"]["control"].contains("warm_threads"));
  auto warmed = r;
  warmed.control->warm_threads = 512;
  const json w = probes::to_json(warmed);
  EXPECT_EQ(w["tlb"]["control"]["warm_threads"].get<unsigned>(), 512u);
  EXPECT_EQ(probes::tlb_result_from_json(w).control->warm_threads, 512u);
}

TEST(ProbeResults, SharingAndAtomicsRoundTripTheRecordedH100Results) {
  const json s = read_json_file(k_example + "sharing_C2.json");
  const auto sr = probes::sharing_result_from_json(s);
  EXPECT_EQ(sr.sm_ids.size(), sr.mean_cycles.size());
  EXPECT_EQ(probes::to_json(sr), s);
  const json a = read_json_file(k_example + "atomics.json");
  const auto ar = probes::atomics_result_from_json(a);
  EXPECT_EQ(ar.variants.size(), 8u);
  EXPECT_TRUE(ar.variants.front().analysis.contains("fit")) << "the fit travels with the variant";
  EXPECT_EQ(probes::to_json(ar), a);
}

// Every committed result of a probe whose file is read back (runs, fixtures, examples: measured
// on several GPUs by several builds) is written again as it was read, key for key.
TEST(ProbeResults, EveryCommittedResultIsWrittenBackAsRead) {
  using round_trip = std::function<json(const json &)>;
  const std::map<std::string, round_trip> kinds = {
      {"tlb", [](const json &d) { return probes::to_json(probes::tlb_result_from_json(d)); }},
      {"atomics",
       [](const json &d) { return probes::to_json(probes::atomics_result_from_json(d)); }},
      {"tlb-sharing",
       [](const json &d) { return probes::to_json(probes::sharing_result_from_json(d)); }},
      {"tlb-sampling",
       [](const json &d) { return probes::to_json(probes::sampling_result_from_json(d)); }},
      {"tlb-per-sm",
       [](const json &d) { return probes::to_json(probes::per_sm_result_from_json(d)); }}};
  std::map<std::string, int> seen;
  namespace fs = std::filesystem;
  for (const char *under : {"tests/fixtures", "reports/examples"})
    for (const auto &e :
         fs::recursive_directory_iterator(std::string(GPUPROBE_SOURCE_DIR) + "/" + under)) {
      if (e.path().extension() != ".json")
        continue;
      const json doc = read_json_file(e.path().string());
      const auto kind = doc.is_object() && doc.contains("probe") && doc["probe"].is_string()
                            ? kinds.find(doc["probe"].get<std::string>())
                            : kinds.end();
      if (kind == kinds.end())
        continue;
      ++seen[kind->first];
      EXPECT_EQ(kind->second(doc), doc) << e.path() << json::diff(doc, kind->second(doc)).dump();
    }
  for (const auto &[kind, f] : kinds)
    EXPECT_GT(seen[kind], 0) << "no committed " << kind << " result";
}

TEST(ProbeResults, FormatsKeepTheirKeys) {
  // The envelope every result starts with, and each probe block's keys, as recorded.
  for (const char *f : {"tlb.json", "sharing_C2.json", "atomics.json"}) {
    const json doc = read_json_file(k_example + f);
    std::set<std::string> keys;
    key_paths(doc, "", keys);
    for (const char *k : {"/schema", "/probe", "/device", "/device/uuid", "/device/sm_count",
                          "/meta", "/meta/git_commit", "/meta/argv", "/meta/seed"})
      EXPECT_TRUE(keys.count(k)) << f << " lacks " << k;
  }
  probes::tlb_result r;
  r.device = {{"name", "x"}};
  r.meta = json::object();
  std::set<std::string> keys;
  key_paths(probes::to_json(r), "", keys);
  for (const char *k : {"/tlb/alloc", "/tlb/granularity_bytes", "/tlb/points", "/tlb/control",
                        "/tlb/strides", "/tlb/wall_seconds"})
    EXPECT_TRUE(keys.count(k)) << k;
  EXPECT_EQ(probes::to_json(r)["tlb"]["granularity_bytes"], "unknown");
}

TEST(ProbeResults, MalformedResultsAreOneLineErrors) {
  EXPECT_THROW(probes::tlb_result_from_json(json{{"probe", "tlb"}}), error);
  EXPECT_THROW(probes::tlb_result_from_json(read_json_file(k_example + "atomics.json")), error);
  EXPECT_THROW(
      probes::sharing_result_from_json(json{{"probe", "tlb-sharing"}, {"sharing", json::object()}}),
      error);
  EXPECT_THROW(probes::atomics_result_from_json(json{{"probe", "atomics"}}), error);
}

TEST(TlbDriver, PlansFromTheFreeMemory) {
  probes::tlb_options o;
  const auto plan = probes::plan_tlb(o, 80 * k_gib);
  EXPECT_EQ(plan.max_bytes, 75 * k_gib) << "94% of 80 GiB, whole GiB";
  EXPECT_EQ(plan.strides.front(), 64 * k_kib);
  EXPECT_EQ(plan.strides.back(), k_gib);
  EXPECT_EQ(plan.strides.size(), 15u);
  o.max_bytes = 90 * k_gib;
  EXPECT_THROW(probes::plan_tlb(o, 80 * k_gib), error);
  o.max_bytes = 0;
  o.strides = {12};
  EXPECT_THROW(probes::plan_tlb(o, 80 * k_gib), error);
  const auto c = probes::plan_control(plan.max_bytes, 50 * k_mib);
  EXPECT_EQ(c.max_bytes, 100 * k_mib);
  EXPECT_FALSE(c.refine);
  EXPECT_EQ(c.strides, std::vector<std::uint64_t>{128});
}

TEST(TlbDriver, ControlPassesOnlyOnARiseNearTheL2Size) {
  auto curve = [](double rise_at) {
    std::vector<probes::sweep_point> v;
    for (double f = double(k_mib); f <= 200.0 * double(k_mib); f *= 1.09) {
      probes::sweep_point p;
      p.footprint_bytes = std::uint64_t(f);
      p.median = f > rise_at ? 480 : 300;
      v.push_back(p);
    }
    return v;
  };
  EXPECT_TRUE(probes::judge_control(curve(27.0 * double(k_mib)), 50 * k_mib).passed);
  EXPECT_FALSE(probes::judge_control(curve(1e18), 50 * k_mib).passed) << "a flat control";
}

// The control's plan (the coarse grid to twice the L2) on the committed real-memory
// chases of an H100 and an H200: their points so cut still show the L2's rise.
TEST(TlbDriver, TheControlsCoarseGridToTwiceTheL2StillFindsTheRise) {
  for (const char *unit : {"nvidia-h100-80gb-hbm3-bba9cd54", "nvidia-h200-bc72dbee"}) {
    SCOPED_TRACE(unit);
    const auto r = probes::tlb_result_from_json(read_json_file(gpuprobe::test::committed_run(unit) + "/raw/tlb_real.json"));
    ASSERT_TRUE(r.control.has_value());
    const auto l2 = r.device.at("l2_bytes").get<std::uint64_t>();
    const auto plan = probes::plan_control(r.max_bytes, l2);
    std::vector<probes::sweep_point> grid;
    for (const auto &p : r.control->points)
      if (!p.refined && p.footprint_bytes <= plan.max_bytes)
        grid.push_back(p);
    EXPECT_GE(grid.size(), 50u);
    const auto c = probes::judge_control(grid, l2);
    EXPECT_TRUE(c.passed);
    ASSERT_FALSE(c.steps.empty());
    EXPECT_LT(c.steps.front().boundary_bytes, double(l2));
  }
}

TEST(SharingDriver, PoolPolicyAndRounds) {
  probes::sharing_options o;
  o.level = probes::hypothesis(32 * k_mib, 2048, "test");
  // With the VMM API: an alias pool, whatever the memory (the H200's 272 GiB level too).
  auto c = probes::choose_sharing_pool(o, 10.0 * double(k_gib), 2 * k_mib);
  EXPECT_EQ(c.alloc, "alias");
  EXPECT_DOUBLE_EQ(c.overfill, 1.2);
  o.level = probes::hypothesis(64 * k_mib, 4350, "test");
  EXPECT_EQ(probes::choose_sharing_pool(o, 10.0 * double(k_gib), 2 * k_mib).alloc, "alias");
  o.level = probes::hypothesis(32 * k_mib, 16384, "test"); // more pages than the chunk has lines
  EXPECT_EQ(probes::choose_sharing_pool(o, 60.0 * double(k_gib), 2 * k_mib).alloc, "vmm-sparse");
  o.alloc = "alias";
  EXPECT_THROW(probes::choose_sharing_pool(o, 10.0 * double(k_gib), 2 * k_mib), error);
  o.alloc = "auto";
  o.level = probes::hypothesis(32 * k_mib, 2048, "test");
  o.spread_lines = false; // every chain word at offset 0: aliases would overwrite each other
  EXPECT_EQ(probes::choose_sharing_pool(o, 80.0 * double(k_gib), 2 * k_mib).alloc, "cudamalloc");
  o.spread_lines = true;
  // Without it (granularity 0): a dense cudaMalloc, the overfill lowered to fit.
  c = probes::choose_sharing_pool(o, 80.0 * double(k_gib), 0);
  EXPECT_EQ(c.alloc, "cudamalloc");
  EXPECT_DOUBLE_EQ(c.overfill, 1.2);
  c = probes::choose_sharing_pool(o, 70.0 * double(k_gib), 0);
  EXPECT_EQ(c.alloc, "cudamalloc");
  EXPECT_LT(c.overfill, 1.1) << "the overfill is lowered to fit";
  o.alloc = "vmm-sparse";
  c = probes::choose_sharing_pool(o, 40.0 * double(k_gib), 2 * k_mib);
  EXPECT_EQ(c.alloc, "vmm-sparse");
  o.alloc = "auto";
  EXPECT_THROW(probes::choose_sharing_pool(o, 40.0 * double(k_gib), 0), error)
      << "no VMM: too large to test";
  o.overfill = 0.5;
  EXPECT_THROW(probes::choose_sharing_pool(o, 80.0 * double(k_gib), 2 * k_mib), error);

  std::mt19937_64 rng(1);
  std::vector<std::size_t> order;
  const std::vector<int> sms = {0, 1, 2, 3, 4, 5};
  const auto rounds = probes::victim_rounds(2, sms, rng, order);
  ASSERT_EQ(rounds.size(), sms.size() + 3);
  EXPECT_EQ(rounds[0], -1);
  EXPECT_EQ(rounds[1], -1);
  EXPECT_EQ(rounds[2], 2) << "the control right after the baseline";
  EXPECT_EQ(rounds.back(), -1);
  EXPECT_EQ(std::set<int>(rounds.begin() + 2, rounds.end() - 1),
            std::set<int>(sms.begin(), sms.end()));
  EXPECT_EQ(order.front(), 2u);
}

TEST(AtomicsDriver, ThreadCountsAndTop) {
  EXPECT_EQ(probes::thread_counts(5), (std::vector<std::uint64_t>{1, 2, 4, 5}));
  EXPECT_EQ(probes::thread_counts(4), (std::vector<std::uint64_t>{1, 2, 4}));
  device_info d;
  d.sm_count = 132, d.max_threads_per_sm = 2048;
  probes::atomics_options o;
  EXPECT_EQ(probes::atomics_top(o, d), 270336u);
  o.max_threads = 1u << 20;
  EXPECT_THROW(probes::atomics_top(o, d), error);
  EXPECT_EQ(probes::parse_atomic_variant("cas_u64"), probes::atomic_variant::cas_u64);
  EXPECT_THROW(probes::parse_atomic_variant("same_u16"), error);
}

// Alias pools are bounded by the address space and the node's budget, not the memory: the default
// footprint is 384 GiB whatever the memory (past 288 GiB, where Hopper's third level misses on
// every hop), and a footprint past the free memory is no error for them.
TEST(TlbDriver, AliasPlansPastTheDeviceMemory) {
  probes::tlb_options o;
  o.alloc = alloc_kind::alias;
  for (const std::uint64_t free_gib : {1, 78, 139, 250})
    EXPECT_EQ(probes::plan_tlb(o, free_gib * k_gib).max_bytes, 384 * k_gib);
  o.max_bytes = k_tib;
  EXPECT_EQ(probes::plan_tlb(o, 78 * k_gib).max_bytes, k_tib);
  probes::tlb_result r;
  r.device = json::object();
  r.meta = json::object();
  r.alloc = "alias";
  r.alias_bytes = 2 * k_mib;
  const json doc = probes::to_json(r);
  EXPECT_EQ(doc["tlb"]["alias_bytes"], 2 * k_mib);
  EXPECT_NE(doc["tlb"]["load"].get<std::string>().find("alias"), std::string::npos);
  EXPECT_EQ(probes::to_json(probes::tlb_result_from_json(doc)), doc);
  EXPECT_FALSE(probes::to_json(probes::tlb_result{})["tlb"].contains("alias_bytes"));
}

// tlb-sampling: each level gets footprints at 0.8 and 1.25 x its reach, the one above capped by
// the memory; a level whose capped footprint is within 10 % of its reach (the H100's L2 at 67.6
// GiB with ~71 GiB usable) or beyond the memory is skipped with the reason.
TEST(TlbSampling, PlansBelowAndAboveEachReachWithinTheMemory) {
  // A level as the profile types it (model::tlb_level): page, reach, penalty, where all miss.
  const auto level = [](double page, double entries, double penalty, double full_miss = 0) {
    gpuprobe::model::tlb_level L;
    L.coverage_bytes = page;
    L.entries = entries;
    L.reach_bytes = page * entries;
    L.miss_penalty_cycles = penalty;
    if (full_miss > 0)
      L.full_miss_bytes = full_miss;
    return L;
  };
  gpuprobe::model::tlb_hierarchy tlb;
  tlb.levels = {level(16.0 * k_mib, 16, 10), level(32.0 * k_mib, 2163, 96),
                level(64.0 * k_mib, 4350, 434)};
  probes::sampling_options o;
  const auto h200 = probes::plan_sampling(tlb, 126 * k_gib, o);
  ASSERT_EQ(h200.size(), 3u);
  EXPECT_EQ(h200[0].level, "L1");
  EXPECT_EQ(h200[0].below_bytes, 204 * k_mib); // 0.8 x 256 MiB, down to 2 MiB
  EXPECT_EQ(h200[0].above_bytes, 320 * k_mib);
  EXPECT_TRUE(h200[1].skipped.empty());
  EXPECT_EQ(h200[1].above_bytes, 86520 * k_mib); // 1.25 x 67.59 GiB = 84.5 GiB < 126 GiB
  EXPECT_NE(h200[2].skipped.find("too close to it, or beyond it"), std::string::npos);
  const auto h100 = probes::plan_sampling(tlb, 71 * k_gib, o);
  EXPECT_NE(h100[1].skipped.find("real memory reaches at most 71 GiB (1.05 x the reach)"),
            std::string::npos)
      << h100[1].skipped;
  // A set-associative level: below where its misses begin, above where every hop misses.
  gpuprobe::model::tlb_hierarchy ramp;
  ramp.levels = {level(32.0 * k_mib, 2048, 96, 2304 * 32.0 * k_mib)};
  const auto r200 = probes::plan_sampling(ramp, 126 * k_gib, o);
  EXPECT_EQ(r200[0].below_bytes, 52428 * k_mib / 2 * 2); // 0.8 x 64 GiB, down to 2 MiB
  EXPECT_EQ(r200[0].above_bytes, 92160 * k_mib);         // 1.25 x 72 GiB
  const auto r100 = probes::plan_sampling(ramp, 71 * k_gib, o);
  EXPECT_NE(r100[0].skipped.find("0.99 x where every hop misses, 72 GiB"), std::string::npos)
      << r100[0].skipped;
}

namespace {

// A tlb-sampling target of level `label`: its reach and penalty (the profile's level), its two
// footprints.
probes::sampling_target sampling_target_of(const std::string &label, double reach, double penalty,
                                           double below, double above) {
  probes::sampling_target t;
  t.level = label;
  t.tested.reach_bytes = reach;
  t.tested.miss_penalty_cycles = penalty;
  t.below_bytes = std::uint64_t(below);
  t.above_bytes = std::uint64_t(above);
  return t;
}

} // namespace

// The verdict: a change counts past max(3 %, 3 x the reps' robust spread); the L2 cache's share of
// each footprint is named when it differs (the change is then not translation alone).
TEST(TlbSampling, VerdictSaysWhetherTheSpeedChangesWhereTheLevelSays) {
  probes::sampling_level_result r;
  r.target = sampling_target_of("L2", 67.6 * k_gib, 96, 54 * k_gib, 84 * k_gib);
  r.below_ms = {100, 101, 99, 100, 100};
  r.above_ms = {140, 141, 139, 140, 142};
  const double reads = double(1u << 20) * 256;
  auto v = probes::sampling_verdict(r, 60.0 * k_mib, reads);
  EXPECT_TRUE(v.detail["changes"].get<bool>());
  EXPECT_NEAR(*v.ratio, 1.4, 1e-9);
  EXPECT_EQ(v.verdict->rfind("slower by 40.0 % above the reach", 0), 0u) << *v.verdict;
  r.above_ms = {101, 100, 102, 99, 100};
  v = probes::sampling_verdict(r, 60.0 * k_mib, reads);
  EXPECT_FALSE(v.detail["changes"].get<bool>());
  EXPECT_EQ(v.verdict->rfind("no change beyond the noise", 0), 0u);
  // H100's L1 (256 MiB) beside a 50 MiB L2 cache: 5.7 % slower, which the cache's share falling
  // from 24.5 % to 15.6 % explains alone (up to 11.8 %).
  r.target = sampling_target_of("L1", 256.0 * k_mib, 10, 204 * k_mib, 320 * k_mib);
  r.above_ms = {105.7, 105.6, 105.8, 105.7, 105.7};
  v = probes::sampling_verdict(r, 50.0 * k_mib, reads);
  EXPECT_NEAR(v.detail["cache_explains_up_to"].get<double>(), 0.118, 0.002);
  EXPECT_NE(v.verdict->find("which alone explains up to 11.8 %: no evidence"), std::string::npos)
      << *v.verdict;
  r.target.skipped = "beyond the memory";
  EXPECT_EQ(probes::sampling_verdict(r, 60.0 * k_mib, reads).verdict,
            "not tested: beyond the memory");
}

// The result round-trips through its JSON; another probe's file is refused in one line.
TEST(TlbSampling, ResultRoundTrips) {
  probes::sampling_result r;
  r.device = {{"name", "NVIDIA H200"}};
  r.meta = {{"seed", 1}};
  r.profile = "raw/tlb_profile.json";
  r.reads_per_launch = 268435456;
  probes::sampling_level_result l;
  l.target = sampling_target_of("L1", 256.0 * k_mib, 10, 204 * k_mib, 320 * k_mib);
  l.below_ms = {1, 2, 3};
  l.above_ms = {4, 5, 6};
  l.verdict.verdict = "x";
  r.levels.push_back(l);
  const json doc = probes::to_json(r);
  EXPECT_EQ(doc["probe"], "tlb-sampling");
  EXPECT_EQ(probes::to_json(probes::sampling_result_from_json(doc)), doc);
  json other = doc;
  other["probe"] = "atomics";
  EXPECT_THROW(probes::sampling_result_from_json(other), error);
}

// tlb-conflict plans from the typed profile (model::read_profile) the targets the committed runs
// recorded when it read the profile's JSON by key: level labels, pages, entries, penalties.
TEST(TlbConflict, PlansFromTheTypedProfileWhatTheCommittedRunsTested) {
  for (const char *run : {"nvidia-h100-80gb-hbm3-c7c2dadc", "nvidia-h100-80gb-hbm3-bba9cd54",
                          "nvidia-h200-bc72dbee"}) {
    const std::string dir =
        gpuprobe::test::committed_run(run) + "/raw/";
    const auto tlb = gpuprobe::model::read_profile(dir + "tlb_profile.json").tlb;
    const auto targets = probes::plan_conflict(tlb);
    const json recorded = gpuprobe::read_json_file(dir + "tlb_conflict.json")["tlb_conflict"];
    ASSERT_EQ(targets.size(), recorded["levels"].size()) << run;
    for (std::size_t k = 0; k < targets.size(); ++k) {
      const json &r = recorded["levels"][k];
      EXPECT_EQ(targets[k].level, r["level"].get<std::string>()) << run;
      EXPECT_EQ(targets[k].coverage_bytes(), r["coverage_bytes"].get<std::uint64_t>()) << run;
      EXPECT_EQ(targets[k].entries(), r["entries"].get<std::uint64_t>()) << run;
      EXPECT_DOUBLE_EQ(targets[k].penalty_cycles(), r["penalty_cycles"].get<double>()) << run;
      EXPECT_EQ(targets[k].skipped, r.value("skipped", std::string())) << run;
    }
  }
}
