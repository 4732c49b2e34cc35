// Hostile input and interrupted commands. No shell stands between gpuprobe and its
// paths (every launcher gets quotes, $(...), backticks, ';', spaces and newlines as they are), no
// file crashes a reader, and SIGTERM/SIGHUP leave no temporary folder and no child behind.
#include "common/error.hpp"
#include "common/jobs.hpp"
#include "common/json_depth.hpp"
#include "common/json_io.hpp"
#include "common/process.hpp"
#include "model/profile.hpp"
#include "test_util.hpp"
#include "tests/common/binary_path.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace gpuprobe;
namespace fs = std::filesystem;

namespace {

// Names a shell would act on: each would create PWNED in the working folder if a shell read it.
const std::vector<std::string> k_hostile = {"o'$(touch PWNED)'x",
                                            "a\"$(touch PWNED)\"b",
                                            "`touch PWNED`",
                                            "x; touch PWNED",
                                            "with space",
                                            "new\nline",
                                            "$HOME"};

// A scratch folder to run in; PWNED must never appear there.
std::string scratch(const std::string &name) {
  const fs::path d = test::temp_path(name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

} // namespace

TEST(Hostile, RunChildPassesEveryArgumentAsItIsAndRunsInAHostileFolder) {
  const std::string dir = scratch("hostile-child");
  std::vector<std::string> argv = {"printf", "%s|"};
  argv.insert(argv.end(), k_hostile.begin(), k_hostile.end());
  child_options o;
  o.dir = dir;
  o.capture = true;
  const auto r = run_child(argv, o);
  ASSERT_TRUE(r.ok());
  std::string want;
  for (const auto &a : k_hostile)
    want += a + "|";
  EXPECT_EQ(r.output, want);
  for (const auto &name : k_hostile) { // a folder of each name: the child starts inside it
    const fs::path sub = fs::path(dir) / name;
    fs::create_directories(sub);
    child_options in;
    in.dir = sub.string();
    in.capture = true;
    const auto pwd = run_child({"pwd"}, in);
    EXPECT_EQ(pwd.output, fs::canonical(sub).string() + "\n") << name;
  }
  EXPECT_FALSE(fs::exists(fs::path(dir) / "PWNED"));
  EXPECT_THROW(run_child({"no-such-program; touch PWNED"}), error);
  EXPECT_FALSE(fs::exists("PWNED"));
}

TEST(Hostile, JobsPassTheirArgumentsAndEnvironmentAsTheyAre) {
  const std::string dir = scratch("hostile-jobs");
  std::vector<job> jobs;
  for (const auto &a : k_hostile)
    jobs.push_back({"[j]",
                    {"sh", "-c", "printf '%s|%s' \"$1\" \"$V\"", "sh", a},
                    {"V=" + a},
                    (fs::path(dir) / "log").string()});
  const auto r = run_jobs(jobs, nullptr);
  ASSERT_EQ(r.size(), k_hostile.size());
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].exit_code, 0);
    const std::string one_line = k_hostile[i].substr(k_hostile[i].rfind('\n') + 1);
    EXPECT_NE(r[i].tail.find(one_line + "|"), std::string::npos) << r[i].tail;
  }
  EXPECT_FALSE(fs::exists(fs::path(dir) / "PWNED"));
}

TEST(Hostile, ReportOutPythonAndPlotScriptPathsRunNoShell) {
  const std::string dir = scratch("hostile-report");
  const fs::path unit = fs::path(dir) / "u";
  fs::copy(std::string(GPUPROBE_SOURCE_DIR) + "/reports/examples/runs/nvidia-h200-bc72dbee", unit,
           fs::copy_options::recursive);
  for (const auto &name : {std::string("o'$(touch PWNED)'x"), std::string("r`touch PWNED`;x y")}) {
    const auto r =
        test::run_gpuprobe_argv({"report", "--input", "u", "--out", name, "--format", "md"}, dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(fs::path(dir) / name / "index.md")) << name;
  }
  auto r = test::run_gpuprobe_argv(
      {"report", "--input", "u", "--out", "p", "--python", "python3; touch PWNED"}, dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot start 'python3; touch PWNED'"), std::string::npos) << r.err;
  r = test::run_gpuprobe_argv(
      {"report", "--input", "u", "--out", "q", "--plot-script", "$(touch PWNED).py"}, dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(fs::path(dir) / "PWNED"));
  for (const auto &e : fs::directory_iterator(dir))
    EXPECT_NE(e.path().filename().string().rfind(".", 0), 0u)
        << "a temporary folder stayed: " << e.path();
}

// `report` of the curated H200 run in `dir` with /bin/sh running `plotter` (which must touch
// `dir`/plotter-running first) as its plot script; `sig` sent once the plotter runs. The exit
// status and the seconds from the signal until report's output pipe closed (every writer gone).
struct interrupted_report {
  int code = -1;
  double seconds = 0;
};
interrupted_report interrupt_report(const std::string &dir, const std::string &plotter, int sig) {
  fs::copy(std::string(GPUPROBE_SOURCE_DIR) + "/reports/examples/runs/nvidia-h200-bc72dbee",
           fs::path(dir) / "u", fs::copy_options::recursive);
  const std::string marker = (fs::path(dir) / "plotter-running").string();
  const std::string slow = (fs::path(dir) / "slow.sh").string();
  std::ofstream(slow) << plotter;
  const auto child = spawn_child({test::gpuprobe_binary(), "report", "--input", "u", "--out", "rep",
                                  "--python", "/bin/sh", "--plot-script", slow},
                                 dir);
  for (int i = 0; i < 200 && !fs::exists(marker); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_TRUE(fs::exists(marker)) << "the plotter did not start";
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(child.pid, sig);
  auto c = child;
  char buf[4096];
  while (::read(c.out_fd, buf, sizeof buf) > 0) {
  } // its last words, until every writer of the pipe is gone
  interrupted_report r;
  r.code = wait_child(c);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// SIGTERM or SIGHUP on report while its plotter runs: the plotter (and what it started) ends,
// the temporary folder is removed, and the exit status is 128 + the signal.
TEST(Hostile, InterruptedReportLeavesNoTemporaryFolderAndNoChild) {
  for (const int sig : {SIGTERM, SIGHUP, SIGINT}) {
    const std::string dir = scratch("hostile-interrupt-" + std::to_string(sig));
    // sleep: its child, of a duration no other process has (pgrep finds it below)
    const std::string sleep = "sleep 29." + std::to_string(100000 + ::getpid() % 100000);
    const auto [code, s] = interrupt_report(
        dir, "touch '" + (fs::path(dir) / "plotter-running").string() + "'\n" + sleep + "\ntrue\n",
        sig);
    EXPECT_EQ(code, 128 + sig) << "signal " << sig;
    EXPECT_LT(s, 5.0) << "it waited for the plotter to end by itself (signal " << sig << ")";
    for (const auto &e : fs::directory_iterator(dir))
      EXPECT_NE(e.path().filename().string().rfind(".rep.tmp", 0), 0u) << e.path();
    EXPECT_FALSE(fs::exists(fs::path(dir) / "rep"));
    // the plotter's own child (the sleep) got the signal with its process group: it ends in a
    // moment (not necessarily before report's exit: a loaded machine showed it still there)
    child_options o;
    o.capture = true;
    o.quiet_stderr = true;
    auto ps = run_child({"pgrep", "-f", sleep}, o);
    for (int i = 0; i < 40 && !ps.output.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ps = run_child({"pgrep", "-f", sleep}, o);
    }
    EXPECT_TRUE(ps.output.empty()) << "left running after 2 s: " << ps.output;
  }
}

// A command the plotter started that the signal does not reach (here one that ignores it, as a
// command forked while its shell deferred the signal did on a loaded CI machine) holds report's
// output pipe: report signals what is left of the plotter's group until it is gone and kills it
// at 2 s, so it neither runs its 29 s nor keeps the pipe open.
TEST(Hostile, AnInterruptedPlottersLeftoverIsKilled) {
  const std::string dir = scratch("hostile-leftover");
  const std::string sleep = "sleep 29." + std::to_string(200000 + ::getpid() % 100000);
  const auto r = interrupt_report(dir,
                                  "(trap '' INT TERM HUP; exec " + sleep + ") &\ntouch '" +
                                      (fs::path(dir) / "plotter-running").string() + "'\nwait\n",
                                  SIGTERM);
  EXPECT_EQ(r.code, 128 + SIGTERM);
  EXPECT_LT(r.seconds, 5.0) << "the plotter's leftover kept the pipe open";
}

// The nesting read before a file is parsed (common/json_depth.hpp: gpuprobe's readers and
// allocators/load_tuning.hpp) counts only brackets outside strings. Generated: 400 documents of
// arrays and objects 0-40 deep whose strings hold brackets, quotes and backslashes; each is let
// through at its own depth and stopped at one less, at the byte of a bracket that opens.
TEST(Hostile, NestingIsCountedOutsideStrings) {
  std::mt19937 rng(20261203);
  const std::vector<std::string> words = {"[", "{", "]]", "\"[", "\\", "}{", "a\\\"b{[", ""};
  int budget = 0; // structured values left to this document: its size stays small at any depth
  std::function<nlohmann::json(int)> value = [&](int room) -> nlohmann::json {
    const auto pick = rng() % 4;
    if (room == 0 || pick == 0 || --budget < 0)
      return words[rng() % words.size()];
    nlohmann::json v = pick == 1 ? nlohmann::json::array() : nlohmann::json::object();
    for (unsigned k = 0, n = 1 + unsigned(rng() % 3); k < n; ++k) {
      auto inner = value(room - 1);
      if (v.is_array())
        v.push_back(std::move(inner));
      else
        v[words[rng() % words.size()] + std::to_string(k)] = std::move(inner);
    }
    return v;
  };
  int deep = 0; // documents nested 20 or more deep
  for (int c = 0; c < 400; ++c) {
    budget = 300;
    const std::string text = value(int(rng() % 41)).dump();
    int depth = 0; // the document's own: what nlohmann built
    std::function<void(const nlohmann::json &, int)> walk = [&](const nlohmann::json &j, int d) {
      if (j.is_structured())
        depth = std::max(depth, d + 1);
      if (j.is_structured())
        for (const auto &e : j)
          walk(e, d + 1);
    };
    walk(nlohmann::json::parse(text), 0);
    deep += depth >= 20;
    EXPECT_EQ(json_too_deep_at(text, depth), 0u) << text;
    if (depth == 0)
      continue;
    const auto at = json_too_deep_at(text, depth - 1);
    ASSERT_GT(at, 0u) << text;
    EXPECT_TRUE(text[at - 1] == '[' || text[at - 1] == '{') << text;
  }
  std::printf("%d of 400 documents nested 20 or more deep\n", deep);
  EXPECT_GE(deep, 40);
}

// No file crashes a reader: nesting far past any gpuprobe file, a device, a loop of links and an
// empty file are each one line.
TEST(Hostile, FilesThatCrashedReadersAreOneLineErrors) {
  const std::string dir = scratch("hostile-files");
  const std::string deep = (fs::path(dir) / "profile.json").string();
  {
    std::ofstream out(deep);
    out << "{\"schema\":\"gpuprobe.profile/1\",\"x\":" << std::string(200000, '[')
        << std::string(200000, ']') << "}";
  }
  try {
    read_json_file(deep);
    FAIL();
  } catch (const error &e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper than 256 levels"), std::string::npos)
        << e.what();
  }
  for (const char *cmd : {"report --input D --out D/rep", "fleet --input D --out D/fl",
                          "tune --profile D/profile.json --out D/t.json"}) {
    std::string args = cmd;
    for (std::size_t p; (p = args.find('D')) != std::string::npos;)
      args.replace(p, 1, dir);
    const auto r = test::run_gpuprobe(args);
    EXPECT_NE(r.exit_code, 139) << cmd << ": a crash";
    EXPECT_NE(r.exit_code, 0) << cmd;
    EXPECT_LT(r.exit_code, 128) << cmd << ": " << r.err;
  }
  fs::create_symlink("/dev/zero", fs::path(dir) / "zero.json");
  EXPECT_THROW(read_json_file((fs::path(dir) / "zero.json").string()), error);
  fs::create_symlink("loop2.json", fs::path(dir) / "loop1.json");
  fs::create_symlink("loop1.json", fs::path(dir) / "loop2.json");
  try {
    read_json_file((fs::path(dir) / "loop1.json").string());
    FAIL();
  } catch (const error &e) {
    EXPECT_NE(std::string(e.what()).find("loop of symbolic links"), std::string::npos) << e.what();
  }
}

// Inputs are never outputs; two GPUs are never merged silently; impossible values are refused
// where they are read (items 3 and 4).
TEST(Hostile, InputsAreNeverOutputsAndTwoGpusAreNotOneSilently) {
  const std::string dir = scratch("hostile-inputs");
  const std::string h100 =
      std::string(GPUPROBE_SOURCE_DIR) + "/tests/fixtures/runs/nvidia-h100-80gb-hbm3-bba9cd54";
  const std::string h200 =
      std::string(GPUPROBE_SOURCE_DIR) + "/reports/examples/runs/nvidia-h200-bc72dbee";
  const fs::path raw = fs::path(dir) / "raw";
  fs::create_directories(raw);
  fs::copy_file(h100 + "/raw/tlb.json", raw / "tlb.json");
  const auto before = fs::file_size(raw / "tlb.json");
  for (const char *sub : {"tlb", "sharing"}) {
    const std::string in = (raw / (std::string(sub) == "tlb" ? "tlb.json" : "tlb.json")).string();
    const auto r = test::run_gpuprobe_argv({"analyze", sub, "--input", in, "--out", in});
    EXPECT_NE(r.exit_code, 0) << sub;
    EXPECT_NE(r.err.find("is its input"), std::string::npos) << r.err;
  }
  EXPECT_EQ(fs::file_size(raw / "tlb.json"), before) << "the sweep is untouched";
  // the same file through another spelling
  auto r = test::run_gpuprobe_argv({"analyze", "tlb", "--input", (raw / "tlb.json").string(),
                                    "--out", (raw / ".." / "raw" / "tlb.json").string()});
  EXPECT_NE(r.err.find("is its input"), std::string::npos) << r.err;
  // two GPUs' sweeps: refused, naming both; --allow-mixed takes them as one on purpose
  const std::string out = (fs::path(dir) / "p.json").string();
  r = test::run_gpuprobe_argv(
      {"analyze", "tlb", "--input", h100 + "/raw/tlb.json", h200 + "/raw/tlb.json", "--out", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("was measured on GPU-bc72dbee"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  r = test::run_gpuprobe_argv({"analyze", "tlb", "--input", h100 + "/raw/tlb.json",
                               h200 + "/raw/tlb.json", "--out", out, "--allow-mixed"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // --reanalyze over a raw/ holding another GPU's file: refused, naming it
  const fs::path unit = fs::path(dir) / "unit";
  fs::copy(h100, unit, fs::copy_options::recursive);
  fs::copy_file(h200 + "/raw/sharing_L2.json", unit / "raw" / "sharing_L2.json",
                fs::copy_options::overwrite_existing);
  r = test::run_gpuprobe_argv({"characterize", "--reanalyze", "--out", unit.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("sharing_L2.json (GPU-bc72dbee"), std::string::npos) << r.err;
  // fleet: --out inside a unit is refused; its units stay as they were
  r = test::run_gpuprobe_argv({"fleet", "--input", dir, "--out", (unit / "fleet").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("lies in the unit folder"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(unit / "fleet"));
}

TEST(Hostile, ImpossibleValuesAndMissingKeysAreRefusedWhereTheyAreRead) {
  const std::string h100 = std::string(GPUPROBE_SOURCE_DIR) +
                           "/tests/fixtures/runs/nvidia-h100-80gb-hbm3-bba9cd54/profile.json";
  const json good = read_json_file(h100);
  EXPECT_NO_THROW(model::profile_from_json(good, "good"));
  const auto refused = [&](const std::function<void(json &)> &spoil, const std::string &needle) {
    json doc = good;
    spoil(doc);
    try {
      model::profile_from_json(doc, "p.json");
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const error &e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  refused([](json &d) { d["tlb"]["levels"][1]["entries"] = -2048; }, "entries is -2048");
  refused([](json &d) { d["tlb"]["levels"][1]["entries"] = 1e308; }, "not entries");
  refused([](json &d) { d["tlb"]["levels"][1]["ways"] = 7; }, "is not ways x sets");
  refused([](json &d) { d["tlb"]["levels"][0]["coverage_bytes"] = 3 << 20; }, "no power of two");
  refused([](json &d) { d["tlb"]["levels"][0]["miss_penalty_cycles"] = -1; }, "not a finite");
  refused([](json &d) { d["tlb"]["levels"][0]["confidence"] = 7; }, "not in 0..1");
  refused([](json &d) { d = {{"schema", "gpuprobe.profile/1"}}; }, "key 'tlb' not found");
}

// The newcomer's messages.
TEST(Hostile, MessagesANewcomerTripsOn) {
  auto r = test::run_gpuprobe_argv({"reprot"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'report'?"), std::string::npos) << r.err;
  r = test::run_gpuprobe_argv({"tlb", "--bogus"});
  EXPECT_EQ(r.exit_code, 2) << "one status for every usage error";
  r = test::run_gpuprobe_argv({"tlb", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find("{false}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--no-control"), std::string::npos);
  r = test::run_gpuprobe_argv({"--help"});
  EXPECT_NE(r.out.find("Exit status: 0 done; 1 error"), std::string::npos) << r.out;
  r = test::run_gpuprobe_argv({"theory", "--model", "rw", "--pages", "18446744073709551615",
                               "--free", "10", "--threads", "20"});
  EXPECT_EQ(r.err.find("-9223372036854775808"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("N = 20, A = 10"), std::string::npos) << r.err;
  r = test::run_gpuprobe_argv(
      {"theory", "--model", "rw", "--pages", "100", "--free", "10", "--threads", "0.5"});
  EXPECT_NE(r.err.find("a whole number"), std::string::npos) << r.err;
  r = test::run_gpuprobe_argv({"theory", "--model", "crw", "--pages", "100", "--free", "50",
                               "--threads", "5", "--clusters", "1000"});
  EXPECT_NE(r.err.find("exceeds --free"), std::string::npos) << r.err;
  const std::string runs = std::string(GPUPROBE_SOURCE_DIR) + "/reports/examples/runs";
  r = test::run_gpuprobe_argv({"report", "--input", runs, "--out", test::temp_path("units-rep")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("gpuprobe fleet --input"), std::string::npos) << r.err;
  r = test::run_gpuprobe_argv({"tlb", "--out", test::temp_path("t.json")});
  if (r.exit_code != 0) { // no GPU here: say what works without one
    EXPECT_NE(r.err.find("without one, `report`, `fleet`"), std::string::npos) << r.err;
  }
}

TEST(Hostile, ALoopOfLinksInAResultsFolderIsNotDrawnWithItsReason) {
  const std::string dir = scratch("hostile-loop");
  const fs::path unit = fs::path(dir) / "u";
  fs::copy(std::string(GPUPROBE_SOURCE_DIR) + "/reports/examples/runs/nvidia-h200-bc72dbee", unit,
           fs::copy_options::recursive);
  fs::create_symlink("loopB.json", unit / "raw" / "loopA.json");
  fs::create_symlink("loopA.json", unit / "raw" / "loopB.json");
  fs::create_symlink("l2", fs::path(dir) / "l1");
  fs::create_symlink("l1", fs::path(dir) / "l2");
  auto r = test::run_gpuprobe_argv({"report", "--input", unit.string(), "--out",
                                    (fs::path(dir) / "rep").string(), "--format", "md"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("loopA.json: Too many levels of symbolic links"), std::string::npos)
      << r.out;
  r = test::run_gpuprobe_argv({"fleet", "--input", dir, "--out", (fs::path(dir) / "fl").string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("l1: Too many levels of symbolic links"), std::string::npos) << r.out;
}
