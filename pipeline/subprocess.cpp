#include "pipeline/subprocess.hpp"

#include "common/error.hpp"
#include "common/process.hpp"
#include "pipeline/progress.hpp"

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>

#include <sys/ioctl.h>
#include <unistd.h>

namespace gpuprobe::pipeline {

std::string shell_quote(const std::string &text) {
  std::string o = "'";
  for (char c : text)
    o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

namespace {

// The terminal's columns (100 where it does not say): a status line that wrapped could not be
// redrawn in place.
std::size_t terminal_width() {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
    return ws.ws_col;
  return 100;
}

// The child's run with its output watched: fed to `w`, the status line redrawn each second (and
// on output, at most 4 times a second) while it runs, cleared at its end.
child_result run_watched(const std::vector<std::string> &argv, const std::string &dir,
                         const std::vector<std::string> &env, const std::string &name,
                         stage_display &d, stage_watch &w) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const auto now = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  double drawn_at = -1;
  const auto draw = [&](double t) { // under m
    if (!d.terminal)
      return;
    std::printf("\r\033[K%s", w.status(name, t, terminal_width() - 1).c_str());
    std::fflush(stdout);
    drawn_at = t;
  };
  child_options o;
  o.dir = dir;
  o.env = env;
  o.capture = true;
  o.merge_stderr = true;
  o.on_output = [&](const std::string &chunk) {
    const std::lock_guard<std::mutex> lock(m);
    const double t = now();
    w.feed(chunk, t);
    if (d.verbose) {
      std::fwrite(chunk.data(), 1, chunk.size(), stdout);
      std::fflush(stdout);
    } else if (t - drawn_at >= 0.25) {
      draw(t);
    }
  };
  // The ticker redraws each second until the child ends; it is stopped and joined however
  // run_child ends, before the line is cleared.
  struct ticker_thread {
    std::mutex &m;
    std::condition_variable &cv;
    bool &done;
    std::thread t;
    ~ticker_thread() {
      {
        const std::lock_guard<std::mutex> lock(m);
        done = true;
      }
      cv.notify_one();
      t.join();
    }
  };
  child_result r;
  {
    const ticker_thread ticker{
        m, cv, done, std::thread([&] {
          std::unique_lock<std::mutex> lock(m);
          while (!cv.wait_for(lock, std::chrono::seconds(1), [&] { return done; }))
            draw(now());
        })};
    r = run_child(argv, o);
  }
  if (d.terminal && !d.verbose) {
    std::printf("\r\033[K");
    std::fflush(stdout);
  }
  return r;
}

} // namespace

std::string run_stage_in(const std::string &dir, const std::string &name,
                         const std::vector<std::string> &args, const std::string &resume,
                         stage_display *display) {
  std::vector<std::string> argv = {self_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program_stage_in(dir, name, argv, {}, resume, display);
}

std::string run_program_stage_in(const std::string &dir, const std::string &name,
                                 const std::vector<std::string> &argv,
                                 const std::vector<std::string> &env, const std::string &resume,
                                 stage_display *display) {
  std::string shown = "cd " + shell_quote(dir) + " &&"; // what ran, as a person would type it
  for (const auto &a : argv)
    shown += " " + shell_quote(a);
  child_result r;
  {
    const cleanup_scope waiting; // a signal reaches the stage; this process reports it after
    if (display) {
      stage_watch w(display->log);
      r = run_watched(argv, dir, env, name, *display, w);
      display->summary = w.summary();
      display->notes = w.notes();
      if (!r.ok() && r.exit_code != k_exit_partial && !display->verbose) {
        std::fprintf(stderr, "---- the last lines of stage %s (all of it: %s)\n", name.c_str(),
                     display->log_path.c_str());
        const auto &t = w.tail();
        for (std::size_t i = t.size() > 15 ? t.size() - 15 : 0; i < t.size(); ++i)
          std::fprintf(stderr, "%s\n", t[i].c_str());
      }
    } else {
      child_options o;
      o.dir = dir;
      o.env = env;
      r = run_child(argv, o);
    }
  }
  const int sig = interrupted_by() ? interrupted_by() : r.signal;
  if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || r.exit_code == 130)
    throw interrupted("interrupted during stage " + name + ": " + resume, sig ? sig : SIGINT);
  if (r.signal != 0 || (r.exit_code != 0 && r.exit_code != k_exit_partial))
    throw error("stage " + name + " failed (" + shown + "); " + resume);
  return shown;
}

} // namespace gpuprobe::pipeline
