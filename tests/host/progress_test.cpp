// What `gpuprobe run` shows of a stage: the status line from the stage's output (its step, its
// sweep's progress, the time left), the stage's summary, the notes a person must see, and the
// log that gets every byte. Fed with the run.log of a real `run --quick` (H100 GPU-4b0f0e28).
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "pipeline/progress.hpp"
#include "pipeline/subprocess.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>

using gpuprobe::pipeline::stage_watch;

namespace {

std::string recorded() {
  return gpuprobe::read_text_file(std::string(GPUPROBE_FIXTURES_DIR) +
                                  "/run-output/h100-GPU-4b0f0e28-run-quick.log");
}

// The recorded output of stage `name`: from its first line ("gpuprobe <name>...") to the next
// stage's first line (run.log holds the stages' output in the order they ran).
std::string stage_output(const std::string &name) {
  const std::vector<std::string> order = {"characterize", "tune", "validate", "report"};
  const std::string all = recorded();
  const auto first_line = [&](const std::string &stage) {
    const auto at = all.find("\ngpuprobe " + stage);
    return at == std::string::npos ? all.size() : at + 1;
  };
  const auto k = std::size_t(std::find(order.begin(), order.end(), name) - order.begin());
  const auto from = first_line(name);
  const auto to = k + 1 < order.size() ? first_line(order[k + 1]) : all.size();
  return all.substr(from, to - from);
}

// Everything written to `log`, which is closed.
std::string read_and_close(std::FILE *log) {
  std::rewind(log);
  std::string back;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, log)) > 0;)
    back.append(buf, n);
  std::fclose(log);
  return back;
}

} // namespace

TEST(Progress, TheSweepsStrideAndItsTimeLeft) {
  stage_watch w;
  w.feed("[1/7+] tlb              running (0 s so far)\n[tlb] allocating 512 GiB (alias)\n", 0.5);
  EXPECT_EQ(w.status("characterize", 3), "[run] characterize    3 s  [1/7+] tlb");
  w.feed("[tlb] stride 4 MiB (2/8): 64 points (0 refined), 0.7 s elapsed\n", 12.0);
  // 0.7 s for 2 of 8 strides: 6 more at that pace.
  EXPECT_EQ(w.status("characterize", 12),
            "[run] characterize   12 s  [1/7+] tlb  stride 4 MiB (2/8), ~2 s left");
  w.feed("[tlb] stride 256 MiB (8/8): 41 points (1 refined), 1.8 s elapsed\n", 13.0);
  EXPECT_EQ(w.status("characterize", 13),
            "[run] characterize   13 s  [1/7+] tlb  stride 256 MiB (8/8), ~0 s left");
  // A new step clears the sweep.
  w.feed("[2/7+] tlb_real         running (20 s so far)\n", 20.0);
  EXPECT_EQ(w.status("characterize", 21), "[run] characterize   21 s  [2/7+] tlb_real");
}

TEST(Progress, AStepOfAFinalCountAnnouncedBeforeItsLineEnds) {
  stage_watch w;
  w.feed("[1/16] getpage_write/free:50%    cudamalloc ", 1.0);
  EXPECT_EQ(w.status("validate", 1.5), "[run] validate        2 s  [1/16] getpage_write/free:50%");
  w.feed("0.42 -> 0.41 ms (x0.988), differs after 14 of 15 pairs, 2.0 s\n[2/16] getpage_", 3);
  w.feed("write/free:1%    cudamalloc ", 3);
  // Splits across chunks are joined; 1 step in 2 s, 15 to go (this one included).
  EXPECT_EQ(w.status("validate", 3),
            "[run] validate        3 s  [2/16] getpage_write/free:1%, ~30 s left");
  EXPECT_EQ(w.tail().back(),
            "[1/16] getpage_write/free:50%    cudamalloc 0.42 -> 0.41 ms (x0.988), "
            "differs after 14 of 15 pairs, 2.0 s");
}

TEST(Progress, TheLogGetsEveryByteAndTheStatusFitsTheWidth) {
  std::FILE *log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  const std::string all = stage_output("characterize");
  ASSERT_GT(all.size(), 10000u);
  {
    stage_watch w(log);
    for (std::size_t at = 0; at < all.size(); at += 777) // chunks that split lines anywhere
      w.feed(all.substr(at, 777), double(at) / 1000);
    EXPECT_LE(w.status("characterize", 59, 60).size(), 60u);
    EXPECT_LE(w.tail().size(), 30u);
    EXPECT_EQ(w.summary(), "gpuprobe characterize: 3 TLB level(s), 0 candidate(s), 2 atomics fits, "
                           "62 s -> ./profile.json");
    EXPECT_TRUE(w.notes().empty()); // an idle GPU: nothing for the terminal
  }
  const std::string back = read_and_close(log);
  EXPECT_EQ(back, all);
}

TEST(Progress, EachStagesSummaryFromARealRun) {
  for (const auto &[stage, want] : std::vector<std::pair<std::string, std::string>>{
           {"tune", "gpuprobe tune: 64-bit words, 1 region(s), CRW start thread, TLB scope one "
                    "pass, 18 s -> tuning.json"},
           {"validate", "gpuprobe validate: 6 faster, 0 no significant difference, 2 slower, 8 not "
                        "tuned; 19 s -> validation.json"},
           {"report", "gpuprobe report: 11 figures, 7 tables -> report/index.html"}}) {
    stage_watch w;
    w.feed(stage_output(stage), 1);
    EXPECT_EQ(w.summary(), want) << stage;
  }
}

TEST(Progress, TheBusyGuardIsShownWhileItWaitsAndNotedAfter) {
  stage_watch w;
  w.feed("  waiting up to 60 s for the GPU to be idle before the run: 1 other process (PID 671)\n",
         2);
  EXPECT_EQ(
      w.status("characterize", 5, 200),
      "[run] characterize    5 s  waiting up to 60 s for the GPU to be idle before the run: 1 "
      "other process (PID 671)");
  w.feed("  L3 (DISTURBED) 4096 x 64 MiB\n  L3 (DISTURBED) 4096 x 64 MiB\n", 9);
  ASSERT_EQ(w.notes().size(), 2u); // each once
  EXPECT_EQ(w.notes()[1], "L3 (DISTURBED) 4096 x 64 MiB");
}

// A stage run as `gpuprobe run` runs it: its output goes to the log and not to stdout, its
// summary line comes back, and a failing stage names itself with its last lines on stderr.
TEST(Progress, AWatchedStageWritesTheLogAndAFailedOneShowsItsLastLines) {
  std::FILE *log = std::tmpfile();
  ASSERT_NE(log, nullptr);
  gpuprobe::pipeline::stage_display d;
  d.log = log;
  d.log_path = "DIR/run.log";
  const std::string ok = "echo '[1/2] first'; echo '[tlb] stride 2 MiB (1/2): 3 points, 0.1 s "
                         "elapsed'; echo 'gpuprobe thing: done -> out.json'";
  testing::internal::CaptureStdout();
  gpuprobe::pipeline::run_program_stage_in(".", "thing", {"/bin/sh", "-c", ok}, {"X=1"}, "resume",
                                           &d);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "") << "not a terminal: nothing drawn";
  EXPECT_EQ(d.summary, "gpuprobe thing: done -> out.json");
  const std::string bad = "echo $X; i=0; while [ $i -lt 20 ]; do echo line $i; i=$((i+1)); done; "
                          "exit 4";
  testing::internal::CaptureStderr();
  EXPECT_THROW(gpuprobe::pipeline::run_program_stage_in(".", "broken", {"/bin/sh", "-c", bad},
                                                        {"X=from-env"}, "resume", &d),
               gpuprobe::error);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("the last lines of stage broken (all of it: DIR/run.log)"), std::string::npos)
      << err;
  EXPECT_NE(err.find("line 19"), std::string::npos) << err;
  EXPECT_EQ(err.find("line 4\n"), std::string::npos) << "the last 15 lines only:\n" << err;
  const std::string back = read_and_close(log);
  EXPECT_NE(back.find("[1/2] first\n"), std::string::npos) << back;
  EXPECT_NE(back.find("from-env\n"), std::string::npos) << "the stage's environment: " << back;
  EXPECT_NE(back.find("line 19\n"), std::string::npos);
}

// A stage run inside this process (gpuprobe run's tune and validate) is watched as a child is:
// over 60 seeded stages, every byte it writes to descriptors 1 and 2 (through stdio or not, up to
// 300 KB: more than a pipe holds, so the reader must drain it while the stage writes) reaches the
// log in the order written and none reaches this process's stdout; it runs in the folder given,
// the folder and both descriptors are back after it, and its exit status is judged as a child's
// (0 and 3 done, 128 + signal interrupted by that signal, anything else "stage NAME failed" with
// its last lines on stderr).
TEST(Progress, AStageInsideThisProcessIsWatchedAsAChildIs) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gpuprobe-here-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path before = fs::current_path();
  std::mt19937 rng(48);
  for (int trial = 0; trial < 60; ++trial) {
    std::FILE *log = std::tmpfile();
    ASSERT_NE(log, nullptr);
    gpuprobe::pipeline::stage_display d;
    d.log = log;
    d.log_path = "DIR/run.log";
    const int codes[] = {0, 3, 1, 4, 0, 0, 130, 143, 138};
    const int code = codes[rng() % 9];
    const std::size_t writes = 1 + rng() % 40, big = rng() % 4 == 0 ? 300000 : 0;
    std::string want;
    std::vector<std::pair<int, std::string>> plan; // (descriptor, text)
    for (std::size_t k = 0; k < writes; ++k) {
      std::string text = "line " + std::to_string(trial) + "." + std::to_string(k) + "\n";
      if (k == writes / 2 && big)
        text = std::string(big, char('a' + trial % 26)) + "\n";
      plan.emplace_back(rng() % 3 == 0 ? 2 : 1, text);
      want += text;
    }
    const std::string summary = "gpuprobe thing: " + std::to_string(trial) + " -> out.json\n";
    want += summary;
    fs::path seen_in;
    const auto stage = [&](const std::vector<std::string> &args) {
      EXPECT_EQ(args, (std::vector<std::string>{"thing", "--n", std::to_string(trial)}));
      seen_in = fs::current_path();
      for (const auto &[fd, text] : plan) {
        if (fd == 1 && text.size() < 100) { // stdio, flushed so the order holds
          std::fputs(text.c_str(), stdout);
          std::fflush(stdout);
        } else if (fd == 2 && text.size() < 100) {
          std::fputs(text.c_str(), stderr);
        } else {
          for (std::size_t at = 0; at < text.size();) {
            const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
            if (n <= 0)
              break;
            at += std::size_t(n);
          }
        }
      }
      std::fputs(summary.c_str(), stdout); // left in the buffer: flushed by the capture's end
      return code;
    };
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    bool threw = false, stopped = false;
    try {
      gpuprobe::pipeline::run_stage_here_in(dir.string(), "thing",
                                            {"thing", "--n", std::to_string(trial)}, "resume", &d,
                                            stage);
    } catch (const gpuprobe::interrupted &e) {
      stopped = true;
      EXPECT_EQ(e.signal, code - 128) << "trial " << trial;
      EXPECT_NE(std::string(e.what()).find("interrupted during stage thing: resume"),
                std::string::npos)
          << e.what();
    } catch (const gpuprobe::error &e) {
      threw = true;
      EXPECT_NE(std::string(e.what()).find("stage thing failed"), std::string::npos) << e.what();
    }
    std::printf("after the stage\n");
    std::fflush(stdout);
    const std::string out = testing::internal::GetCapturedStdout();
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(out, "after the stage\n") << "trial " << trial << ": the stage's output went here";
    EXPECT_EQ(stopped, code > 128) << "trial " << trial << ", exit " << code;
    EXPECT_EQ(threw, code != 0 && code != 3 && code <= 128) << "trial " << trial << ", exit " << code;
    if (threw) {
      EXPECT_NE(err.find("the last lines of stage thing"), std::string::npos) << err;
      EXPECT_NE(err.find(summary.substr(0, summary.size() - 1)), std::string::npos) << err;
    } else if (!stopped) {
      EXPECT_EQ(err, "") << "trial " << trial;
      EXPECT_EQ(d.summary, summary.substr(0, summary.size() - 1)) << "trial " << trial;
    }
    EXPECT_EQ(seen_in, fs::canonical(dir)) << "trial " << trial;
    EXPECT_EQ(fs::current_path(), before) << "trial " << trial;
    const std::string back = read_and_close(log);
    ASSERT_EQ(back.size(), want.size()) << "trial " << trial;
    EXPECT_TRUE(back == want) << "trial " << trial << ": the log is not what was written, in order";
  }
  fs::remove_all(dir);
}
