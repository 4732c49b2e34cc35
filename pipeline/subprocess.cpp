#include "pipeline/subprocess.hpp"

#include "common/error.hpp"
#include "common/process.hpp"
#include "common/stopwatch.hpp"
#include "pipeline/progress.hpp"

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <fcntl.h>
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
// `start` runs the stage, handing each chunk of its output to the function it is given; the
// status line and the verbose copy go to `screen` (the terminal).
using output_fn = std::function<void(const std::string &)>;
child_result run_watched(const std::function<child_result(const output_fn &)> &start,
                         const std::string &name, stage_display &d, stage_watch &w,
                         std::FILE *screen) {
  const stopwatch t0;
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  double drawn_at = -1;
  const auto draw = [&](double t) { // under m
    if (!d.terminal)
      return;
    std::fprintf(screen, "\r\033[K%s", w.status(name, t, terminal_width() - 1).c_str());
    std::fflush(screen);
    drawn_at = t;
  };
  const output_fn on_output = [&](const std::string &chunk) {
    const std::lock_guard<std::mutex> lock(m);
    const double t = t0.seconds();
    w.feed(chunk, t);
    if (d.verbose) {
      std::fwrite(chunk.data(), 1, chunk.size(), screen);
      std::fflush(screen);
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
            draw(t0.seconds());
        })};
    r = start(on_output);
  }
  if (d.terminal && !d.verbose) {
    std::fprintf(screen, "\r\033[K");
    std::fflush(screen);
  }
  return r;
}

// A stage run as a child of this binary's (or another program's) argv in `dir`.
std::function<child_result(const output_fn &)> as_child(const std::vector<std::string> &argv,
                                                        const std::string &dir,
                                                        const std::vector<std::string> &env) {
  return [&argv, &dir, &env](const output_fn &on_output) {
    child_options o;
    o.dir = dir;
    o.env = env;
    o.capture = true;
    o.merge_stderr = true;
    o.on_output = on_output;
    return run_child(argv, o);
  };
}

// This process's stdout and stderr (descriptors 1 and 2) sent into a pipe while it lives, read on
// a thread of its own that hands each chunk on; restored (and the reader joined) at its end. What
// the stdio buffers hold is flushed before and after, so each byte goes where it was written.
class captured_output : private non_copyable {
public:
  explicit captured_output(output_fn on_output) {
    std::fflush(stdout);
    std::fflush(stderr);
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0)
      throw error(std::string("cannot capture a stage's output: pipe: ") + std::strerror(errno));
    read_ = p[0];
    out_ = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    err_ = ::fcntl(2, F_DUPFD_CLOEXEC, 3);
    if (out_ < 0 || err_ < 0 || ::dup2(p[1], 1) < 0 || ::dup2(p[1], 2) < 0) {
      const int e = errno;
      ::close(p[1]);
      restore();
      throw error(std::string("cannot capture a stage's output: ") + std::strerror(e));
    }
    ::close(p[1]); // descriptors 1 and 2 hold the write end now: their restore ends the reader
    reader_ = std::thread([this, on = std::move(on_output)] {
      char buf[4096];
      for (;;) {
        const ssize_t n = ::read(read_, buf, sizeof buf);
        if (n > 0)
          on(std::string(buf, std::size_t(n)));
        else if (n == 0 || errno != EINTR)
          break;
      }
    });
  }
  ~captured_output() { restore(); }

private:
  void restore() noexcept {
    std::fflush(stdout);
    std::fflush(stderr);
    if (out_ >= 0)
      (void)::dup2(out_, 1);
    if (err_ >= 0)
      (void)::dup2(err_, 2);
    if (reader_.joinable())
      reader_.join(); // the write end's last descriptors are gone: it reads to the end
    for (int *fd : {&read_, &out_, &err_})
      if (*fd >= 0)
        ::close(std::exchange(*fd, -1));
  }
  int read_ = -1, out_ = -1, err_ = -1;
  std::thread reader_;
};

} // namespace

std::string run_stage_in(const std::string &dir, const std::string &name,
                         const std::vector<std::string> &args, const std::string &resume,
                         stage_display *display) {
  std::vector<std::string> argv = {self_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program_stage_in(dir, name, argv, {}, resume, display);
}

namespace {

// A stage's run, watched with `display` (or not), and its end judged: interrupted, failed, or done.
std::string judge_stage(const std::string &name, const std::string &shown,
                        const std::string &resume, stage_display *display,
                        const std::function<child_result(const output_fn &)> &watched,
                        const std::function<child_result()> &plain, std::FILE *screen, bool child) {
  child_result r;
  {
    // A child: a signal reaches it, and this process reports it after. Inside this process: a
    // signal ends it at once, as it ends a child (the stage's files are written whole or not).
    std::optional<cleanup_scope> waiting;
    if (child)
      waiting.emplace();
    if (display) {
      stage_watch w(display->log);
      r = run_watched(watched, name, *display, w, screen);
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
      r = plain();
    }
  }
  const int sig = interrupted_by() ? interrupted_by() : r.signal;
  // A stage inside this process returns 128 + signal when a signal stopped it (cli::run_command).
  if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || r.exit_code == 130 ||
      (!child && r.exit_code > 128))
    throw interrupted("interrupted during stage " + name + ": " + resume, sig ? sig : SIGINT);
  if (r.signal != 0 || (r.exit_code != 0 && r.exit_code != k_exit_partial))
    throw error("stage " + name + " failed (" + shown + "); " + resume);
  return shown;
}

} // namespace

std::string run_program_stage_in(const std::string &dir, const std::string &name,
                                 const std::vector<std::string> &argv,
                                 const std::vector<std::string> &env, const std::string &resume,
                                 stage_display *display) {
  std::string shown = "cd " + shell_quote(dir) + " &&"; // what ran, as a person would type it
  for (const auto &a : argv)
    shown += " " + shell_quote(a);
  return judge_stage(
      name, shown, resume, display, as_child(argv, dir, env),
      [&] {
        child_options o;
        o.dir = dir;
        o.env = env;
        return run_child(argv, o);
      },
      stdout, true);
}

std::string run_stage_here_in(const std::string &dir, const std::string &name,
                              const std::vector<std::string> &args, const std::string &resume,
                              stage_display *display, const run_here_fn &run_here) {
  std::string shown = "cd " + shell_quote(dir) + " && gpuprobe";
  for (const auto &a : args)
    shown += " " + shell_quote(a);
  const auto here = [&] {
    child_result r;
    const working_dir in(dir);
    r.exit_code = run_here(args);
    r.signal = r.exit_code > 128 ? r.exit_code - 128 : 0; // as a child's: 128 + signal
    return r;
  };
  // The status line's terminal: descriptor 1 as it is now, through a FILE of its own, since
  // descriptor 1 is the capture's pipe while the stage runs.
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> screen(nullptr, &std::fclose);
  if (display) {
    std::fflush(stdout);
    const int fd = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    screen.reset(fd >= 0 ? ::fdopen(fd, "w") : nullptr);
    if (!screen) {
      if (fd >= 0)
        ::close(fd);
      throw error(std::string("cannot run stage ") + name + ": " + std::strerror(errno));
    }
  }
  return judge_stage(
      name, shown, resume, display,
      [&](const output_fn &on_output) {
        const captured_output capture(on_output);
        return here();
      },
      here, screen ? screen.get() : stdout, false);
}

bool stages_here_by_env() {
  const char *v = std::getenv("GPUPROBE_STAGES");
  const std::string how = v ? v : "";
  if (!how.empty() && how != "here" && how != "children")
    throw error("GPUPROBE_STAGES='" + how +
                "': give 'here' (the stages inside the command's process, the default) or "
                "'children' (one child process per stage)");
  return how != "children";
}

working_dir::working_dir(const std::string &dir) : was_(std::filesystem::current_path().string()) {
  std::filesystem::current_path(dir);
}

working_dir::~working_dir() {
  std::error_code ec;
  std::filesystem::current_path(was_, ec);
}

} // namespace gpuprobe::pipeline
