#pragma once
// A stage as a child process: this binary, run with a stage's arguments in the results folder
// (characterize's probes, run's commands, --devices' units), started without a shell
// (common/process.hpp). Host-only.
#include "common/non_copyable.hpp"
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace gpuprobe::pipeline {

// The exit status of a command that did its work but left something out (report: an input it
// could not draw, listed under "not drawn"): 3. A stage that exits with it has not failed.
inline constexpr int k_exit_partial = 3;

// 'text' quoted as /bin/sh would read it: for showing a command to a person, never to run one.
std::string shell_quote(const std::string &text);
// Runs this binary with `args` in folder `dir` and returns the command line it ran (for people);
// throws gpuprobe::interrupted "interrupted during stage NAME ..." when a signal stopped it and
// gpuprobe::error "stage NAME failed (...)" on a non-zero exit other than k_exit_partial
// (`resume` is appended: how to go on).
// With `display` (gpuprobe run), the stage's output (stdout and stderr) goes to display->log and
// not to the terminal: a terminal gets one status line, redrawn each second
// (pipeline/progress.hpp); verbose passes the output through too. A stage that fails shows its last
// lines on stderr.
struct stage_display {
  std::FILE *log = nullptr;       // where the stage's output goes whole (run.log)
  std::string log_path;           // named when a stage fails
  bool terminal = false;          // redraw a status line on stdout
  bool verbose = false;           // the output on stdout as well
  std::string summary;            // out: the stage's own summary line ("gpuprobe tune: ...")
  std::vector<std::string> notes; // out: what the terminal must see (stage_watch::notes)
};
std::string run_stage_in(const std::string &dir, const std::string &name,
                         const std::vector<std::string> &args, const std::string &resume,
                         stage_display *display = nullptr);
// The same, with the stage run inside this process by `run_here` (cli::run_here: `gpuprobe ARGS`
// as a function, returning its exit status) in `dir`: with `display`, its stdout and stderr are
// read through a pipe as a child's are (the status line goes to the terminal this process had);
// without, it writes where this process does (characterize's stages). An exit status over 128 is
// an interruption (128 + signal). gpuprobe run's tune and validate run so, sharing a CUDA context
// and the pool kept between them.
using run_here_fn = std::function<int(const std::vector<std::string> &args)>;
std::string run_stage_here_in(const std::string &dir, const std::string &name,
                              const std::vector<std::string> &args, const std::string &resume,
                              stage_display *display, const run_here_fn &run_here);
// Whether a command's stages run inside its process: GPUPROBE_STAGES unset or "here"; "children"
// runs each as a child process; any other value is refused in one line.
bool stages_here_by_env();
// The working folder for a stage run inside this process (a child is started in it): the stages'
// arguments name files relative to the results folder. The folder before is restored at the end.
class working_dir : private non_copyable {
public:
  explicit working_dir(const std::string &dir);
  ~working_dir();

private:
  std::string was_;
};
// The same for another program (argv[0], e.g. gpuprobe-bench) with `env` ("NAME=value") added.
std::string run_program_stage_in(const std::string &dir, const std::string &name,
                                 const std::vector<std::string> &argv,
                                 const std::vector<std::string> &env, const std::string &resume,
                                 stage_display *display = nullptr);

} // namespace gpuprobe::pipeline
