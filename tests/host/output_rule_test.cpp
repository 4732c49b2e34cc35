// Issue 76: nothing of the user's touched. One output rule for every command that writes, tried on
// a seeded, generated family of output paths against input trees (links, FIFOs, devices, nesting,
// the same path twice), and the issue's hostile cases one by one. Each case asserts that no input
// byte changed and that nothing outside the output changed (the sandbox is fingerprinted before
// and after: every path, its kind, its bytes).
#include "allocators/load_tuning.hpp"
#include "common/json_io.hpp"
#include "common/outputs.hpp"
#include "common/process.hpp"
#include "test_util.hpp"
#include "tests/common/binary_path.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <thread>

using namespace gpuprobe;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string k_rule_run = test::committed_run("nvidia-h100-80gb-hbm3-bba9cd54") + "/";

std::string read_text(const std::string &path) { return test::read_all(path); }

std::string fresh_folder(const std::string &name) {
  const fs::path d = test::temp_path(name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

// A results folder with what report and compare read (raw/ left out: profile, tuning,
// validation).
void results_folder_at(const std::string &d) {
  fs::create_directories(d + "/raw");
  for (const char *f : {"profile.json", "tuning.json", "validation.json"})
    fs::copy_file(k_rule_run + f, d + "/" + f);
  std::ofstream(d + "/raw/note.txt") << "a raw file\n";
}

// Every path under `root` with its kind and bytes (links by their target text, never followed).
std::map<std::string, std::string> tree_fingerprint(const std::string &root) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const auto st = it->symlink_status();
    const std::string rel = it->path().lexically_relative(root).string();
    if (fs::is_symlink(st))
      out[rel] = "link:" + fs::read_symlink(it->path()).string();
    else if (fs::is_regular_file(st))
      out[rel] = "file:" + read_text(it->path().string());
    else if (fs::is_directory(st))
      out[rel] = "dir";
    else
      out[rel] = "special";
  }
  return out;
}

// What changed between two fingerprints, outside `allowed` (a path and what lies under it).
std::vector<std::string> changed_outside(const std::map<std::string, std::string> &before,
                                         const std::map<std::string, std::string> &after,
                                         const std::string &allowed) {
  const auto under = [&](const std::string &p) {
    return !allowed.empty() &&
           (p == allowed || p.rfind(allowed + "/", 0) == 0 ||
            // the temporaries and lock of a writer beside its output, gone again when it ends
            false);
  };
  std::vector<std::string> out;
  for (const auto &[p, v] : before)
    if (!under(p) && (!after.count(p) || after.at(p) != v))
      out.push_back("changed or gone: " + p);
  for (const auto &[p, v] : after)
    if (!under(p) && !before.count(p))
      out.push_back("new: " + p);
  return out;
}

} // namespace

// The generated family: for each seed, a sandbox with two results folders A and B, a fleet folder
// and a sweep file; a command that writes (compare, report, fleet, analyze tlb, tune, validate,
// characterize --reanalyze, run: the last four end without a GPU here, after their checks, and must
// leave nothing behind either), and an output drawn from the kinds the rule decides
// (an input file, a path inside an input folder, an input folder itself, a folder holding an input,
// a link to an input, a FIFO, a character device, the same path as the command's other output,
// and a new path outside the inputs). The expected verdict is the rule's; every case asserts that
// nothing outside the output path changed, and for a refusal that nothing changed at all.
TEST(OutputRule, AGeneratedFamilyOfOutputsAgainstInputTreesTouchesNoInput) {
  const int cases = 240;
  std::mt19937 rng(7601);
  int refused = 0, written = 0, failures = 0;
  const std::string sweep = test::fixture("P100/TLB-Test-12-80-1024-4096.csv");
  for (int c = 0; c < cases; ++c) {
    const std::string root = fresh_folder("family-" + std::to_string(c));
    results_folder_at(root + "/A");
    results_folder_at(root + "/B");
    fs::create_directories(root + "/out");
    fs::copy_file(sweep, root + "/sweep.csv");
    ASSERT_EQ(::mkfifo((root + "/fifo").c_str(), 0644), 0);
    fs::create_symlink(root + "/A/profile.json", root + "/link-to-input.json");
    fs::create_symlink("/dev/null", root + "/link-to-null");
    enum kind {
      input_file,
      inside_input,
      input_folder,
      holds_input,
      link_to_input,
      fifo,
      device,
      same_twice,
      fresh_path
    };
    const kind k = kind(rng() % 9);
    // compare, report, fleet, analyze tlb, tune, validate, characterize --reanalyze, run
    const int command = int(rng() % 8);
    std::string out;
    bool folder_out = command == 1 || command == 2 || command >= 6;
    switch (k) {
    case input_file:
      out = command == 3 ? root + "/sweep.csv" : root + "/A/profile.json";
      break;
    case inside_input:
      out = root + "/A/raw/" + (folder_out ? "made" : "made.json");
      break;
    case input_folder:
      out = root + "/A";
      break;
    case holds_input:
      out = root;
      break;
    case link_to_input:
      out = root + "/link-to-input.json";
      break;
    case fifo:
      out = root + "/fifo";
      break;
    case device:
      out = (rng() % 2) ? std::string("/dev/null") : root + "/link-to-null";
      break;
    case same_twice:
      out = root + "/out/twice" + (folder_out ? "" : ".json");
      break;
    case fresh_path:
      out = root + "/out/new" + (folder_out ? "" : ".json");
      break;
    }
    std::vector<std::string> args;
    // The rule's verdict: a new path outside the inputs is written; the same path as a command's
    // only output is no second output; analyze's inputs are files, so A/raw is no input of it.
    bool may_write =
        k == fresh_path || (k == same_twice && command != 0) || (k == inside_input && command == 3);
    switch (command) {
    case 0:
      args = {"compare", root + "/A", root + "/B", "--out", out};
      if (k == same_twice)
        args.insert(args.end(), {"--markdown", out});
      break;
    case 1:
      args = {"report", "--input", root + "/A", "--out", out, "--python", "true"};
      break;
    case 2:
      args = {"fleet", "--input", root + "/A", "--out", out};
      if (k == same_twice) // fleet has one output: the same input twice instead
        args = {"fleet", "--input", root + "/A", root + "/A", "--out", out};
      break;
    case 3:
      args = {"analyze", "tlb", "--input", root + "/sweep.csv", "--out", out};
      if (k == same_twice) // one output: the input given twice
        args = {"analyze",           "tlb",   "--input", root + "/sweep.csv",
                root + "/sweep.csv", "--out", out};
      break;
    case 4:
      args = {"tune", "--profile", root + "/A/profile.json", "--out", out};
      may_write = false; // no GPU here: tune ends in an error after its checks, writing nothing
      break;
    case 5:
      args = {"validate", "--tuning", root + "/A/tuning.json", "--out", out};
      may_write = false; // likewise
      break;
    case 6: // a folder without raw sweeps, or no folder at all: refused, nothing made or left
      args = {"characterize", "--reanalyze", "--out", out};
      may_write = false;
      break;
    default: // no GPU here: run ends in an error, leaving no folder or lock behind
      args = {"run", "--quick", "--out", out};
      may_write = false;
      break;
    }
    const auto before = tree_fingerprint(root);
    const auto r = test::run_gpuprobe_argv(args);
    const auto after = tree_fingerprint(root);
    const std::string rel = fs::path(out).lexically_relative(root).string();
    const bool outside_root = rel.rfind("..", 0) == 0;
    const std::string what = "case " + std::to_string(c) + " kind " + std::to_string(int(k)) +
                             " command " + args[0] + " -> " + out + ": exit " +
                             std::to_string(r.exit_code) + " " + r.err;
    if (may_write && (r.exit_code == 0 || r.exit_code == 3)) {
      ++written;
      const auto diff = changed_outside(before, after, outside_root ? "" : rel);
      EXPECT_TRUE(diff.empty()) << what << (diff.empty() ? "" : diff.front());
      failures += !diff.empty();
    } else {
      EXPECT_NE(r.exit_code, 0) << what;
      if (k != fresh_path || !may_write)
        ++refused;
      const auto diff = changed_outside(before, after, "");
      EXPECT_TRUE(diff.empty()) << what << (diff.empty() ? "" : diff.front());
      failures += !diff.empty() || r.exit_code == 0;
    }
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
    fs::remove_all(root);
  }
  std::printf("output rule family: %d cases over 8 writers, %d refused (or ended without a GPU), "
              "%d written, %d with an input or outside byte changed\n",
              cases, refused, written, failures);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(refused, cases / 2); // the family is mostly hostile
  EXPECT_GT(written, 10);        // and writes where the rule allows
}

TEST(OutputRule, CompareNeverWritesOverItsInputsAndRefusesBeforePrinting) {
  const std::string root = fresh_folder("compare-inputs");
  results_folder_at(root + "/A");
  results_folder_at(root + "/B");
  ASSERT_EQ(::mkfifo((root + "/fifo").c_str(), 0644), 0);
  const std::vector<std::vector<std::string>> hostile = {
      {"--out", root + "/A/profile.json"},
      {"--markdown", root + "/B/tuning.json"},
      {"--html", root + "/A/raw/note.txt"},
      {"--reanalyze", "--out", root + "/B/validation.json"},
      {"--out", root + "/fifo"},
      {"--out", "/dev/null"},
      {"--out", root + "/same.json", "--markdown", root + "/same.json"},
      {"--out", ""},
  };
  for (const auto &extra : hostile) {
    std::vector<std::string> args = {"compare", root + "/A", root + "/B"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto before = tree_fingerprint(root);
    const auto r = test::run_gpuprobe_argv(args);
    EXPECT_EQ(r.exit_code, 1) << extra.front() << " " << r.err;
    EXPECT_TRUE(r.out.empty()) << "printed before refusing: " << r.out.substr(0, 200);
    EXPECT_NE(r.err.find("gpuprobe: error: "), std::string::npos) << r.err;
    EXPECT_TRUE(changed_outside(before, tree_fingerprint(root), "").empty()) << extra.front();
  }
  // A fleet baseline given as --out too.
  const std::string fleet_json = root + "/fleet.json";
  std::ofstream(fleet_json) << "{}";
  const auto r = test::run_gpuprobe_argv(
      {"compare", root + "/A", "--baseline", fleet_json, "--out", fleet_json});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(read_text(fleet_json), "{}");
}

TEST(OutputRule, NoWriterFollowsALinkOrOpensAFifoPlantedAtItsNames) {
  const std::string root = fresh_folder("planted");
  // A link at this process's temporary name: the write goes past it, the link's target is intact
  // and the final name is a regular file.
  std::ofstream(root + "/victim.txt") << "mine\n";
  const std::string out = root + "/c.json";
  fs::create_symlink(root + "/victim.txt", out + ".tmp." + std::to_string(::getpid()));
  write_json_atomic(out, json{{"a", 1}});
  EXPECT_EQ(read_text(root + "/victim.txt"), "mine\n");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(out)));
  EXPECT_EQ(read_json_file(out)["a"], 1);
  // A link at DIR/.gpuprobe.lock: characterize --reanalyze refuses, the target is left as it was.
  results_folder_at(root + "/R");
  fs::create_symlink(root + "/victim.txt", root + "/R/.gpuprobe.lock");
  auto r = test::run_gpuprobe_argv({"characterize", "--reanalyze", "--out", root + "/R"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  EXPECT_EQ(read_text(root + "/victim.txt"), "mine\n");
  // A FIFO at .gpuprobe.lock: report says so at once instead of blocking in open().
  results_folder_at(root + "/F");
  ASSERT_EQ(::mkfifo((root + "/F/.gpuprobe.lock").c_str(), 0644), 0);
  const auto t0 = std::chrono::steady_clock::now();
  r = test::run_gpuprobe_argv(
      {"report", "--input", root + "/F", "--out", root + "/page", "--python", "true"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root + "/page"));
}

TEST(OutputRule, AnOwnershipMarkCannotBeForgedOrLinkedAndALoneUserPageStays) {
  const std::string root = fresh_folder("forged");
  results_folder_at(root + "/A");
  // A user's folder with a hand-written mark listing its files, as the old mark did.
  const std::string user = root + "/user";
  fs::create_directories(user + "/figures");
  std::ofstream(user + "/index.html") << "<p>my page</p>";
  std::ofstream(user + "/figures/mine.png") << "png";
  std::ofstream(user + "/" + k_owned_marker)
      << json{{"schema", "gpuprobe.owned/1"},
              {"paths", {"index.html", "figures", "figures/mine.png"}}}
             .dump();
  // The report of folder A into `out`, as a user would run it (no figures drawn).
  const auto report_into = [&](const std::string &out) {
    return test::run_gpuprobe_argv(
        {"report", "--input", root + "/A", "--out", out, "--python", "true"});
  };
  auto r = report_into(user);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(read_text(user + "/figures/mine.png"), "png");
  // The same with a mark in the new format whose hashes are made up.
  std::ofstream(user + "/" + k_owned_marker, std::ios::trunc)
      << json{{"schema", "gpuprobe.owned/2"},
              {"paths",
               {{{"path", "index.html"}, {"kind", "file"}, {"bytes", 14}, {"fnv1a64", "0"}},
                {{"path", "figures"}, {"kind", "folder"}},
                {{"path", "figures/mine.png"}, {"kind", "file"}, {"bytes", 3}, {"fnv1a64", "0"}}}}}
             .dump();
  r = report_into(user);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(read_text(user + "/index.html"), "<p>my page</p>");
  // A real report's mark, linked into the user's folder: a link is not a mark.
  r = report_into(root + "/real");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
  fs::remove(user + "/" + k_owned_marker);
  fs::create_symlink(root + "/real/" + k_owned_marker, user + "/" + k_owned_marker);
  r = report_into(user);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(read_text(user + "/figures/mine.png"), "png");
  // The real report is replaced by the next (its mark vouches for every file).
  r = report_into(root + "/real");
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
  // ... but not once a file of it changed.
  std::ofstream(root + "/real/index.html", std::ios::app) << "<!-- my note -->";
  r = report_into(root + "/real");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(read_text(root + "/real/index.html").find("my note"), std::string::npos);
  // A lone index.md of the user's: report --format md does not replace it.
  fs::create_directories(root + "/md");
  std::ofstream(root + "/md/index.md") << "# my notes\n";
  r = test::run_gpuprobe_argv({"report", "--input", root + "/A", "--out", root + "/md", "--format",
                               "md", "--python", "true"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(read_text(root + "/md/index.md"), "# my notes\n");
  // fleet --out over a user's own fleet.md.
  fs::create_directories(root + "/fl");
  std::ofstream(root + "/fl/fleet.md") << "my fleet\n";
  r = test::run_gpuprobe_argv({"fleet", "--input", root + "/A", "--out", root + "/fl"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(read_text(root + "/fl/fleet.md"), "my fleet\n");
  // ... and fleet replaces its own.
  r = test::run_gpuprobe_argv({"fleet", "--input", root + "/A", "--out", root + "/fl2"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
  r = test::run_gpuprobe_argv({"fleet", "--input", root + "/A", "--out", root + "/fl2"});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
}

TEST(OutputRule, AFolderSwappedInWhileACommandRunsIsLeftAsItIs) {
  const std::string root = fresh_folder("swap");
  const std::string out = root + "/page";
  fs::create_directories(out);
  std::ofstream(out + "/index.html") << "old";
  mark_folder_owned(out, "report");
  folder_swap swap(out, "report"); // checked: every path vouched for
  // A user's folder moved into place meanwhile.
  fs::rename(out, root + "/page-was");
  fs::create_directories(out);
  std::ofstream(out + "/thesis.tex") << "chapter 1";
  const std::string done = root + "/done";
  fs::create_directories(done);
  std::ofstream(done + "/index.html") << "new";
  EXPECT_THROW(swap.replace(done), std::exception);
  EXPECT_EQ(read_text(out + "/thesis.tex"), "chapter 1");
  EXPECT_FALSE(fs::exists(done));
  // A file added to the checked folder meanwhile: left as well.
  fs::remove_all(out);
  fs::rename(root + "/page-was", out);
  folder_swap again(out, "report");
  std::ofstream(out + "/added.txt") << "mine";
  fs::create_directories(done);
  EXPECT_THROW(again.replace(done), std::exception);
  EXPECT_EQ(read_text(out + "/added.txt"), "mine");
  // Unchanged: replaced.
  fs::remove(out + "/added.txt");
  folder_swap third(out, "report");
  fs::create_directories(done);
  std::ofstream(done + "/index.html") << "new";
  third.replace(done);
  EXPECT_EQ(read_text(out + "/index.html"), "new");
}

TEST(OutputRule, RefusalsLeaveNothingBehind) {
  const std::string root = fresh_folder("leave-nothing");
  // run with no GPU to be seen: no lock, no folder.
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
  auto r = test::run_gpuprobe_argv({"run", "--out", root + "/new-run"});
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(root + "/new-run")) << r.err;
  // An existing folder keeps what it had, and gains no lock.
  fs::create_directories(root + "/kept");
  std::ofstream(root + "/kept/mine.txt") << "x";
  r = test::run_gpuprobe_argv({"characterize", "--quick", "--out", root + "/kept"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(root + "/kept/.gpuprobe.lock")) << r.err;
  EXPECT_EQ(read_text(root + "/kept/mine.txt"), "x");
  // --devices '' names no GPU: a usage error.
  r = test::run_gpuprobe_argv({"run", "--devices", "", "--out", root + "/d"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(fs::exists(root + "/d"));
  // characterize --reanalyze of a folder that is not there makes none.
  r = test::run_gpuprobe_argv({"characterize", "--reanalyze", "--out", root + "/nothing"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(fs::exists(root + "/nothing"));
  // report --out '' is one line, before anything is drawn.
  results_folder_at(root + "/A");
  r = test::run_gpuprobe_argv({"report", "--input", root + "/A", "--out", "", "--python", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--out '' is empty"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(OutputRule, CompareScratchIsCleanedOnSignalsAndAfterAKillAndCopiesNoHoles) {
  const std::string root = fresh_folder("scratch");
  const std::string tmp = fresh_folder("scratch-tmp");
  results_folder_at(root + "/A");
  results_folder_at(root + "/B");
  // A stale scratch folder of a process that is gone (SIGKILL left it): removed by the next run.
  const pid_t gone = ::fork();
  if (gone == 0)
    std::_Exit(0);
  ::waitpid(gone, nullptr, 0);
  const std::string stale = tmp + "/gpuprobe-compare-" + std::to_string(gone) + "-abcdef";
  fs::create_directories(stale + "/a");
  std::ofstream(stale + "/a/big") << std::string(1000, 'x');
  // A 20 GiB sparse file in A/raw: not read whole.
  {
    std::ofstream(root + "/A/raw/sparse.bin");
    fs::resize_file(root + "/A/raw/sparse.bin", 20ull << 30);
  }
  // TMPDIR for gpuprobe alone (this test's own files stay where they are).
  child_options o;
  o.capture = true;
  o.merge_stderr = true;
  o.env = {"TMPDIR=" + tmp};
  const auto t0 = std::chrono::steady_clock::now();
  const auto r =
      run_child({test::gpuprobe_binary(), "compare", "--reanalyze", root + "/A", root + "/B"}, o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_LT(s, 30) << "the sparse file was read whole";
  (void)r; // reanalysis of a folder without raw sweeps may fail: the scratch goes all the same
  EXPECT_TRUE(fs::is_empty(tmp)) << "scratch left in " << tmp;
  // SIGTERM while it runs: the scratch goes with it.
  for (const int sig : {SIGTERM, SIGINT}) {
    const pid_t p = ::fork();
    if (p == 0) {
      ::setenv("TMPDIR", tmp.c_str(), 1);
      ::execl(test::gpuprobe_binary().c_str(), "gpuprobe", "compare", "--reanalyze",
              (root + "/A").c_str(), (root + "/B").c_str(), (char *)nullptr);
      std::_Exit(127);
    }
    for (int i = 0; i < 200 && fs::is_empty(tmp); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ::kill(p, sig);
    int status = 0;
    ::waitpid(p, &status, 0);
    EXPECT_TRUE(fs::is_empty(tmp))
        << "signal " << sig << " left " << fs::directory_iterator(tmp)->path();
    fs::remove_all(tmp);
    fs::create_directories(tmp);
  }
}

TEST(OutputRule, AMissingValueIsNeverANumberNorAPass) {
  const std::string root = fresh_folder("missing");
  results_folder_at(root + "/A");
  results_folder_at(root + "/B");
  json p = read_json_file(root + "/B/profile.json");
  ASSERT_GE(p["tlb"]["levels"].size(), 2u);
  p["tlb"]["levels"][1]["miss_penalty_cycles"] = nullptr;
  write_json_atomic(root + "/B/profile.json", p);
  // compare: the gate does not pass on it.
  auto r = test::run_gpuprobe_argv({"compare", root + "/A", root + "/B", "--fail-on", "different"});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("MISSING"), std::string::npos);
  r = test::run_gpuprobe_argv(
      {"compare", root + "/A", root + "/B", "--fail-on", "different", "--allow-missing"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("missing, allowed"), std::string::npos) << r.out;
  // A missing validation.json, and null times.
  fs::remove(root + "/B/validation.json");
  p["tlb"]["levels"][1]["miss_penalty_cycles"] = 95.0;
  write_json_atomic(root + "/B/profile.json", p);
  r = test::run_gpuprobe_argv({"compare", root + "/A", root + "/B", "--fail-on", "different"});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_NE(r.out.find("validation.json"), std::string::npos);
  json v = read_json_file(root + "/A/validation.json");
  for (auto &w : v["workloads"])
    if (w.contains("tuned_ms"))
      w["tuned_ms"] = nullptr;
  write_json_atomic(root + "/B/validation.json", v);
  r = test::run_gpuprobe_argv({"compare", root + "/A", root + "/B", "--fail-on", "different"});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  // NaN and infinite options are refused.
  for (const char *bad : {"nan", "inf", "-nan", "1e999"}) {
    r = test::run_gpuprobe_argv({"compare", root + "/A", root + "/A", "--time-rel", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << r.err;
  }
  // The report: "not measured", never "+0", "0 entries", "up to 0 B", "~N^0".
  p["tlb"]["levels"][1]["miss_penalty_cycles"] = nullptr;
  p["tlb"]["levels"][0]["entries"] = nullptr;
  p["tlb"].erase("searched_up_to_bytes");
  int power_fits = 0;
  for (auto &variant : p["atomics"]["variants"])
    if (variant.contains("fit") && variant["fit"].contains("power_exponent")) {
      variant["fit"]["power_exponent"] = nullptr;
      ++power_fits;
    }
  EXPECT_GT(power_fits, 0) << "the committed run has the CAS loops' power-law fits";
  write_json_atomic(root + "/B/profile.json", p);
  fs::copy_file(k_rule_run + "validation.json", root + "/B/validation.json",
                fs::copy_options::overwrite_existing);
  json t = read_json_file(root + "/B/tuning.json");
  t["allocator"].erase("tlb_scope_bytes");
  write_json_atomic(root + "/B/tuning.json", t);
  r = test::run_gpuprobe_argv({"report", "--input", root + "/B", "--out", root + "/page",
                               "--format", "md", "--python", "true"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
  const std::string md = read_text(root + "/page/index.md");
  EXPECT_EQ(md.find("+0 ("), std::string::npos);
  EXPECT_EQ(md.find("up to 0 B"), std::string::npos);
  EXPECT_EQ(md.find("| 0 entries"), std::string::npos);
  EXPECT_NE(md.find("not measured"), std::string::npos);
  EXPECT_NE(md.find("not in tuning.json"), std::string::npos) << md.substr(0, 3000);
  EXPECT_EQ(md.find("N^0"), std::string::npos);
  EXPECT_NE(md.find("exponent not measured"), std::string::npos);
  // fleet: "—" for the missing penalty, never "+0".
  r = test::run_gpuprobe_argv({"fleet", "--input", root + "/B", "--out", root + "/fleet"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
  const std::string fleet_md = read_text(root + "/fleet/fleet.md");
  EXPECT_EQ(fleet_md.find("+0,"), std::string::npos) << fleet_md;
  EXPECT_NE(fleet_md.find("+—"), std::string::npos) << fleet_md;
}

TEST(OutputRule, BoundsAndMessagesAPersonReads) {
  const std::string root = fresh_folder("bounds");
  results_folder_at(root + "/A");
  // Past 4,096 validation rows (the issue's file had 300,000: report ran past 60 s): refused in
  // one line, the rest drawn, in seconds.
  json v = read_json_file(root + "/A/validation.json");
  const json row = v["workloads"][0];
  v["workloads"] = json::array();
  for (int i = 0; i < 20000; ++i)
    v["workloads"].push_back(row);
  write_json_atomic(root + "/A/validation.json", v);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = test::run_gpuprobe_argv({"report", "--input", root + "/A", "--out", root + "/page",
                                    "--format", "md", "--python", "true"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30);
  EXPECT_NE((r.out + r.err).find("more than gpuprobe reads (4096)"), std::string::npos)
      << r.out << r.err;
  // fleet --input U --input U: one unit, not "in two folders, X and X".
  fs::copy_file(k_rule_run + "validation.json", root + "/A/validation.json",
                fs::copy_options::overwrite_existing);
  r = test::run_gpuprobe_argv(
      {"fleet", "--input", root + "/A", "--input", root + "/A", "--out", root + "/fleet"});
  EXPECT_EQ((r.out + r.err).find("two folders"), std::string::npos) << r.out << r.err;
  // A UUID with a newline and an escape: the tuning loader's note keeps it on one line.
  alloc::tuning t;
  t.measured_on = "GPU-1\n\x1b[31mred";
  t.regions = 2;
  t.sm_region = {0, 1};
  const std::string note = alloc::bind_to_gpu(t, "GPU-2", "tuning.json");
  EXPECT_EQ(note.find('\n'), std::string::npos) << note;
  EXPECT_EQ(note.find('\x1b'), std::string::npos) << note;
  EXPECT_NE(note.find("\\x0a"), std::string::npos) << note;
  EXPECT_EQ(terminal_text("a\nb\x1b"), "a\\nb\\e");
  // characterize.sbatch with an option for RESULTS: one line, exit 2.
  int status =
      std::system(("bash " + std::string(GPUPROBE_SOURCE_DIR) +
                   "/scripts/slurm/characterize.sbatch -x >/dev/null 2>" + root + "/err.txt")
                      .c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(read_text(root + "/err.txt").find("is an option, not a folder"), std::string::npos);
  EXPECT_FALSE(fs::exists("-x"));
}

// Ctrl-C while report draws (plot.py importing matplotlib, or Python itself still starting):
// the plotter's own traceback never reaches the terminal, gpuprobe's one line does.
TEST(OutputRule, AnInterruptedReportPrintsNoPlotterTraceback) {
  const std::string root = fresh_folder("plot-sigint");
  results_folder_at(root + "/A");
  for (const int delay_ms : {20, 150, 400}) {
    const std::string err = root + "/err-" + std::to_string(delay_ms) + ".txt";
    const pid_t p = ::fork();
    if (p == 0) {
      if (!std::freopen(err.c_str(), "w", stderr) || !std::freopen("/dev/null", "w", stdout))
        std::_Exit(126);
      ::execl(test::gpuprobe_binary().c_str(), "gpuprobe", "report", "--input",
              (root + "/A").c_str(), "--out", (root + "/page").c_str(), (char *)nullptr);
      std::_Exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(p, SIGINT);
    int status = 0;
    ::waitpid(p, &status, 0);
    const std::string out = read_text(err);
    EXPECT_EQ(out.find("Traceback"), std::string::npos) << delay_ms << " ms: " << out;
    EXPECT_EQ(out.find("KeyboardInterrupt"), std::string::npos) << delay_ms << " ms: " << out;
    EXPECT_LE(std::count(out.begin(), out.end(), '\n'), 1) << delay_ms << " ms: " << out;
    fs::remove_all(root + "/page");
  }
}
