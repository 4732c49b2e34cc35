// The --devices machinery without a GPU: the device list and the concurrent job runner (real
// processes: sh -c), and the CLI's refusals.
#include "cli/common.hpp"
#include "cli/devices.hpp"
#include "common/error.hpp"
#include "common/jobs.hpp"
#include "common/results_folder.hpp"
#include "pipeline/run_driver.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace gpuprobe;

TEST(Devices, ListParsesAllAndIdsAndRefusesTheRest) {
  EXPECT_EQ(parse_device_list("all", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_device_list("1,0", 2), (std::vector<int>{1, 0}));
  EXPECT_EQ(parse_device_list("3", 8), (std::vector<int>{3}));
  for (const char *bad : {"", "x", "0,,1", "1a", "-1", "0 1"})
    EXPECT_THROW(parse_device_list(bad, 2), error) << bad;
  try {
    parse_device_list("0,2", 2);
    FAIL();
  } catch (const error &e) {
    EXPECT_NE(std::string(e.what()).find("device 2 does not exist (this machine has 2, ids 0..1)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_device_list("1,1", 2), error);
  EXPECT_THROW(parse_device_list("all", 0), error);
}

// Jobs run at once (three 1-second sleeps end in well under 3 s), every line reaches the progress
// stream with its label and the job's log; a failing job keeps its exit code and last line and
// does not stop the others.
TEST(Devices, JobsRunConcurrentlyAndAFailureStaysItsOwn) {
  const std::string dir = test::temp_path("jobs");
  std::vector<job> jobs;
  for (int i = 0; i < 3; ++i)
    jobs.push_back({"[gpu" + std::to_string(i) + "]",
                    {"sh", "-c",
                     "sleep 1; echo line-" + std::to_string(i) + "; echo second" +
                         (i == 1 ? "; echo 'stage tlb failed' >&2; exit 3" : "")},
                    {},
                    dir + "-" + std::to_string(i) + ".log"});
  std::FILE *progress = std::tmpfile();
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_jobs(jobs, progress);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_LT(s, 2.5) << "the jobs ran one after another";
  EXPECT_EQ(r[0].exit_code, 0);
  EXPECT_EQ(r[1].exit_code, 3);
  EXPECT_EQ(r[2].exit_code, 0);
  EXPECT_NE(r[1].tail.find("stage tlb failed"), std::string::npos) << r[1].tail;
  std::rewind(progress);
  std::string all;
  char buf[256];
  while (std::fgets(buf, sizeof buf, progress))
    all += buf;
  std::fclose(progress);
  EXPECT_NE(all.find("[gpu2] line-2\n"), std::string::npos) << all;
  EXPECT_NE(all.find("[gpu1] stage tlb failed\n"), std::string::npos) << all;
  const std::string log = test::read_all(dir + "-0.log");
  EXPECT_EQ(log.substr(0, 16), "==== sh -c sleep") << log;
  EXPECT_EQ(log.substr(log.find('\n') + 1), "line-0\nsecond\n");
}

// What --devices keeps of a unit's console never shares a file with what the command keeps
// itself (run's run.log: the launcher's copy once began at offset 0 of the same file and wrote
// over run.log's first lines), and both are appended to: a unit run again keeps the first run's
// lines. 40 seeded families of 1-4 units, each run twice; each unit's command appends its own
// run.log while it prints to its console, in random bursts.
TEST(Devices, AUnitsConsoleLogAndItsOwnRunLogAreTwoFilesAndBothKeepEveryRun) {
  const std::string console = results_folder::devices_log_file("run");
  EXPECT_NE(console, results_folder::run_log_file);
  EXPECT_EQ(results_folder::devices_log_file("characterize"), "characterize.log"); // fleet's
  std::mt19937 rng(8102);
  for (int family = 0; family < 40; ++family) {
    const std::string root = test::temp_path("devices_logs");
    std::filesystem::remove_all(root);
    const int units = 1 + int(rng() % 4);
    std::vector<std::string> want_own(static_cast<std::size_t>(units), std::string()),
        want_console(static_cast<std::size_t>(units), std::string());
    for (int round = 0; round < 2; ++round) {
      std::vector<job> jobs;
      for (int u = 0; u < units; ++u) {
        const std::string dir = root + "/unit" + std::to_string(u);
        std::filesystem::create_directories(dir);
        std::string script;
        for (int k = 0, n = 1 + int(rng() % 30); k < n; ++k) {
          const std::string tag = std::to_string(round) + "." + std::to_string(k);
          if (rng() % 2) {
            script += "echo own-" + tag + " >> " + dir + "/" + results_folder::run_log_file + ";";
            want_own[std::size_t(u)] += "own-" + tag + "\n";
          } else {
            script += "echo console-" + tag + ";";
            want_console[std::size_t(u)] += "console-" + tag + "\n";
          }
        }
        jobs.push_back({"[gpu" + std::to_string(u) + "]",
                        {"sh", "-c", script},
                        {},
                        dir + "/" + results_folder::devices_log_file("run")});
        want_console[std::size_t(u)] += "|";
      }
      for (const auto &r : run_jobs(jobs, nullptr))
        ASSERT_EQ(r.exit_code, 0) << "family " << family;
    }
    for (int u = 0; u < units; ++u) {
      const std::string dir = root + "/unit" + std::to_string(u);
      EXPECT_EQ(test::read_all(dir + "/" + results_folder::run_log_file), want_own[std::size_t(u)])
          << "family " << family << " unit " << u << ": the command's own log was written over";
      // The console log: a header per run, then that run's console lines.
      std::string got;
      std::istringstream in(test::read_all(dir + "/" + console));
      int headers = 0;
      for (std::string line; std::getline(in, line);) {
        if (line.rfind("==== sh -c ", 0) == 0) {
          got += headers++ ? "|" : "";
          continue;
        }
        got += line + "\n";
      }
      EXPECT_EQ(headers, 2) << "family " << family << " unit " << u;
      EXPECT_EQ(got + "|", want_console[std::size_t(u)]) << "family " << family << " unit " << u;
    }
  }
}

// run and characterize --devices give --map-late to every second GPU of the launch (the 2nd, 4th,
// ...: neighbours map their alias ranges and pools at different times), whatever the GPUs'
// ordinals, unless --no-map-late; --map-late changes nothing there (it is the default).
TEST(Devices, EverySecondGpuOfTheLaunchMapsLateUnlessToldNot) {
  for (const auto &[late_flag, not_late] :
       {std::pair{false, false}, {true, false}, {false, true}}) {
    cli::map_late_options m;
    m.late = late_flag;
    m.not_late = not_late;
    cli::unit_command c{"run", "", "", "", {"--seed", "1"}, ""};
    c.every_second = m.every_second();
    const auto plan = cli::plan_for(c);
    for (std::size_t pos = 0; pos < 9; ++pos) {
      device_identity d;
      d.ordinal = int(8 - pos); // a launch in any order: "--devices 8,7,..."
      const auto st = plan(d, "results/u" + std::to_string(pos), pos);
      const bool late = std::find(st.args.begin(), st.args.end(), "--map-late") != st.args.end();
      EXPECT_EQ(late, !not_late && pos % 2 == 1)
          << "position " << pos << " --no-map-late " << not_late;
      EXPECT_EQ(st.args[0], "run");
      EXPECT_EQ(st.args[std::size_t(std::find(st.args.begin(), st.args.end(), "--out") -
                                    st.args.begin()) +
                        1],
                "results/u" + std::to_string(pos));
    }
  }
  cli::unit_command tune{"tune", "--profile", "profile.json", "tuning.json", {}, "run it"};
  const auto st = cli::plan_for(tune)(device_identity{}, test::temp_path("none"), 1);
  EXPECT_FALSE(st.cannot_run.empty()) << "a missing input still refuses the unit";
}

// characterize's and run's --devices launch: each GPU's command line is the subcommand with
// --seed, then --quick, --allow-busy and --busy-wait as given, then its own extras, and every
// second GPU maps late (unless --no-map-late). Generated: 64 flag sets, seeded.
TEST(Devices, CharacterizeAndRunLaunchEachGpuWithTheirFlags) {
  std::mt19937_64 rng(81);
  for (int c = 0; c < 64; ++c) {
    cli::stage_command_flags<pipeline::run_run_options> f;
    f.common.seed = rng() % 1000;
    f.run.quick = rng() % 2, f.run.allow_busy = rng() % 2;
    f.run.busy_wait_seconds = double(rng() % 300) / 4;
    f.map_late.not_late = rng() % 2;
    const std::vector<std::string> extra =
        rng() % 2 ? std::vector<std::string>{"--verbose"} : std::vector<std::string>{};
    std::vector<std::string> want = {"--seed", std::to_string(f.common.seed)};
    if (f.run.quick)
      want.push_back("--quick");
    if (f.run.allow_busy)
      want.push_back("--allow-busy");
    want.insert(want.end(), {"--busy-wait", cli::busy_wait_text(f.run.busy_wait_seconds)});
    want.insert(want.end(), extra.begin(), extra.end());
    const auto plan = cli::plan_for(f.unit_command_of("run", extra));
    for (std::size_t pos = 0; pos < 4; ++pos) {
      const auto st = plan(device_identity{}, "results/u", pos);
      ASSERT_GE(st.args.size(), want.size()) << c;
      EXPECT_EQ(st.args[0], "run");
      const bool late = !f.map_late.not_late && pos % 2 == 1;
      const auto from = st.args.end() - std::ptrdiff_t(want.size()) - (late ? 1 : 0);
      EXPECT_EQ(std::vector<std::string>(from, from + std::ptrdiff_t(want.size())), want)
          << "case " << c << " position " << pos;
      EXPECT_EQ(st.args.back() == "--map-late", late) << "case " << c << " position " << pos;
    }
  }
}

// Without a GPU (CI) --devices says so in one line; --device and --devices exclude each other;
// tune and validate without --devices still need their inputs.
// Every name a stage writes at a results folder's top, the --devices log of each command that
// runs per GPU included, is refused as report --out inside that folder (a report folder named
// tune.log would stand where a later `tune --devices` appends its log), and nothing is made; a
// name no stage writes is not refused for lying inside. A command run per GPU that
// results_folder::devices_commands does not name is refused before any GPU is asked.
TEST(Devices, ReportTakesNoNameAStageWritesAndEveryDevicesLogIsNamed) {
  namespace fs = std::filesystem;
  const auto names = results_folder::stage_names();
  for (const char *c : results_folder::devices_commands)
    EXPECT_NE(std::find(names.begin(), names.end(), results_folder::devices_log_file(c)),
              names.end())
        << c;
  for (const char *n : {"tune.log", "validate.log", "characterize.log", "run-console.log"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  const std::string dir = test::temp_path("report_stage_names");
  fs::remove_all(dir);
  fs::create_directories(dir + "/raw");
  fs::copy_file(test::fixture("K80/TLB-Test-1-5-64-256.csv"), dir + "/raw/sweep.csv");
  for (const auto &n : names) {
    const auto r = test::run_gpuprobe_argv(
        {"report", "--input", dir, "--out", dir + "/" + n, "--python", "true"});
    EXPECT_NE(r.exit_code, 0) << n;
    EXPECT_NE(r.err.find("lies inside its input folder"), std::string::npos) << n << ": " << r.err;
    EXPECT_EQ(fs::exists(dir + "/" + n), n == results_folder::raw_dir) << n;
  }
  const auto r = test::run_gpuprobe_argv(
      {"report", "--input", dir, "--out", dir + "/my-report", "--python", "true"});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/my-report/index.html"));
  try {
    cli::run_per_device("bogus", "all", dir, {});
    ADD_FAILURE() << "a command whose log is not named ran";
  } catch (const error &e) {
    EXPECT_NE(std::string(e.what()).find("devices_commands does not name"), std::string::npos)
        << e.what();
  }
}

TEST(Devices, CliRefusals) {
  auto r = test::run_gpuprobe("characterize --devices all --out " + test::temp_path("fleet"));
  if (r.exit_code == 0)
    GTEST_SKIP() << "this machine has a GPU: the refusal is for machines without one";
  EXPECT_NE(r.err.find("no CUDA device"), std::string::npos) << r.err;
  r = test::run_gpuprobe("characterize --device 0 --devices all");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
  for (const char *cmd : {"run", "characterize"}) { // one order or the other, not both
    r = test::run_gpuprobe(std::string(cmd) + " --devices all --map-late --no-map-late");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("excludes"), std::string::npos) << cmd << ": " << r.err;
  }
  r = test::run_gpuprobe("tune --out " + test::temp_path("t.json"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("give --profile and --out (or --devices)"), std::string::npos) << r.err;
  r = test::run_gpuprobe("run --quick --out " + test::temp_path("run_nogpu"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no CUDA device"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  r = test::run_gpuprobe("validate --devices 0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no CUDA device"), std::string::npos) << r.err;
}
