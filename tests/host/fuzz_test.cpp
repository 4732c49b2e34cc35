// No file crashes a reader. A seeded mutation loop over the committed files: each
// reader gets its file with one value replaced (a negative, huge, fractional or mistyped number,
// a string, null, an empty or deep container), a key removed, or its text cut, flipped or
// spliced. Issue 44: what a reader accepts must round-trip (written back and read again, the same
// document), and a refusal must be one gpuprobe line (gpuprobe::error, one line, not empty): a
// raw library exception or a crash fails. The number of inputs tried per reader is printed.
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "model/fleet.hpp"
#include "model/profile.hpp"
#include "model/tuning.hpp"
#include "model/validation.hpp"
#include "probes/atomics/driver.hpp"
#include "probes/conflict/analysis.hpp"
#include "probes/sampling/driver.hpp"
#include "probes/sharing/driver.hpp"
#include "probes/tlb/data.hpp"
#include "probes/tlb/driver.hpp"
#include "probes/tlb/levels.hpp"
#include "report/report.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

using namespace gpuprobe;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string k_runs = std::string(GPUPROBE_SOURCE_DIR) + "/tests/fixtures/runs/";
const std::string k_h100 = k_runs + "nvidia-h100-80gb-hbm3-bba9cd54/";

// Every value of `doc`, by pointer into it (the mutation picks one).
void collect(json &doc, std::vector<json *> &out) {
  out.push_back(&doc);
  if (doc.is_structured())
    for (auto &v : doc)
      collect(v, out);
}

json random_value(std::mt19937 &rng) {
  switch (rng() % 12) {
  case 0:
    return -1;
  case 1:
    return -2048.5;
  case 2:
    return 1e308;
  case 3:
    return 0;
  case 4:
    return 0.5;
  case 5:
    return "x";
  case 6:
    return nullptr;
  case 7:
    return json::array();
  case 8:
    return json::object();
  case 9:
    return true;
  case 10:
    return 18446744073709551615ull;
  default: {
    json deep = 1;
    for (int i = 0; i < 200; ++i)
      deep = json::array({deep});
    return deep;
  }
  }
}

// One mutant of `doc`'s text: most often one value or key changed, else the text damaged.
std::string mutant(const json &doc, const std::string &text, std::mt19937 &rng) {
  if (rng() % 4 != 0) {
    json m = doc;
    std::vector<json *> nodes;
    collect(m, nodes);
    json *n = nodes[rng() % nodes.size()];
    if (n->is_object() && !n->empty() && rng() % 2) {
      auto it = n->begin();
      std::advance(it, long(rng() % n->size()));
      n->erase(it.key());
    } else {
      *n = random_value(rng);
    }
    return m.dump();
  }
  std::string t = text;
  const std::size_t at = rng() % t.size();
  switch (rng() % 4) {
  case 0:
    t.resize(at);
    break; // cut
  case 1:
    t[at] = char(rng() % 256);
    break; // flip a byte
  case 2:
    t.insert(at, t.substr(rng() % t.size(), 64));
    break; // splice a piece again
  default:
    t.erase(at, std::min<std::size_t>(64, t.size() - at)); // drop a piece
  }
  return t;
}

struct fuzz_count {
  int tried = 0, accepted = 0;
  bool round_trip = true;
};

// `doc` with every array cut to its first `keep` elements: a sweep's 10,000 points or a 132 x 132
// matrix hold the same kinds of value as their first few, and a mutant of the whole costs 100 x
// more to read.
json trimmed(json doc, std::size_t keep) {
  if (doc.is_array() && doc.size() > keep)
    doc.erase(doc.begin() + long(keep), doc.end());
  if (doc.is_structured())
    for (auto &v : doc)
      v = trimmed(std::move(v), keep);
  return doc;
}

// `n` mutants of `file` (its arrays cut to `keep` elements where `keep` > 0: the cut file itself
// must read) through `read` (text in, the model written back out as JSON). An accepted mutant must
// read back to itself; a refused one must be one gpuprobe line.
fuzz_count fuzz(const std::string &file, int n, unsigned seed,
                const std::function<json(const std::string &)> &read, bool round_trip = true,
                std::size_t keep = 0) {
  json doc = json::parse(read_text_file(file));
  if (keep > 0) {
    doc = trimmed(std::move(doc), keep);
    EXPECT_NO_THROW(read(doc.dump())) << file << ": cut to " << keep << " elements an array";
  }
  const std::string text = doc.dump();
  std::mt19937 rng(seed);
  fuzz_count c;
  c.round_trip = round_trip;
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const std::string m = mutant(doc, text, rng);
    ++c.tried;
    json out;
    try {
      out = read(m);
    } catch (const gpuprobe::error &e) {
      const std::string w = e.what();
      if ((w.empty() || w.find('\n') != std::string::npos) && bad++ < 3)
        ADD_FAILURE() << file << " mutant " << i << ": a refusal that is not one line: " << w;
      continue;
    } catch (const std::exception &e) {
      if (bad++ < 3)
        ADD_FAILURE() << file << " mutant " << i
                      << ": refused with a raw exception, not a gpuprobe line: " << e.what();
      continue;
    }
    ++c.accepted;
    if (!round_trip)
      continue;
    try {
      const json again = read(out.dump());
      if (again != out && bad++ < 3)
        ADD_FAILURE() << file << " mutant " << i << ": accepted, but does not round-trip";
    } catch (const std::exception &again_error) {
      if (bad++ < 3)
        ADD_FAILURE() << file << " mutant " << i
                      << ": accepted, then its own output refused: " << again_error.what();
    }
  }
  EXPECT_EQ(bad, 0) << file << ": mutants broke the rule above";
  return c;
}

// Mutants a reader gets: `fallback` (the test's own), or GPUPROBE_FUZZ_INPUTS for a longer run
// (the CI count keeps the suite within its time; the readers' rule is the same at any count).
int inputs(int fallback) {
  const char *env = std::getenv("GPUPROBE_FUZZ_INPUTS");
  return env && std::atoi(env) > 0 ? std::atoi(env) : fallback;
}

void say(const char *reader, const fuzz_count &c) {
  std::printf("[fuzz] %-34s %5d inputs, %5d accepted%s, the rest refused in one line\n", reader,
              c.tried, c.accepted, c.round_trip ? " (each round-tripped)" : "");
}

} // namespace

TEST(Fuzz, EveryModelReaderSurvivesMutantsOfTheCommittedFiles) {
  const int n = inputs(500);
  say("model::profile_from_json", fuzz(k_h100 + "profile.json", n, 1, [](const std::string &t) {
        const auto p = model::profile_from_json(parse_json_text(t, "m"), "m");
        for (const auto &L : p.tlb.levels) // and the lines drawn from it
          (void)probes::level_line("L", L), (void)probes::structure_detail(L);
        return model::to_json(p);
      }, true, 16));
  say("model::profile_from_json (stage)",
      fuzz(k_h100 + "raw/tlb_profile.json", n, 2, [](const std::string &t) {
        return model::to_json(model::profile_from_json(parse_json_text(t, "m"), "m"));
      }, true, 16));
  say("model::tuning_from_json", fuzz(k_h100 + "tuning.json", n, 3, [](const std::string &t) {
        return model::to_json(model::tuning_from_json(parse_json_text(t, "m"), "m"));
      }, true, 16));
  say("model::validation_from_json",
      fuzz(k_h100 + "validation.json", n, 4, [](const std::string &t) {
        return model::to_json(model::validation_from_json(parse_json_text(t, "m"), "m"));
      }, true, 16));
  say("model::fleet_from_json",
      fuzz(std::string(GPUPROBE_SOURCE_DIR) + "/tests/fixtures/fleet/fleet.json", n, 5,
           [](const std::string &t) {
             return model::to_json(model::fleet_from_json(parse_json_text(t, "m"), "m"));
           }, true, 16));
}

// The typed models write back what they read: every committed profile.json, raw/tlb_profile.json
// and validation.json, read and written again, is the same document (the fields each model
// declares once, model/fields.hpp, and the rest kept as detail).
TEST(Fuzz, EveryCommittedProfileAndValidationIsWrittenBackAsRead) {
  int files = 0;
  for (const char *sub : {"tests/fixtures", "reports/examples"})
    for (const auto &e : fs::recursive_directory_iterator(fs::path(GPUPROBE_SOURCE_DIR) / sub)) {
      const std::string name = e.path().filename().string();
      if (name != "profile.json" && name != "tlb_profile.json" && name != "validation.json")
        continue;
      const json doc = read_json_file(e.path().string());
      if (!doc.contains("schema"))
        continue; // a hostile or partial fixture, read by the tests that made it
      ++files;
      const json back = name == "validation.json"
                            ? model::to_json(model::validation_from_json(doc, e.path().string()))
                            : model::to_json(model::profile_from_json(doc, e.path().string()));
      EXPECT_EQ(back, doc) << e.path();
    }
  EXPECT_GE(files, 20);
  std::printf("[fuzz] %d committed files written back as read\n", files);
}

TEST(Fuzz, EveryProbeResultReaderSurvivesMutantsOfTheCommittedFiles) {
  const int n = inputs(750);
  say("probes::tlb_result_from_json + analysis",
      fuzz(k_h100 + "raw/tlb_real.json", n / 3, 6, [](const std::string &t) {
        const std::string f = test::temp_path("fuzz_tlb.json");
        std::ofstream(f) << t;
        const auto r = probes::tlb_result_from_json(parse_json_text(t, "m"));
        probes::find_tlb_levels(probes::load_tlb_inputs({f}));
        return probes::to_json(r);
      }, true, 16));
  say("probes::sharing_result_from_json",
      fuzz(k_h100 + "raw/sharing_L2.json", n, 7, [](const std::string &t) {
        return probes::to_json(probes::sharing_result_from_json(parse_json_text(t, "m")));
      }, true, 16));
  say("probes::atomics_result_from_json",
      fuzz(k_h100 + "raw/atomics.json", n, 8, [](const std::string &t) {
        return probes::to_json(probes::atomics_result_from_json(parse_json_text(t, "m")));
      }));
  say("probes::sampling_result_from_json",
      fuzz(k_h100 + "raw/tlb_sampling.json", n, 9, [](const std::string &t) {
        return probes::to_json(probes::sampling_result_from_json(parse_json_text(t, "m")));
      }));
  // The typed reads the profile's parts take of a raw file: a tlb-conflict level row,
  // through to its summary against the profile's level; a tlb-sharing result's params.
  const auto profile = model::read_profile(k_h100 + "profile.json");
  say("probes::conflict_level_from_json + summary",
      fuzz(
          k_h100 + "raw/tlb_conflict.json", n, 11,
          [&](const std::string &t) {
            const json doc = parse_json_text(t, "m");
            json out = json::array();
            if (doc.is_object() && doc.contains("tlb_conflict") &&
                doc["tlb_conflict"].is_object() && doc["tlb_conflict"].contains("levels") &&
                doc["tlb_conflict"]["levels"].is_array())
              for (const auto &row : doc["tlb_conflict"]["levels"])
                for (const auto &L : profile.tlb.levels)
                  out.push_back(probes::conflict_summary(L, probes::conflict_level_from_json(row)));
            return out;
          },
          /*round_trip=*/false));
  say("probes::sharing_params_of_document",
      fuzz(
          k_h100 + "raw/sharing_L2.json", n, 12,
          [](const std::string &t) {
            const auto p = probes::sharing_params_of_document(parse_json_text(t, "m"));
            return json{{"entries", p.entries.value_or(-1)},
                        {"sample", p.sample ? p.sample->sms.value_or(-1) : -2}};
          },
          /*round_trip=*/false, 16));
}

// The whole report over a results folder whose profile.json is a mutant: drawn, or refused in
// one line, never a crash.
TEST(Fuzz, TheReportSurvivesAMutantProfile) {
  const fs::path dir = test::temp_path("fuzz_report");
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(k_h100 + "profile.json", dir / "profile.json");
  fs::copy_file(k_h100 + "tuning.json", dir / "tuning.json");
  fs::copy_file(k_h100 + "validation.json", dir / "validation.json");
  say("report::build_report (profile.json)",
      fuzz(
          k_h100 + "profile.json", 300, 10,
          [&](const std::string &t) {
            std::ofstream(dir / "profile.json", std::ios::trunc) << t;
            const auto c = report::build_report(dir.string());
            return json{{"figures", c.figures.size()}, {"tables", c.tables.size()}};
          },
          /*round_trip=*/false));
}
