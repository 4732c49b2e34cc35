// Issue 44: nothing executed, nothing destroyed, nothing reused unmarked. Each test is a case
// from the issue, tried as a user would (the CLI, as root, no GPU): an output that would replace
// what is not gpuprobe's, an unbounded input, a lock bypassed through the environment, the public
// tuning loader, and one bad value that must leave the rest of the page drawn.
#include "allocators/load_tuning.hpp"
#include "common/error.hpp"
#include "common/folder_lock.hpp"
#include "common/json_io.hpp"
#include "common/outputs.hpp"
#include "common/process.hpp"
#include "model/fleet.hpp"
#include "model/profile.hpp"
#include "test_util.hpp"
#include "tests/common/binary_path.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

using namespace gpuprobe;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string k_hostile_run = test::committed_run("nvidia-h100-80gb-hbm3-bba9cd54") + "/";

std::string read_output(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string scratch_dir(const std::string &name) {
  const fs::path d = test::temp_path(name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

// A small results folder (profile and validation: the summary, tables and one figure).
std::string small_folder(const std::string &name) {
  const std::string d = scratch_dir(name);
  fs::copy_file(k_hostile_run + "profile.json", d + "/profile.json");
  fs::copy_file(k_hostile_run + "validation.json", d + "/validation.json");
  return d;
}

// A PID that no process has now (a child that has exited and was reaped).
pid_t dead_pid() {
  const pid_t p = ::fork();
  if (p == 0)
    std::_Exit(0);
  ::waitpid(p, nullptr, 0);
  return p;
}

std::string run_sh(const std::string &cmd, int &status) {
  const std::string out = test::temp_path("sh_out.txt");
  status = std::system((cmd + " >" + out + " 2>&1").c_str());
  status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return read_output(out);
}

} // namespace

TEST(HostileOutputs, AFileOutThatIsAFifoOrALinkIsRefusedAndLeftAsItWas) {
  const std::string d = scratch_dir("out-fifo");
  const std::string fifo = d + "/fifo", target = d + "/target.json", link = d + "/link.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::ofstream(target) << "mine\n";
  fs::create_symlink(target, link);
  for (const auto &out : {fifo, link}) {
    const auto r = test::run_gpuprobe_argv(
        {"analyze", "tlb", "--input", k_hostile_run + "raw/tlb.json", "--out", out});
    EXPECT_EQ(r.exit_code, 1) << out << ": " << r.err;
    EXPECT_NE(r.err.find("not a file gpuprobe writes"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_output(target), "mine\n");
  EXPECT_THROW(refuse_non_regular_target("/dev/null"), error); // what --out /dev/null would meet
  EXPECT_NO_THROW(refuse_non_regular_target(target));
  EXPECT_NO_THROW(refuse_non_regular_target(d + "/absent.json"));
}

TEST(HostileOutputs, ReportNeverDeletesAUsersFolderAndReplacesOnlyWhatItWrote) {
  const std::string in = small_folder("out-user-in");
  const std::string out = scratch_dir("out-user");
  fs::create_directories(out + "/figures");
  std::ofstream(out + "/index.html") << "my page";
  std::ofstream(out + "/figures/holiday.png") << "my photo";
  auto r = test::run_gpuprobe_argv({"report", "--input", in, "--out", out});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("did not write") == std::string::npos ? r.err.find("no mark")
                                                             : r.err.find("did not write"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_output(out + "/figures/holiday.png"), "my photo");
  EXPECT_EQ(read_output(out + "/index.html"), "my page");
  // A page the command wrote is replaced; a file a user adds to it afterwards stops that.
  const std::string page = test::temp_path("out-user-page");
  fs::remove_all(page);
  r = test::run_gpuprobe_argv({"report", "--input", in, "--out", page});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(page + "/" + k_owned_marker));
  r = test::run_gpuprobe_argv({"report", "--input", in, "--out", page});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ofstream(page + "/figures/notes.txt") << "mine";
  r = test::run_gpuprobe_argv({"report", "--input", in, "--out", page});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("holds 'figures/notes.txt', which gpuprobe report did not write"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_output(page + "/figures/notes.txt"), "mine");
}

TEST(HostileOutputs, ConcurrentReportsIntoOneOutTakeTurnsAndStaleTemporariesAreCleaned) {
  const std::string in = small_folder("out-conc-in");
  const std::string parent = scratch_dir("out-conc");
  const std::string out = parent + "/rep";
  const std::string stale = parent + "/.rep.tmp." + std::to_string(dead_pid());
  fs::create_directories(stale + "/figures"); // what a SIGKILLed report left
  std::vector<std::thread> runs;
  std::vector<test::run_result> results(8);
  for (int i = 0; i < 8; ++i)
    runs.emplace_back([&, i] {
      std::vector<std::string> argv = {
          test::gpuprobe_binary(), "report", "--input", in, "--out", out, "--plot-script",
          test::stub_plot_script()};
      child_options o;
      o.capture = true;
      o.merge_stderr = true;
      const auto c = run_child(argv, o);
      results[std::size_t(i)] = {c.exit_code, c.output, ""};
    });
  for (auto &t : runs)
    t.join();
  for (const auto &r : results)
    EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(out + "/index.html"));
  EXPECT_FALSE(fs::exists(stale)) << "a dead report's temporary folder is left";
  for (const auto &e : fs::directory_iterator(parent))
    EXPECT_EQ(e.path().filename(), "rep") << "left beside --out: " << e.path();
}

TEST(HostileOutputs, AFailedWriteToStdoutIsAnErrorAndConfigGetsTheReadersChecks) {
  int status = 0;
  std::string said = run_sh("(" + test::gpuprobe_binary() +
                                " theory --model rw --pages 100 --free 50 --threads 8 >/dev/full)",
                            status);
  EXPECT_EQ(status, 1) << said;
  EXPECT_NE(said.find("writing the output to standard output failed"), std::string::npos) << said;
  const std::string d = scratch_dir("config-fifo");
  const std::string fifo = d + "/opts.ini";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const std::string &cfg : {std::string("/dev/zero"), fifo}) {
    const auto t0 = std::chrono::steady_clock::now();
    said = run_sh("timeout 20 " + test::gpuprobe_binary() + " --config " + cfg +
                      " theory --model rw --pages 100 --free 50 --threads 8",
                  status);
    EXPECT_EQ(status, 1) << cfg << ": " << said;
    EXPECT_NE(said.find("not a regular file"), std::string::npos) << said;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5);
  }
}

TEST(HostileOutputs, UnboundedInputsAreRefusedInOneLine) {
  json p = read_json_file(k_hostile_run + "profile.json");
  json far = p;
  far["tlb"]["levels"][1]["sharing"]["groups"] = json::array({json::array({0, 1000000000})});
  try {
    model::profile_from_json(far, "far.json");
    ADD_FAILURE() << "an SM id of 10^9 was accepted";
  } catch (const error &e) {
    EXPECT_NE(std::string(e.what()).find("SM id 1000000000"), std::string::npos) << e.what();
  }
  json past = p; // an SM id under 4096 but past this GPU's SM count
  past["tlb"]["levels"][1]["sharing"]["groups"] = json::array({json::array({0, 200})});
  EXPECT_THROW(model::profile_from_json(past, "past.json"), error);
  json many = p;
  json lv = json::array();
  for (int i = 0; i < 100000; ++i)
    lv.push_back({{"reach_bytes", 16 << 20}, {"coverage_bytes", 1 << 20}, {"entries", 16}});
  many["tlb"]["levels"] = lv;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(model::profile_from_json(many, "many.json"), error);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2);
  json fleet =
      read_json_file(std::string(GPUPROBE_SOURCE_DIR) + "/tests/fixtures/fleet/fleet.json");
  for (auto &u : fleet["units"])
    for (auto &[level, groups] : u["groups"].items())
      groups = json::array({json::array({0, 1000000000})});
  EXPECT_THROW(model::fleet_from_json(fleet, "fleet.json"), error);
  // theory: a realistic case gave "tas": null with exit 0
  const auto r = test::run_gpuprobe(
      "theory --model rw-bm --pages 1e9 --free 1e9 --threads 2e6 --word-bits 64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json t = json::parse(r.out);
  ASSERT_TRUE(t["tas"].is_number()) << r.out;
  EXPECT_NEAR(t["tas"].get<double>(), 1.0, 1e-6); // every page free: the first word has room
}

TEST(HostileOutputs, TheLockCannotBeBypassedThroughTheEnvironment) {
  const std::string dir = small_folder("lock-bypass");
  const pid_t holder = test::hold_folder_lock_in_child(dir);
  const std::string canon = fs::canonical(dir).string();
  // The old form (the folder alone) and a descriptor this process does not hold.
  for (const std::string &v : {canon, "3:" + canon, "0:" + canon}) {
    ::setenv(folder_lock::env_name, v.c_str(), 1);
    auto r = test::run_gpuprobe_argv({"report", "--input", dir, "--out", dir + "/report"});
    EXPECT_EQ(r.exit_code, 1) << v << ": " << r.err;
    EXPECT_NE(r.err.find("is being written by PID " + std::to_string(holder)), std::string::npos)
        << r.err;
    r = test::run_gpuprobe_argv({"characterize", "--reanalyze", "--out", dir});
    EXPECT_EQ(r.exit_code, 1) << v;
    EXPECT_NE(r.err.find("is being written by PID " + std::to_string(holder)), std::string::npos)
        << r.err;
    EXPECT_THROW(folder_lock(dir, "tune"), error) << v;
  }
  // A variable that names no lock held here is dropped: no death signal, nothing inherited.
  ::setenv(folder_lock::env_name, ("7:" + canon).c_str(), 1);
  end_with_lock_holder();
  EXPECT_EQ(std::getenv(folder_lock::env_name), nullptr);
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  EXPECT_FALSE(fs::exists(dir + "/report"));
  // The holder's own stages still inherit: its descriptor is open in them.
  {
    const folder_lock run(dir, "run");
    const auto r = test::run_gpuprobe_argv({"report", "--input", dir, "--out", dir + "/report"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
}

TEST(HostileOutputs, ThePublicTuningLoaderRangeChecksEveryField) {
  const json good = read_json_file(k_hostile_run + "tuning.json");
  EXPECT_NO_THROW(alloc::tuning_from_json(good));
  const std::vector<std::pair<std::string, json>> bad = {
      {"regions", -1},
      {"regions", 0},
      {"regions", 4294967297ull},
      {"word_bits", 32.9},
      {"word_bits", 4294967360ull}, // 2^32 + 64: truncated to 64 by a cast
      {"word_bits", "64"},
      {"sm_region", json::array({65536})},
      {"sm_region", json::array({-1})},
      {"vm_page_bytes", 0},
      {"vm_page_bytes", 3000000},
      {"tlb_scope_bytes", -5},
      {"tlb_scope_midpoint_bytes", 1e300},
      {"max_region_bytes", true},
  };
  for (const auto &[key, value] : bad) {
    json t = good;
    t["allocator"][key] = value;
    if (key == "sm_region")
      t["allocator"]["regions"] = 4;
    try {
      alloc::tuning_from_json(t, "tuning.json");
      ADD_FAILURE() << key << " = " << value.dump() << " was accepted";
    } catch (const std::runtime_error &e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      EXPECT_NE(std::string(e.what()).find(key == "sm_region" ? "sm_region" : key),
                std::string::npos)
          << e.what();
    }
  }
  const std::string d = scratch_dir("loader");
  const std::string fifo = d + "/fifo.json", deep = d + "/deep.json", big = d + "/big.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::ofstream(deep) << std::string(200000, '[') << std::string(200000, ']');
  { std::ofstream(big) << "{}"; }
  fs::resize_file(big, (64ull << 20) + 1);
  for (const auto &f : {fifo, deep, big, d}) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_THROW(alloc::load_tuning(f), std::runtime_error) << f;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2) << f;
  }
  const auto t = alloc::load_tuning(k_hostile_run + "tuning.json");
  EXPECT_TRUE(t.word_bits == 32 || t.word_bits == 64);
}

TEST(HostileOutputs, OneBadStringOrValueLeavesTheRestOfThePageDrawn) {
  const std::string in = scratch_dir("bad-values");
  fs::create_directories(in + "/raw");
  for (const char *f : {"profile.json", "validation.json", "tuning.json"})
    fs::copy_file(k_hostile_run + f, in + "/" + f);
  for (const char *f : {"tlb.json", "atomics.json", "sharing_L2.json"})
    fs::copy_file(k_hostile_run + "raw/" + f, in + "/raw/" + f);
  const std::string name = "$\\x{$ NVIDIA H100, PCIe \"q\" <b>\nline";
  for (const char *f : {"profile.json", "validation.json", "tuning.json", "raw/tlb.json",
                        "raw/atomics.json", "raw/sharing_L2.json"}) {
    json doc = read_json_file(in + "/" + f);
    doc["device"]["name"] = name;
    if (std::string(f) == "validation.json") { // a row with no ratio and no CI
      doc["workloads"][0]["ratio"] = nullptr;
      doc["workloads"][0]["ci_low"] = nullptr;
      doc["workloads"][0]["ci_high"] = nullptr;
      doc["workloads"][0]["workload"] = "join, \"big\"\n2";
    }
    write_json_atomic(in + "/" + f, doc);
  }
  json ragged = read_json_file(in + "/raw/sharing_L2.json"); // a second, ragged matrix
  auto &cycles = ragged["sharing"]["mean_cycles"];
  ASSERT_TRUE(cycles.is_array() && cycles.size() > 1) << ragged["sharing"].dump().substr(0, 200);
  cycles[1].erase(0);
  write_json_atomic(in + "/raw/sharing_L3.json", ragged);
  ::setenv("MPLBACKEND", "bogus", 1);
  const std::string out = test::temp_path("bad-values-page");
  fs::remove_all(out);
  const auto r = test::run_gpuprobe_argv({"report", "--input", in, "--out", out});
  ::unsetenv("MPLBACKEND");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("sharing_L3.json"), std::string::npos) << r.out;
  const std::string page = read_output(out + "/index.html");
  EXPECT_NE(page.find("$\\x{$ NVIDIA H100, PCIe &quot;q&quot; &lt;b&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_NE(page.find("no ratio recorded"), std::string::npos);
  EXPECT_EQ(page.find("<td>0 (0–0)</td>"), std::string::npos);
  const auto figures = [&] {
    std::size_t n = 0;
    for (auto i = page.find("<img "); i != std::string::npos; i = page.find("<img ", i + 1))
      ++n;
    return n;
  }();
  EXPECT_GE(figures, 4u) << "the rest of the page is drawn";
}

// Provenance through reanalyses: `--reanalyze --seed 99` keeps the measurement's seed, and a
// second reanalysis names the measurement (not the first reanalysis) as measured_by. A mark a
// stage's file carries ("disturbed", written under --allow-busy) reaches the profile on every
// later analysis of the folder.
TEST(HostileOutputs, AReanalysisKeepsTheMeasurementsProvenanceAndItsDisturbedMarks) {
  const std::string dir = scratch_dir("reanalyze-provenance");
  fs::copy(k_hostile_run, dir, fs::copy_options::recursive);
  const json first = read_json_file(dir + "/profile.json");
  const json measured = first["reanalyzed"]["measured_by"];
  ASSERT_TRUE(measured.contains("seed"));
  json tlb = read_json_file(dir + "/raw/tlb.json");
  tlb["disturbed"] = json::array({"tlb (during or after): 1 other process (PID 7 neighbour)"});
  write_json_atomic(dir + "/raw/tlb.json", tlb);
  for (int k = 0; k < 2; ++k) {
    const auto r = test::run_gpuprobe_argv(
        {"characterize", "--reanalyze", "--out", dir, "--seed", k ? "7" : "99"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const json p = read_json_file(dir + "/profile.json");
    EXPECT_EQ(p["meta"]["seed"], measured["seed"]) << "reanalysis " << k + 1;
    EXPECT_EQ(p["reanalyzed"]["measured_by"], measured) << "reanalysis " << k + 1;
    EXPECT_EQ(p["reanalyzed"]["times"], k + 1);
    for (const auto &L : p["tlb"]["levels"])
      EXPECT_NE(L.value("disturbed", std::string()).find("PID 7 neighbour"), std::string::npos)
          << "reanalysis " << k + 1 << ": a level lost the stage's disturbed mark";
  }
}
