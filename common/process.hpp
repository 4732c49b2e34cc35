#pragma once
// Child processes without a shell: every child (a stage of this binary, the plotter,
// nvidia-smi, a --devices unit) is started from an argument vector with posix_spawnp, so no
// path or argument is ever read by /bin/sh. And interruption: SIGINT, SIGTERM and SIGHUP are
// passed on to the children that are running, and a command that registered something to clean
// (a temporary folder) is told to stop instead of dying mid-write. Host-only, POSIX.
#include "common/non_copyable.hpp"
#include <functional>
#include <string>
#include <vector>

namespace gpuprobe {

struct child_options {
  std::string dir;      // the child's working folder ("" = this one)
  bool capture = false; // collect its stdout (and stderr, with merge_stderr) into output
  bool merge_stderr = false;
  bool quiet_stderr = false;    // stderr to /dev/null
  std::string stderr_file;      // stderr to this file (created or emptied), when not ""
  std::vector<std::string> env; // "NAME=value" set for the child on top of this environment
  // Called with each chunk of output as it comes (capture only), e.g. to prefix and echo it.
  std::function<void(const std::string &)> on_output;
};

struct child_result {
  int exit_code = -1; // the child's exit status; 128 + signal when a signal ended it
  int signal = 0;     // the signal that ended it (0: it exited)
  std::string output; // captured output
  bool ok() const { return signal == 0 && exit_code == 0; }
};

// Runs argv[0] (found in PATH when it has no '/') with argv; waits for it. Throws
// gpuprobe::error when it cannot be started (naming the program). While it runs, a SIGINT,
// SIGTERM or SIGHUP to this process is passed on to it.
child_result run_child(const std::vector<std::string> &argv, const child_options &o = {});

// Several children at once (spawned, not waited for): each one's pid and the read end of its
// output pipe (stdout and stderr merged), for a caller that polls them (common/jobs.cpp).
struct spawned_child {
  int pid = -1;
  int out_fd = -1;
};
// `env`: "NAME=value" entries set for the child on top of this process's environment.
spawned_child spawn_child(const std::vector<std::string> &argv, const std::string &dir = "",
                          const std::vector<std::string> &env = {});
// Waits for a spawned child; its exit code (128 + signal when a signal ended it).
int wait_child(spawned_child &c);

// This binary (/proc/self/exe).
std::string self_path();

// The last line of a child's output (trailing newlines dropped): where its error is said.
std::string last_line(std::string text);

// Interruption. install_interrupt_handlers() (main, once): SIGINT, SIGTERM and SIGHUP are passed
// on to the running children; then, inside a cleanup_scope, the process carries on until
// check_interrupted() throws (the scope's owner cleans up and main exits 128 + signal); outside
// one it ends at once, as it would by default.
void install_interrupt_handlers();
int interrupted_by(); // the signal received, 0 when none
// Throws gpuprobe::interrupted when a signal was received.
void check_interrupted(const std::string &during);

class cleanup_scope : private non_copyable {
public:
  cleanup_scope();
  ~cleanup_scope();
};

} // namespace gpuprobe
