// Files of version 1 (before what one entry of a TLB level covers was stored as "coverage_bytes",
// "coverage_bound" and "<level>.coverage_mib") read as they were meant. Every committed file is
// put back into its version-1 form (as_version_1: the keys version 1 named after the page, the
// schema "<family>/1"), and what this build reads of that form is what it reads of the file.
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "model/fleet.hpp"
#include "model/profile.hpp"
#include "model/tuning.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// `doc[now]` moved to `doc[old]`; the count of keys so moved grows by one.
void rename_back(json &doc, const char *now, const char *old, int &moved) {
  if (!doc.is_object() || !doc.contains(now))
    return;
  doc[old] = std::move(doc[now]);
  doc.erase(now);
  ++moved;
}

// A TLB level (a profile's level, candidate or cache effect, a stage's tested level) as version 1
// wrote it.
void level_as_version_1(json &L, int &moved) {
  rename_back(L, "coverage_bytes", "page_bytes", moved);
  rename_back(L, "coverage_bound", "page_bound", moved);
  rename_back(L, "coverage_note", "page_note", moved);
  if (L.is_object() && L.contains("evidence")) {
    rename_back(L["evidence"], "strides_at_or_above_coverage", "strides_at_or_above_page", moved);
    rename_back(L["evidence"], "strides_below_coverage", "strides_below_page", moved);
  }
  if (L.is_object() && L.contains("per_sm")) // the per-SM block keeps its level's coverage
    rename_back(L["per_sm"], "coverage_bytes", "page_bytes", moved);
}

// `doc` (a profile, a probe's result, a tuning or a fleet file) as version 1 wrote it; `moved`
// counts the keys renamed. Other files come back as they are.
json as_version_1(json doc, int &moved) {
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string())
    return doc;
  const std::string schema = doc["schema"];
  const auto family = schema.substr(0, schema.find('/'));
  const auto is = [&](const gpuprobe::schema::family &f) { return family == f.name; };
  if (!is(gpuprobe::schema::profile) && !is(gpuprobe::schema::result) &&
      !is(gpuprobe::schema::tuning) && !is(gpuprobe::schema::fleet))
    return doc;
  doc["schema"] = family + "/1";
  if (is(gpuprobe::schema::profile) && doc.contains("tlb"))
    for (const char *list : {"levels", "candidates", "cache_effects"})
      if (doc["tlb"].contains(list))
        for (auto &L : doc["tlb"][list])
          level_as_version_1(L, moved);
  if (is(gpuprobe::schema::result)) {
    for (const char *stage : {"tlb_conflict", "tlb_coverage", "tlb_per_sm"})
      if (doc.contains(stage) && doc[stage].contains("levels"))
        for (auto &row : doc[stage]["levels"]) {
          rename_back(row, "coverage_bytes", "page_bytes", moved);
          if (row.contains("tested"))
            level_as_version_1(row["tested"], moved);
        }
    if (doc.contains("sharing") && doc["sharing"].contains("params"))
      rename_back(doc["sharing"]["params"], "coverage_bytes", "page_bytes", moved);
  }
  if (is(gpuprobe::schema::tuning) && doc.contains("decisions") &&
      doc["decisions"].contains("regions"))
    rename_back(doc["decisions"]["regions"], "coverage_bytes", "page_bytes", moved);
  if (is(gpuprobe::schema::fleet)) {
    const auto names_back = [&](json &map) {
      json out = json::object();
      for (auto &[name, v] : map.items()) {
        std::string n = name;
        if (const auto at = n.rfind(".coverage_mib"); at != std::string::npos) {
          n = n.substr(0, at) + ".page_mib";
          ++moved;
        }
        out[n] = v;
      }
      map = out;
    };
    for (auto &u : doc["units"])
      names_back(u["numbers"]);
    for (auto &[name, m] : doc["models"].items())
      names_back(m["parameters"]);
  }
  return doc;
}

// Where `a` and `b` first differ, as JSON patch paths (nlohmann's diff): "" when they are equal.
std::string differences(const json &a, const json &b) {
  std::string out;
  for (const auto &op : json::diff(a, b))
    if (out.size() < 600)
      out += op.dump().substr(0, 200) + "\n";
  return out;
}

// What this build reads of a file of family `family` (its schema set aside), as JSON.
json read_as(const std::string &family, const json &doc, const std::string &source) {
  using namespace gpuprobe;
  json out;
  if (family == schema::profile.name) {
    auto p = model::profile_from_json(doc, source);
    p.schema.clear();
    out = model::to_json(p);
  } else if (family == schema::tuning.name) {
    out = model::to_json(model::tuning_from_json(doc, source));
  } else {
    out = model::to_json(model::fleet_from_json(doc, source));
  }
  out.erase("schema");
  return out;
}

// Every committed profile, tuning and fleet file reads the same in its version-1 form; the family
// of these files renames keys in profiles (levels and candidates), tunings and fleets alike.
TEST(SchemaVersions, EveryCommittedFileReadsTheSameInItsVersion1Form) {
  int files = 0, moved = 0, profiles_moved = 0;
  for (const auto &e : gpuprobe::test::committed_result_files()) {
    if (!e.is_regular_file() || e.path().extension() != ".json")
      continue;
    const json doc = gpuprobe::read_json_file(e.path().string());
    if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string())
      continue;
    const std::string schema = doc["schema"];
    const std::string family = schema.substr(0, schema.find('/'));
    if (family != gpuprobe::schema::profile.name && family != gpuprobe::schema::tuning.name &&
        family != gpuprobe::schema::fleet.name)
      continue;
    EXPECT_TRUE(gpuprobe::schema::profile.reads(schema) || gpuprobe::schema::tuning.reads(schema) ||
                gpuprobe::schema::fleet.reads(schema))
        << e.path();
    int n = 0;
    const json v1 = as_version_1(doc, n);
    ++files;
    moved += n;
    if (family == gpuprobe::schema::profile.name)
      profiles_moved += n;
    EXPECT_EQ(differences(read_as(family, v1, "v1"), read_as(family, doc, "now")), "") << e.path();
  }
  EXPECT_GE(files, 35);
  EXPECT_GE(profiles_moved, 100) << "the family holds levels with coverage, bounds and per-SM";
  EXPECT_GT(moved, profiles_moved) << "and tunings' regions and fleets' coverage figures";
}

// characterize --reanalyze of every committed run gives the same profile from the run's files in
// their version-1 form as from the files themselves (the stages' rows, tested levels and sharing
// parameters read under their old names).
TEST(SchemaVersions, EveryCommittedRunReanalyzesTheSameFromItsVersion1Files) {
  int runs = 0;
  for (const auto &run : gpuprobe::test::committed_run_folders()) {
    if (!fs::exists(run / "raw/tlb.json"))
      continue;
    const std::string now = gpuprobe::test::temp_path("v2_" + run.filename().string()),
                      old = gpuprobe::test::temp_path("v1_" + run.filename().string());
    int moved = 0;
    for (const auto &dir : {now, old}) {
      fs::remove_all(dir);
      fs::create_directories(dir + "/raw");
      for (const auto &e : fs::directory_iterator(run / "raw")) {
        if (e.path().extension() != ".json") {
          fs::copy_file(e.path(), dir + "/raw/" + e.path().filename().string());
          continue;
        }
        json doc = gpuprobe::read_json_file(e.path().string());
        if (dir == old)
          doc = as_version_1(doc, moved);
        std::ofstream(dir + "/raw/" + e.path().filename().string()) << doc.dump(1);
      }
      const auto r = gpuprobe::test::run_gpuprobe("characterize --reanalyze --out " + dir);
      ASSERT_EQ(r.exit_code, 0) << run << r.err;
    }
    EXPECT_GT(moved, 0) << run;
    json a = gpuprobe::read_json_file(now + "/profile.json"),
         b = gpuprobe::read_json_file(old + "/profile.json");
    for (json *p : {&a, &b})
      p->erase("meta"); // argv and time
    EXPECT_EQ(differences(gpuprobe::test::without_times(a), gpuprobe::test::without_times(b)), "")
        << run;
    EXPECT_EQ(b["schema"], gpuprobe::schema::profile.id()) << "written as this build writes";
    ++runs;
  }
  EXPECT_GE(runs, 5);
}

} // namespace
