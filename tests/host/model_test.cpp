// The typed models (model/): every committed file of each kind reads into its model and writes
// back to the same JSON; another schema or a newer version is refused in one line.
#include "test_util.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "model/atomics.hpp"
#include "model/bench_file.hpp"
#include "model/file_head.hpp"
#include "model/fleet.hpp"
#include "model/profile.hpp"
#include "model/run_folder.hpp"
#include "model/tuning.hpp"
#include "model/validation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace gpuprobe;

namespace {

const std::string k_fixture_runs = std::string(GPUPROBE_SOURCE_DIR) + "/tests/fixtures/runs";

// Every committed file named `name` (the runs, fleet units and peers: committed_result_files).
std::vector<fs::path> committed(const std::string &name) {
  std::vector<fs::path> out;
  for (const auto &e : gpuprobe::test::committed_result_files())
    if (e.is_regular_file() && e.path().filename() == name)
      out.push_back(e.path());
  return out;
}

TEST(ProfileModel, EveryCommittedProfileRoundTrips) {
  std::size_t files = 0, levels = 0;
  for (const char *name : {"profile.json", "tlb_profile.json"})
    for (const auto &f : committed(name)) {
      const json doc = read_json_file(f.string());
      const auto p = model::profile_from_json(doc, f.string());
      EXPECT_EQ(model::to_json(p), doc) << f;
      ++files;
      levels += p.tlb.levels.size() + p.tlb.candidates.size();
    }
  EXPECT_GE(files, 10u); // 8 profile.json (runs, fleet units), 2 raw/tlb_profile.json (runs)
  EXPECT_GE(levels, 30u);
}

// A level's conflict sets (tlb-conflict's finding, kept as written) read typed: every committed
// one as it holds (its sizes, ways, agreement or why, set-index finding); seeded mutations that
// put a value of another kind at one of its keys are refused in one line naming that key.
TEST(ProfileModel, ConflictSetsAreReadTypedAndMistypedKeysNamed) {
  std::vector<json> blocks;
  for (const auto &f : committed("profile.json")) {
    const auto p = model::profile_from_json(read_json_file(f.string()), f.string());
    for (const auto &L : p.tlb.levels)
      if (L.structure && L.structure->conflict && !L.structure->conflict->empty())
        blocks.push_back(*L.structure->conflict);
  }
  ASSERT_GE(blocks.size(), 4u);
  for (const auto &b : blocks) {
    const auto c = model::level_conflict_from_json(b);
    EXPECT_EQ(c.set_sizes.size(), b.value("set_sizes", json::array()).size());
    EXPECT_EQ(c.ways.has_value(), b.contains("ways"));
    EXPECT_EQ(c.agrees.value_or(false), b.value("agrees", false));
    EXPECT_EQ(c.resolved, b.value("resolved", true));
    EXPECT_EQ(c.ways.has_value() || !c.why.empty(), true) << b.dump().substr(0, 200);
    if (b.contains("set_index") && b["set_index"].contains("finding")) {
      EXPECT_EQ(c.set_index.value_or(""), b["set_index"]["finding"].get<std::string>());
    }
  }
  std::mt19937 rng(46);
  const std::vector<std::pair<std::string, json>> wrong = {
      {"set_sizes", "9 9 9"}, {"ways", "eight"},  {"agrees", 1},     {"why", 3},
      {"set_index", 5},       {"ramp_ways", "8"}, {"resolved", "no"}};
  for (int k = 0; k < 100; ++k) {
    json b = blocks[rng() % blocks.size()];
    const auto &[key, value] = wrong[rng() % wrong.size()];
    b[key] = value;
    try {
      model::level_conflict_from_json(b);
      ADD_FAILURE() << key << " = " << value.dump() << " was read";
    } catch (const std::exception &e) {
      EXPECT_NE(std::string(e.what()).find("\"" + key + "\""), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

TEST(ProfileModel, TypedFieldsAreTheFilesNumbers) {
  const auto p =
      model::read_profile(k_fixture_runs + "/nvidia-h100-80gb-hbm3-bba9cd54/profile.json");
  ASSERT_EQ(p.tlb.levels.size(), 3u);
  const auto &L2 = p.tlb.levels[1];
  EXPECT_EQ(L2.entries, 2048);
  EXPECT_EQ(L2.coverage_bytes, 32.0 * (1 << 20));
  EXPECT_EQ(L2.reach_bytes, *L2.entries * L2.coverage_bytes);
  EXPECT_EQ(L2.miss_penalty_cycles, 95);
  ASSERT_TRUE(L2.structure && L2.structure->resolved);
  EXPECT_EQ(*L2.structure->ways, 8);
  EXPECT_EQ(*L2.structure->sets, 256);
  EXPECT_FALSE(L2.structure->fully_associative());
  EXPECT_TRUE(p.tlb.levels[0].structure->fully_associative());
  ASSERT_TRUE(L2.sharing && L2.sharing->has_groups());
  EXPECT_EQ(L2.sharing->groups->size(), 24u);
  EXPECT_EQ(p.gpu_uuid(), "GPU-bba9cd54-4ff2-3abe-ccd0-8b93d91c071e");
  ASSERT_TRUE(p.stages);
  EXPECT_EQ(p.stages->front().name, "tlb");
  EXPECT_EQ(p.stages->front().status, "kept");
}

TEST(ProfileModel, OtherSchemasAndMissingKeysAreRefusedInOneLine) {
  const std::string f = k_fixture_runs + "/nvidia-h100-80gb-hbm3-bba9cd54/profile.json";
  json doc = read_json_file(f);
  json newer = doc;
  newer["schema"] = "gpuprobe.profile/" + std::to_string(schema::profile.version + 1);
  EXPECT_THROW(model::profile_from_json(newer, "p.json"), error);
  json other = doc;
  other["schema"] = "gpuprobe.tuning/1";
  EXPECT_THROW(model::profile_from_json(other, "p.json"), error);
  json broken = doc;
  broken["tlb"]["levels"][0].erase("reach_bytes");
  try {
    model::profile_from_json(broken, "p.json");
    FAIL() << "a level without reach_bytes was read";
  } catch (const error &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'p.json': malformed profile"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

} // namespace

namespace {

TEST(ProfileModel, NullsAndAbsentKeysAreWrittenBackAsRead) {
  // An unresolved level: ways and sets null, no structure, sharing not measured (no groups).
  const json L = {{"entries", 16.0},
                  {"coverage_bytes", 2097152.0},
                  {"reach_bytes", 33554432.0},
                  {"miss_penalty_cycles", 12.0},
                  {"ways", nullptr},
                  {"sets", nullptr},
                  {"sharing", {{"scope", "not measured"}}}};
  const auto m = model::tlb_level_from_json(L);
  EXPECT_FALSE(m.ways);
  EXPECT_FALSE(m.structure);
  ASSERT_TRUE(m.sharing);
  EXPECT_FALSE(m.sharing->has_groups());
  EXPECT_EQ(model::to_json(m), L);
  const json h = {{"levels", {L}}, {"candidates", json::array()}};
  EXPECT_EQ(model::to_json(model::tlb_hierarchy_from_json(h)), h);
  // A level written by hand for tune: its reach and page only.
  const json bare = {{"reach_bytes", 1073741824.0}, {"coverage_bytes", 2097152.0}};
  const auto b = model::tlb_level_from_json(bare);
  EXPECT_FALSE(b.entries);
  EXPECT_EQ(model::to_json(b), bare);
}

} // namespace

namespace {

TEST(ValidationModel, EveryCommittedValidationRoundTrips) {
  std::size_t files = 0, rows = 0;
  for (const auto &f : committed("validation.json")) {
    const json doc = read_json_file(f.string());
    const auto v = model::validation_from_json(doc, f.string());
    EXPECT_EQ(model::to_json(v), doc) << f;
    EXPECT_FALSE(v.summary.empty());
    ASSERT_TRUE(v.tradeoffs);
    ++files;
    rows += v.workloads.size();
  }
  EXPECT_GE(files, 2u);
  EXPECT_GE(rows, 48u);
}

TEST(ValidationModel, AnEarlierFileWithoutTradeOffsAndARowWithoutAWorkloadAreToldApart) {
  json doc = read_json_file(committed("validation.json").front().string());
  doc.erase("tradeoffs"); // files before the trade-offs: read, and written back without them
  const auto v = model::validation_from_json(doc, "v.json");
  EXPECT_FALSE(v.tradeoffs);
  EXPECT_EQ(model::to_json(v), doc);
  doc["workloads"][0].erase("workload");
  EXPECT_THROW(model::validation_from_json(doc, "v.json"), error);
  doc["schema"] = "gpuprobe.validation/2";
  EXPECT_THROW(model::validation_from_json(doc, "v.json"), error);
}

} // namespace

namespace {

TEST(TuningModel, EveryCommittedTuningRoundTrips) {
  std::size_t files = 0;
  for (const auto &f : committed("tuning.json")) {
    const json doc = read_json_file(f.string());
    const auto t = model::tuning_from_json(doc, f.string());
    json expected = doc; // a file from before the ramp's middle: read as 0, written with it
    if (!expected["allocator"].contains("tlb_scope_midpoint_bytes"))
      expected["allocator"]["tlb_scope_midpoint_bytes"] = 0;
    EXPECT_EQ(model::to_json(t), expected) << f;
    EXPECT_TRUE(t.word_size && t.regions && t.crw_placement && t.tlb_scope) << f;
    EXPECT_EQ(&t.decision("regions"), &t.regions);
    EXPECT_FALSE(t.decision("no_such_decision")) << "not another decision's slot";
    EXPECT_EQ(t.allocator.measured_on, t.profile.device_uuid);
    ++files;
  }
  EXPECT_GE(files, 7u); // 2 runs, 5 fleet units
}

TEST(TuningModel, TheAllocatorBlockIsCheckedAsTheAllocatorsCheckIt) {
  json doc = read_json_file(committed("tuning.json").front().string());
  EXPECT_EQ(model::tuning_from_json(doc, "t.json").allocator.word_bits == 32 ||
                model::tuning_from_json(doc, "t.json").allocator.word_bits == 64,
            true);
  json bad = doc;
  bad["allocator"]["word_bits"] = 48;
  try {
    model::tuning_from_json(bad, "t.json");
    FAIL() << "48-bit words were read";
  } catch (const error &e) {
    EXPECT_NE(std::string(e.what()).find("word_bits must be 32 or 64"), std::string::npos);
  }
  bad = doc;
  bad["schema"] = "gpuprobe.tuning/" + std::to_string(schema::tuning.version + 1);
  EXPECT_THROW(model::tuning_from_json(bad, "t.json"), error);
}

} // namespace

namespace {

// The word-size measurements typed:
// every committed file's points as written; a point with a field missing, mistyped or out of range
// is refused in one line naming it, over seeded mutations of each committed file.
TEST(TuningModel, WordMeasurementsAreTypedAndCheckedOverGeneratedMutations) {
  std::mt19937 rng(46);
  for (const auto &path : committed("tuning.json")) {
    const json doc = read_json_file(path.string());
    const auto t = model::tuning_from_json(doc, path.string());
    const auto m = model::word_measurements(t);
    const json &raw = doc["decisions"]["word_size"]["measurements"];
    ASSERT_EQ(m.size(), raw.size()) << path;
    ASSERT_FALSE(m.empty()) << path;
    for (std::size_t i = 0; i < m.size(); ++i) {
      EXPECT_EQ(m[i].allocator, raw[i]["allocator"].get<std::string>());
      EXPECT_EQ(m[i].ms32, raw[i]["ms32"].get<double>());
      EXPECT_EQ(m[i].free_fraction, raw[i]["free_fraction"].get<double>());
    }
    const char *keys[] = {"allocator", "free_fraction", "ms32", "ms64"};
    for (int k = 0; k < 40; ++k) {
      json bad = doc;
      const std::size_t i = rng() % raw.size();
      json &p = bad["decisions"]["word_size"]["measurements"][i];
      const char *key = keys[rng() % 4];
      switch (rng() % 3) {
      case 0:
        p.erase(key);
        break;
      case 1:
        p[key] = json::array();
        break;
      default:
        p[key] = std::string(key) == "allocator" ? json(7) : json(-1.5);
        break;
      }
      try {
        model::word_measurements(model::tuning_from_json(bad, "t.json"));
        FAIL() << path << ": " << p.dump() << " was read";
      } catch (const error &e) {
        EXPECT_NE(std::string(e.what()).find("measurement " + std::to_string(i)), std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(FleetModel, TheCommittedFleetRoundTrips) {
  const auto files = committed("fleet.json");
  ASSERT_GE(files.size(), 2u); // the example's (two H200s) and the fixture's (8 units, 2 models)
  for (const auto &f : files) {
    const json doc = read_json_file(f.string());
    const auto fl = model::fleet_from_json(doc, f.string());
    json body = doc; // meta (tool, commit, argv, time) is the writer's, added beside the model
    body.erase("meta");
    EXPECT_EQ(model::to_json(fl), body) << f;
    EXPECT_GE(fl.units.size(), 2u);
    EXPECT_GE(fl.models.size(), 1u);
    const auto &h200 = fl.models.at("NVIDIA H200");
    EXPECT_EQ(h200.parameters.at("L2.entries").n, h200.complete);
  }
}

TEST(FleetModel, AMissingFigureIsRefusedInOneLine) {
  json doc = read_json_file(committed("fleet.json").front().string());
  doc["models"]["NVIDIA H200"]["parameters"]["L2.entries"].erase("median");
  try {
    model::fleet_from_json(doc, "f.json");
    FAIL() << "a parameter without its median was read";
  } catch (const error &e) {
    EXPECT_NE(std::string(e.what()).find("'f.json': malformed fleet"), std::string::npos);
  }
}

} // namespace

// The atomics fits, typed: the profile keeps each variant's fit (no points); a raw result of an
// early version carries points and no `model` (the report fits those again).
TEST(AtomicsModel, ProfileFitsAndRawPointsAreRead) {
  const std::string root = std::string(GPUPROBE_SOURCE_DIR);
  const auto p = gpuprobe::model::read_profile(
      root + "/tests/fixtures/runs/nvidia-h100-80gb-hbm3-c7c2dadc/profile.json");
  const auto fits = gpuprobe::model::atomics_of(p);
  ASSERT_FALSE(fits.empty());
  const nlohmann::json written = p.detail["atomics"]["variants"];
  ASSERT_EQ(fits.size(), written.size());
  for (std::size_t i = 0; i < fits.size(); ++i) {
    EXPECT_EQ(fits[i].variant, written[i]["variant"].get<std::string>());
    ASSERT_TRUE(fits[i].fit && fits[i].fit->model);
    EXPECT_EQ(*fits[i].fit->model, written[i]["fit"]["model"].get<std::string>());
    EXPECT_TRUE(fits[i].points.empty());
  }
  EXPECT_EQ(fits[0].variant, "same_u32");
  EXPECT_TRUE(fits[0].queue_model.applies);
  ASSERT_TRUE(fits[0].queue_model.mean_cycles);
  EXPECT_NEAR((*fits[0].queue_model.mean_cycles)[0], 391.42, 0.01);
  const auto raw = gpuprobe::model::atomics_variants_from_json(gpuprobe::read_json_file(
      root + "/tests/fixtures/gpuprobe-results/atomics.json")["atomics"]["variants"]);
  ASSERT_EQ(raw.size(), 8u);
  EXPECT_FALSE(raw[0].points.empty());
  EXPECT_TRUE(!raw[0].fit || !raw[0].fit->model);
  EXPECT_TRUE(gpuprobe::model::atomics_of(gpuprobe::model::profile{}).empty());
}

namespace {

// Every committed JSON file (committed_result_files) whose document `keep` takes.
template <class Keep> std::vector<fs::path> committed_json_where(Keep &&keep) {
  std::vector<fs::path> out;
  for (const auto &e : gpuprobe::test::committed_result_files())
    if (e.is_regular_file() && e.path().extension() == ".json") {
      const json doc = read_json_file(e.path().string());
      if (doc.is_object() && keep(doc))
        out.push_back(e.path());
    }
  return out;
}

// Every gpuprobe JSON file committed (raw results, profiles, tunings, validations, fleet units).
std::vector<fs::path> committed_gpuprobe_files() {
  return committed_json_where(
      [](const json &doc) { return doc.value("schema", "").rfind("gpuprobe.", 0) == 0; });
}

// What the head rule says a part reads as: absent or null -> empty; of its kind -> its value;
// else an error. Written from the rule, apart from model/file_head.cpp.
bool of_kind(const json &v, const std::string &kind) {
  return kind == "string"   ? v.is_string()
         : kind == "object" ? v.is_object()
         : kind == "array"  ? v.is_array()
                            : v.is_number();
}

} // namespace

// model::file_head (the head every file starts with, read typed): on every committed file it gives
// what the document holds.
TEST(FileHead, EveryCommittedFilesHeadIsWhatItHolds) {
  const auto files = committed_gpuprobe_files();
  ASSERT_GT(files.size(), 50u);
  for (const auto &f : files) {
    const json doc = read_json_file(f.string());
    const auto h = model::read_file_head(f.string());
    EXPECT_EQ(h.schema, doc["schema"].get<std::string>()) << f;
    EXPECT_EQ(h.uuid, doc.value("device", json::object()).value("uuid", "")) << f;
    EXPECT_EQ(h.probe, doc.value("probe", "")) << f;
    EXPECT_EQ(h.version, doc.value("meta", json::object()).value("version", "")) << f;
    const json argv = doc.value("meta", json::object()).value("argv", json::array());
    ASSERT_EQ(h.argv.size(), argv.size()) << f;
    for (std::size_t i = 0; i < argv.size(); ++i)
      EXPECT_EQ(h.argv[i], argv[i].get<std::string>()) << f;
  }
}

// Seeded mutations of committed heads: each part replaced by a value of another kind, by null, or
// removed. A part of its kind (or absent, or null) is read as the rule says; one of another kind is
// refused in one line that names it and the file.
TEST(FileHead, GeneratedMutationsAreReadOrRefusedInOneLine) {
  const auto files = committed_gpuprobe_files();
  struct part_spec {
    std::vector<std::string> path; // keys from the document
    std::string kind;
  };
  const std::vector<part_spec> parts = {{{"schema"}, "string"},
                                        {{"probe"}, "string"},
                                        {{"device"}, "object"},
                                        {{"device", "uuid"}, "string"},
                                        {{"device", "sm_clock_mhz_seen"}, "number"},
                                        {{"meta"}, "object"},
                                        {{"meta", "argv"}, "array"},
                                        {{"meta", "version"}, "string"},
                                        {{"meta", "git_commit"}, "string"},
                                        {{"disturbed"}, "array"}};
  const std::vector<json> values = {
      nullptr, 7, 2.5, "text", json::array({1, "a"}), json::object({{"k", 1}}), true};
  std::mt19937_64 rng(48);
  int refused = 0, read = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const auto &f = files[rng() % files.size()];
    json doc = read_json_file(f.string());
    const auto &spec = parts[rng() % parts.size()];
    json *parent = &doc;
    for (std::size_t i = 0; i + 1 < spec.path.size() && parent; ++i)
      parent = parent->is_object() && parent->contains(spec.path[i]) &&
                       (*parent)[spec.path[i]].is_object()
                   ? &(*parent)[spec.path[i]]
                   : nullptr;
    if (!parent)
      continue;
    const std::string key = spec.path.back();
    const bool remove = rng() % 8 == 0;
    const json value = values[rng() % values.size()];
    if (remove)
      parent->erase(key);
    else
      (*parent)[key] = value;
    const bool bad = !remove && !value.is_null() && !of_kind(value, spec.kind);
    const std::string where = "mutated " + f.filename().string();
    if (bad) {
      try {
        (void)model::file_head_from_json(doc, where);
        ADD_FAILURE() << where << ": " << key << " = " << value.dump() << " was read";
      } catch (const gpuprobe::error &e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(where), std::string::npos) << m;
        EXPECT_NE(m.find("\"" + key + "\""), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        ++refused;
      }
      continue;
    }
    const auto h = model::file_head_from_json(doc, where);
    ++read;
    const bool gone = remove || value.is_null();
    const auto text = [&] { return gone ? std::string() : value.get<std::string>(); };
    if (key == "uuid") {
      EXPECT_EQ(h.uuid, text());
    } else if (key == "schema") {
      EXPECT_EQ(h.schema, text());
    } else if (key == "probe") {
      EXPECT_EQ(h.probe, text());
    } else if (key == "version") {
      EXPECT_EQ(h.version, text());
    } else if (key == "sm_clock_mhz_seen") {
      EXPECT_EQ(h.sm_clock_mhz_seen.has_value(), !gone);
    } else if (key == "argv") {
      ASSERT_EQ(h.argv.size(), gone ? 0u : value.size());
      for (std::size_t i = 0; i < h.argv.size(); ++i)
        EXPECT_EQ(h.argv[i], value[i].is_string() ? value[i].get<std::string>() : value[i].dump());
    } else if (key == "device" && gone) {
      EXPECT_TRUE(h.uuid.empty() && h.device.empty());
    } else if (key == "meta" && gone) {
      EXPECT_TRUE(h.argv.empty() && h.version.empty());
    } else if (key == "disturbed") {
      const auto strings = gone ? 0 : std::count_if(value.begin(), value.end(), [](const json &e) {
        return e.is_string();
      });
      EXPECT_EQ(std::ptrdiff_t(h.disturbed.size()), strings) << "strings only";
    }
  }
  std::printf("file head: %d mutations refused in one line, %d read as the rule says\n", refused,
              read);
  EXPECT_GT(refused, 100);
  EXPECT_GT(read, 50);
}

namespace {

// Every gpuprobe-bench file committed.
std::vector<fs::path> committed_bench_files() {
  return committed_json_where([](const json &doc) { return doc.contains("benchmarks"); });
}

} // namespace

// model::bench_file (gpuprobe-bench's output, typed once for the report and the run's bench stage):
// every committed file reads, each case's name, time, error and counters as the document holds.
TEST(BenchFile, EveryCommittedBenchFileReadsAsItHolds) {
  const auto files = committed_bench_files();
  ASSERT_GE(files.size(), 10u);
  std::size_t cases = 0;
  for (const auto &f : files) {
    const json doc = read_json_file(f.string());
    const auto b = model::bench_file_from_json(doc, f.string());
    ASSERT_EQ(b.cases.size(), doc["benchmarks"].size()) << f;
    EXPECT_EQ(b.context_or("gpu_uuid", "none"),
              doc.value("context", json::object()).value("gpu_uuid", "none"))
        << f;
    for (std::size_t i = 0; i < b.cases.size(); ++i, ++cases) {
      const json &d = doc["benchmarks"][i];
      EXPECT_EQ(b.cases[i].name, d.value("name", ""));
      EXPECT_EQ(b.cases[i].error_occurred, d.value("error_occurred", false));
      EXPECT_EQ(b.cases[i].real_time, d.value("real_time", 0.0));
      for (const auto &[k, v] : d.items())
        if (v.is_number() && k != "real_time") {
          EXPECT_EQ(b.cases[i].number(k), v.get<double>()) << f << " " << k;
        }
    }
  }
  EXPECT_GT(cases, 100u);
}

// Seeded mutations of committed cases: a field gpuprobe reads given a value of another kind is
// refused in one line naming the field, the case and the file; a counter of another kind is not a
// number and is left out; a removed field reads as its default.
TEST(BenchFile, GeneratedMutationsAreReadOrRefusedInOneLine) {
  const auto files = committed_bench_files();
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"name", "string"},          {"time_unit", "string"},
      {"error_message", "string"}, {"error_occurred", "boolean"},
      {"real_time", "number"},     {"TAS", "counter"},
      {"free_ms", "counter"}};
  const std::vector<json> values = {7, 2.5, "text", json::array({1}), json::object(), true};
  const auto of = [](const json &v, const std::string &kind) {
    return kind == "string" ? v.is_string() : kind == "boolean" ? v.is_boolean() : v.is_number();
  };
  std::mt19937_64 rng(4646);
  int refused = 0, read = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const auto &f = files[rng() % files.size()];
    json doc = read_json_file(f.string());
    auto &list = doc["benchmarks"];
    if (list.empty())
      continue;
    const std::size_t i = rng() % list.size();
    const auto &[key, kind] = fields[rng() % fields.size()];
    const bool remove = rng() % 6 == 0;
    const json value = values[rng() % values.size()];
    if (remove)
      list[i].erase(key);
    else
      list[i][key] = value;
    const std::string where = "mutated " + f.filename().string();
    if (!remove && kind != "counter" && !of(value, kind)) {
      try {
        (void)model::bench_file_from_json(doc, where);
        ADD_FAILURE() << key << " = " << value.dump() << " was read";
      } catch (const gpuprobe::error &e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(where + " case " + std::to_string(i)), std::string::npos) << m;
        EXPECT_NE(m.find("\"" + key + "\""), std::string::npos) << m;
        ++refused;
      }
      continue;
    }
    const auto b = model::bench_file_from_json(doc, where);
    ++read;
    const auto &c = b.cases[i];
    if (kind == "counter") {
      EXPECT_EQ(c.number(key).has_value(), !remove && value.is_number()) << key << value.dump();
    } else if (key == "real_time") {
      EXPECT_EQ(c.real_time, remove ? 0.0 : value.get<double>());
    } else if (key == "error_occurred") {
      EXPECT_EQ(c.error_occurred, remove ? false : value.get<bool>());
    } else if (key == "name") {
      EXPECT_EQ(c.name, remove ? "" : value.get<std::string>());
    }
  }
  std::printf("bench file: %d mutations refused in one line, %d read\n", refused, read);
  EXPECT_GT(refused, 80);
  EXPECT_GT(read, 80);
}

// The regions decision's per-level rows, typed (the run summary's "regions per level" line): on
// every committed tuning they are the file's rows; seeded mutations of a row's fields to another
// kind are refused in one line naming the row.
TEST(TuningModel, RegionRowsAreTypedAndCheckedOverGeneratedMutations) {
  const auto files = committed("tuning.json");
  ASSERT_FALSE(files.empty());
  std::size_t rows = 0;
  for (const auto &f : files) {
    const json doc = read_json_file(f.string());
    const auto levels = model::region_levels(model::read_tuning(f.string()));
    const json want =
        doc["decisions"].value("regions", json::object()).value("per_level", json::array());
    ASSERT_EQ(levels.size(), want.size()) << f;
    for (std::size_t i = 0; i < levels.size(); ++i, ++rows) {
      EXPECT_EQ(levels[i].level, want[i].value("level", "?"));
      EXPECT_EQ(levels[i].ratio.has_value(), want[i].contains("ratio"));
      EXPECT_EQ(levels[i].decision, want[i].value("decision", ""));
    }
  }
  EXPECT_GT(rows, 5u);
  std::mt19937_64 rng(4647);
  const std::vector<std::string> keys = {"level", "ratio", "decision"};
  const std::vector<json> values = {7, "text", json::array(), true, nullptr};
  int refused = 0;
  for (int trial = 0; trial < 120; ++trial) {
    json doc = read_json_file(files[rng() % files.size()].string());
    json &per_level = doc["decisions"]["regions"]["per_level"];
    if (!per_level.is_array() || per_level.empty())
      continue;
    const std::size_t i = rng() % per_level.size();
    const std::string key = keys[rng() % keys.size()];
    const json value = values[rng() % values.size()];
    per_level[i][key] = value;
    const bool ok = key == "ratio" ? value.is_number() : value.is_string();
    const auto t = model::tuning_from_json(doc, "mutated");
    if (ok) {
      EXPECT_NO_THROW(model::region_levels(t));
      continue;
    }
    try {
      (void)model::region_levels(t);
      ADD_FAILURE() << key << " = " << value.dump() << " was read";
    } catch (const gpuprobe::error &e) {
      EXPECT_NE(std::string(e.what()).find("per_level row " + std::to_string(i)), std::string::npos)
          << e.what();
      ++refused;
    }
  }
  EXPECT_GE(refused, 30) << "mutations that reached a row of another kind";
}

// model::run_record (what characterize writes of its own run, read back by its next run): on every
// committed profile it is what the file holds; seeded mutations of its parts to another kind are
// refused in one line naming the part, and a removed part reads as empty.
TEST(ProfileModel, RunRecordIsWhatTheFileHoldsAndMalformedPartsAreNamed) {
  const auto files = committed("profile.json");
  ASSERT_FALSE(files.empty());
  for (const auto &f : files) {
    const json doc = read_json_file(f.string());
    const auto r = model::run_record_from_json(doc, f.string());
    EXPECT_EQ(r.conditions, doc.value("conditions", json::object())) << f;
    EXPECT_EQ(r.stages.size(), doc.value("stages", json::array()).size()) << f;
    EXPECT_EQ(r.quick.has_value(), doc.contains("quick")) << f;
    const json again = doc.value("reanalyzed", json::object());
    EXPECT_EQ(r.measured_by, again.contains("measured_by") ? again["measured_by"]
                                                           : doc.value("meta", json::object()))
        << f;
    EXPECT_EQ(r.reanalyzed_times, again.value("times", 0)) << f;
  }
  const std::vector<std::pair<std::string, std::string>> parts = {{"conditions", "object"},
                                                                  {"quick", "boolean"},
                                                                  {"wall_seconds", "number"},
                                                                  {"stages", "array"},
                                                                  {"meta", "object"}};
  const std::vector<json> values = {7, "text", json::array(), json::object(), true};
  std::mt19937_64 rng(4648);
  int refused = 0;
  for (int trial = 0; trial < 200; ++trial) {
    json doc = read_json_file(files[rng() % files.size()].string());
    const auto &[key, kind] = parts[rng() % parts.size()];
    const json value = values[rng() % values.size()];
    doc[key] = value;
    const bool ok = kind == "object"    ? value.is_object()
                    : kind == "boolean" ? value.is_boolean()
                    : kind == "number"  ? value.is_number()
                                        : value.is_array();
    if (ok) {
      EXPECT_NO_THROW(model::run_record_from_json(doc, "mutated"));
      continue;
    }
    try {
      (void)model::run_record_from_json(doc, "mutated");
      ADD_FAILURE() << key << " = " << value.dump() << " was read";
    } catch (const gpuprobe::error &e) {
      EXPECT_NE(std::string(e.what()).find("mutated: \"" + key + "\""), std::string::npos)
          << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 100);
}

namespace {

// One reader of a results folder. Each of profile.json, tuning.json and validation.json
// absent, readable (a committed run's), not JSON, another schema, or a link to nothing: all 125
// mixes. The tolerant read (the report's) has a value exactly where the file reads and a one-line
// problem exactly where it is there and does not; the strict read (compare's, fleet's) refuses a
// folder without a profile or with any file that does not read, naming it, and otherwise holds
// the same values.
TEST(RunFolder, EveryMixOfAbsentReadableAndBrokenFilesIsReadOrRefusedAsItIs) {
  const std::string run = k_fixture_runs + "/nvidia-h100-80gb-hbm3-5dc71e3e";
  const std::vector<std::string> names = {"profile.json", "tuning.json", "validation.json"};
  enum state { absent, readable, not_json, other_schema, dangling, states };
  const fs::path root = fs::path(::testing::TempDir()) / "gpuprobe_run_folder_mixes";
  fs::remove_all(root);
  int strict_refused = 0;
  for (int mix = 0; mix < states * states * states; ++mix) {
    const fs::path dir = root / std::to_string(mix);
    fs::create_directories(dir);
    std::vector<state> st;
    for (int k = 0, m = mix; k < 3; ++k, m /= states) {
      st.push_back(state(m % states));
      const fs::path f = dir / names[std::size_t(k)];
      if (st[std::size_t(k)] == readable)
        fs::copy_file(run + "/" + names[std::size_t(k)], f);
      else if (st[std::size_t(k)] == not_json)
        std::ofstream(f) << "{\"schema\": ";
      else if (st[std::size_t(k)] == other_schema)
        std::ofstream(f) << R"({"schema": "gpuprobe.other/1"})";
      else if (st[std::size_t(k)] == dangling)
        fs::create_symlink(dir / ("gone-" + names[std::size_t(k)]), f);
    }
    const auto files = model::read_folder_files(dir.string());
    const auto check = [&](const auto &file, int k) {
      const state s = st[std::size_t(k)];
      EXPECT_EQ(file.path, (dir / names[std::size_t(k)]).string());
      EXPECT_EQ(file.value.has_value(), s == readable) << dir << " " << names[std::size_t(k)];
      EXPECT_EQ(!file.problem.empty(), s != absent && s != readable) << file.problem;
      EXPECT_EQ(file.problem.find('\n'), std::string::npos) << file.problem;
    };
    check(files.prof, 0);
    check(files.tuning, 1);
    check(files.valid, 2);
    const bool refused = st[0] != readable || (st[1] != absent && st[1] != readable) ||
                         (st[2] != absent && st[2] != readable);
    try {
      const auto r = model::read_run_folder(dir.string());
      EXPECT_FALSE(refused) << "mix " << mix << " was read";
      EXPECT_EQ(model::to_json(r.prof), model::to_json(*files.prof.value));
      EXPECT_EQ(r.tuning.has_value(), st[1] == readable);
      EXPECT_EQ(r.valid.has_value(), st[2] == readable);
    } catch (const error &e) {
      EXPECT_TRUE(refused) << "mix " << mix << ": " << e.what();
      const std::string why = e.what();
      const bool names_a_file = why.find("profile.json") != std::string::npos ||
                                why.find("tuning.json") != std::string::npos ||
                                why.find("validation.json") != std::string::npos;
      EXPECT_TRUE(names_a_file) << why;
      ++strict_refused;
    }
  }
  EXPECT_EQ(strict_refused,
            125 - 1 * 2 * 2); // a readable profile and each other file absent or readable
  fs::remove_all(root);
}

} // namespace
