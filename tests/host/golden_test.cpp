// Byte-for-byte guard of what gpuprobe writes from the committed example folders. Each example's
// report (the Markdown page, every figure's CSV and manifest) and the fleet over the committed
// units are compared with tests/fixtures/golden/. A change meant to alter the output regenerates
// them: GPUPROBE_UPDATE_GOLDEN=1 ctest -R Golden, and the diff of tests/fixtures/golden/ is
// reviewed in the commit.
#include "common/json_io.hpp"
#include "report/figures_drawn.hpp"
#include "report/report.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

const std::string k_source = GPUPROBE_SOURCE_DIR;

// The examples' folder in this checkout and the test's scratch folder vary by machine: they are
// replaced (other paths are data: the committed files record where they were made).
std::string portable(std::string s, const std::string &scratch = "") {
  for (const auto &[from, to] :
       {std::pair{k_source + "/reports/examples", std::string("<examples>")},
        std::pair{k_source + "/tests/fixtures", std::string("<fixtures>")},
        std::pair{scratch, std::string("<out>")}})
    for (std::size_t at = 0; !from.empty() && (at = s.find(from, at)) != std::string::npos;)
      s.replace(at, from.size(), to);
  return s;
}

// A JSON file gpuprobe wrote, less its `meta` (this process: commit, argv, time), which must be
// there and name the commit; the rest is what a golden file holds.
std::string without_meta(const std::string &text) {
  auto doc = nlohmann::json::parse(text);
  EXPECT_TRUE(doc.contains("meta") && doc["meta"].contains("git_commit"))
      << "no meta: " << text.substr(0, 200);
  doc.erase("meta");
  return doc.dump(2) + "\n";
}

// Compares `got` with the golden file `name` (or writes it under GPUPROBE_UPDATE_GOLDEN); on a
// difference, names the first line that differs.
void expect_golden(const std::string &name, const std::string &got) {
  const fs::path file = fs::path(k_source) / "tests/fixtures/golden" / name;
  if (std::getenv("GPUPROBE_UPDATE_GOLDEN")) {
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << got;
    return;
  }
  ASSERT_TRUE(fs::exists(file)) << file << " is missing: GPUPROBE_UPDATE_GOLDEN=1 writes it";
  const std::string want = gpuprobe::read_text_file(file.string());
  if (want == got)
    return;
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
    if (ea || eb || la != lb) {
      ADD_FAILURE() << name << " differs first at line " << line
                    << ":\n  golden: " << (ea ? "<end>" : la)
                    << "\n  now:    " << (eb ? "<end>" : lb);
      return;
    }
  }
}

// FNV-1a, 64 bits: a figure's CSV (up to hundreds of KB of TLB curve) is compared by its length
// and hash, not stored twice in the repository.
std::string golden_fingerprint(const std::string &bytes) {
  return std::to_string(bytes.size()) + " bytes, fnv1a64 " + gpuprobe::report::fnv1a64_hex(bytes);
}

// The report of one folder as one text: the page, then each figure's manifest and CSV.
std::string report_text(const std::string &folder) {
  const auto c = gpuprobe::report::build_report(k_source + "/" + folder);
  std::string s = gpuprobe::report::render_markdown(c);
  for (const auto &f : c.figures)
    s += "\n==== figure " + f.id + "\n" + f.manifest().dump(1) +
         "\ncsv: " + golden_fingerprint(f.csv) + "\n";
  return portable(s);
}

} // namespace

TEST(Golden, ExampleReportsAreUnchanged) {
  for (const char *folder : {"tests/fixtures/runs/nvidia-h100-80gb-hbm3-bba9cd54",
                             "reports/examples/runs/nvidia-h200-bc72dbee",
                             "tests/fixtures/runs/nvidia-h100-80gb-hbm3-f83ecb16",
                             "tests/fixtures/peers/nvidia-h100-80gb-hbm3-4748ab49",
                             "tests/fixtures/peers/nvidia-h100-80gb-hbm3-9ee96e87",
                             "tests/fixtures/peers/nvidia-h100-80gb-hbm3-f7c5e047",
                             "tests/fixtures/peers/nvidia-h200-40528cae",
                             "tests/fixtures/fleet/units/h100/nvidia-h100-80gb-hbm3-06b5a2b0",
                             "tests/fixtures/fleet/units/node-a/nvidia-h200-2a4d0660"}) {
    SCOPED_TRACE(folder);
    expect_golden(fs::path(folder).filename().string() + ".report.md", report_text(folder));
  }
}

TEST(Golden, FleetOfTheExamplesIsUnchanged) {
  const std::string out = gpuprobe::test::temp_path("golden_fleet");
  fs::remove_all(out);
  // The committed units, curated and kept for the tests, with the folders that are no units.
  std::string inputs;
  for (const char *in : {"/reports/examples/runs", "/tests/fixtures/runs",
                         "/tests/fixtures/fleet/units", "/tests/fixtures/peers"})
    inputs += " --input " + k_source + in;
  const auto r = gpuprobe::test::run_gpuprobe("fleet" + inputs + " --out " + out);
  ASSERT_EQ(r.exit_code, 3) << r.err; // done, with folders that are no units and a failed unit
  expect_golden("fleet.json",
                portable(without_meta(gpuprobe::read_text_file(out + "/fleet.json")), out));
  expect_golden("fleet.md", portable(gpuprobe::read_text_file(out + "/fleet.md"), out));
  expect_golden("fleet.stdout", portable(r.out, out));
}

// compare's JSON, Markdown and page over the two committed H100 units of one node (r42): their
// structure, per-SM maps, penalties and timings as compare reads them.
TEST(Golden, CompareOfTheCommittedUnitsIsUnchanged) {
  const std::string out = gpuprobe::test::temp_path("golden_compare");
  fs::remove_all(out);
  fs::create_directories(out);
  const std::string runs = k_source + "/tests/fixtures/runs/";
  const auto r = gpuprobe::test::run_gpuprobe(
      "compare " + runs + "nvidia-h100-80gb-hbm3-f83ecb16 " + runs +
      "nvidia-h100-80gb-hbm3-5dc71e3e --out " + out + "/compare.json --markdown " + out +
      "/compare.md --html " + out + "/compare.html");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("compare.json",
                portable(without_meta(gpuprobe::read_text_file(out + "/compare.json")), out));
  expect_golden("compare.md", portable(gpuprobe::read_text_file(out + "/compare.md"), out));
  expect_golden("compare.html", portable(gpuprobe::read_text_file(out + "/compare.html"), out));
  fs::remove_all(out);
}
