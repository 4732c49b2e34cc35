// The gpuprobe binary: bad input gives a one-line error, a non-zero exit and no output file;
// `analyze tlb` turns the fixtures into a profile.
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

using gpuprobe::test::file_exists;
using gpuprobe::test::run_gpuprobe;
using gpuprobe::test::temp_path;

using gpuprobe::test::expect_one_line_error;

TEST(Cli, AnalyzeTlbOnK80FixturesWritesAProfile) {
  const auto out = temp_path("k80_profile.json");
  const auto dir = gpuprobe::test::fixture("K80");
  const auto r = run_gpuprobe("analyze tlb --input " + dir + "/TLB-Test-1-5-64-256.csv --input " +
                              dir + "/TLB-Test-48-300-1024-4096.csv --input " + dir +
                              "/TLB-Test-1500-5000-1024-4096.csv --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = gpuprobe::read_json_file(out);
  EXPECT_EQ(doc["schema"], gpuprobe::schema::profile.id());
  EXPECT_EQ(doc["device"]["name"], "Tesla K80");
  EXPECT_EQ(doc["tlb"]["levels"].size(), 3u);
  EXPECT_EQ(doc["tlb"]["levels"][0]["coverage_bytes"], 131072.0);
  EXPECT_TRUE(doc["tlb"].contains("searched_up_to_bytes"));
  EXPECT_TRUE(doc["meta"].contains("git_commit"));
  EXPECT_NE(r.out.find("L3:"), std::string::npos) << r.out;
}

TEST(Cli, MissingInputFile) {
  const auto out = temp_path("missing.json");
  expect_one_line_error(run_gpuprobe("analyze tlb --input /nonexistent.csv --out " + out), out);
}

TEST(Cli, MalformedAndNonNumericInput) {
  const auto out = temp_path("bad.json");
  const auto bad = temp_path("bad.csv");
  std::ofstream(bad) << "#GPU: x\n#,64,\n1,241,\n2,NaNx,\n3,250,\n";
  auto r = run_gpuprobe("analyze tlb --input " + bad + " --out " + out);
  expect_one_line_error(r, out);
  EXPECT_NE(r.err.find(":4:"), std::string::npos) << r.err;
  const auto broken = temp_path("broken.json");
  std::ofstream(broken) << "{\"schema\": \"gpuprobe.result/1\", ";
  expect_one_line_error(run_gpuprobe("analyze tlb --input " + broken + " --out " + out), out);
}

TEST(Cli, OutputFolderMustExist) {
  const auto r =
      run_gpuprobe("analyze tlb --input " + gpuprobe::test::fixture("K80/TLB-Test-1-5-64-256.csv") +
                   " --out /nonexistent-dir/p.json");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
}

TEST(Cli, UnknownDeviceIdOrNoDevice) {
  // With a GPU: "unknown device id 99"; without one (CI): "no CUDA device available".
  const auto out = temp_path("tlb.json");
  const auto r = run_gpuprobe("tlb --device 99 --out " + out);
  expect_one_line_error(r, out);
  EXPECT_TRUE(r.err.find("unknown device id 99") != std::string::npos ||
              r.err.find("no CUDA device") != std::string::npos)
      << r.err;
}

TEST(Cli, BadOptionsAreRejected) {
  const auto out = temp_path("x.json");
  auto r = run_gpuprobe("tlb --alloc bogus --out " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(file_exists(out));
  // --short-strides BELOW:TO: refused in one line naming the flag, before any GPU is touched.
  for (const char *bad : {"8M", "0:96G", "8M:0", "8M:lots", ":96G"}) {
    r = run_gpuprobe(std::string("tlb --short-strides ") + bad + " --out " + out);
    expect_one_line_error(r, out);
    EXPECT_NE(r.err.find("--short-strides"), std::string::npos) << bad << ": " << r.err;
  }
  r = run_gpuprobe("nosuchcommand");
  EXPECT_NE(r.exit_code, 0);
  r = run_gpuprobe("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("tlb"), std::string::npos);
}

// Bad input files are named for what they are: a directory, an empty file, not JSON.
TEST(Cli, MessagesNameTheRealProblem) {
  using gpuprobe::test::expect_one_line_error;
  const auto out = temp_path("messages_out.json");
  const auto dir = temp_path("a_folder");
  std::filesystem::create_directories(dir);
  expect_one_line_error(run_gpuprobe("analyze tlb --input " + dir + " --out " + out), out,
                        "is a directory");
  expect_one_line_error(run_gpuprobe("tune --profile " + dir + " --out " + out), out,
                        "is a directory");
  const auto empty = gpuprobe::test::write_temp("empty.json", "");
  expect_one_line_error(run_gpuprobe("analyze tlb --input " + empty + " --out " + out), out,
                        "is empty");
  expect_one_line_error(run_gpuprobe("tune --profile " + empty + " --out " + out), out, "is empty");
  const auto text = gpuprobe::test::write_temp("text.json", "hello");
  expect_one_line_error(run_gpuprobe("tune --profile " + text + " --out " + out), out,
                        "is not JSON");
  expect_one_line_error(run_gpuprobe("tlb-sharing --profile " + dir + " --out " + out), out,
                        "is a directory");
}

// Levels and candidates are numbered from 1 everywhere: --candidate 0 is refused as --level 0 is.
TEST(Cli, CandidatesAreNumberedFromOne) {
  using gpuprobe::test::expect_one_line_error;
  const auto out = temp_path("numbering_out.json");
  const auto prof = gpuprobe::test::write_temp(
      "numbering_profile.json",
      R"({"schema": "gpuprobe.profile/2", "tlb": {"levels": [], "candidates": [{"entries": 16, "coverage_bytes": 2097152, "reach_bytes": 33554432}]}})");
  expect_one_line_error(
      run_gpuprobe("tlb-sharing --profile " + prof + " --candidate 0 --out " + out), out,
      "C1..C1, numbered from 1");
  expect_one_line_error(
      run_gpuprobe("tlb-sharing --profile " + prof + " --candidate 2 --out " + out), out,
      "candidates 1..1");
}

// The subcommands `gpuprobe [PARENT] --help` lists (its "Subcommands:" section), in order.
std::vector<std::string> listed_subcommands(const std::string &parent) {
  const auto r = run_gpuprobe(parent + " --help");
  std::istringstream in(r.out);
  std::vector<std::string> subs;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Subcommands:", 0) == 0) {
      inside = true;
      continue;
    }
    if (inside && line.rfind("  ", 0) != 0)
      break;
    if (inside && line.size() > 2 && line[2] != ' ')
      subs.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return subs;
}

// Every subcommand's --help ends with one example of its use: every one the binary lists (with
// analyze's own), not a list kept by hand.
TEST(Cli, EverySubcommandHelpHasAnExample) {
  std::vector<std::string> all;
  for (const auto &sub : listed_subcommands(""))
    if (sub == "analyze")
      for (const auto &a : listed_subcommands("analyze"))
        all.push_back("analyze " + a);
    else
      all.push_back(sub);
  ASSERT_GE(all.size(), 14u) << "gpuprobe --help lists its subcommands";
  for (const char *must : {"tlb-conflict", "analyze tlb", "analyze sharing", "run"})
    EXPECT_NE(std::find(all.begin(), all.end(), must), all.end()) << must;
  for (const auto &sub : all) {
    const auto r = run_gpuprobe(sub + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub;
    EXPECT_NE(r.out.find("Example: gpuprobe " + sub), std::string::npos) << sub << ":\n" << r.out;
  }
  EXPECT_NE(run_gpuprobe("tlb-sharing --help").out.find("vmm-sparse"), std::string::npos);
  EXPECT_NE(run_gpuprobe("characterize --help").out.find("about 12-15 s on an"), std::string::npos)
      << "--quick's time as measured (11-15 s on two H100s)";
}
