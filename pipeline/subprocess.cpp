#include "pipeline/subprocess.hpp"

#include "common/error.hpp"
#include "common/process.hpp"

#include <csignal>

namespace gpuprobe::pipeline {

std::string shell_quote(const std::string &text) {
  std::string o = "'";
  for (char c : text)
    o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

std::string run_stage_in(const std::string &dir, const std::string &name,
                         const std::vector<std::string> &args, const std::string &resume) {
  std::vector<std::string> argv = {self_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string shown = "cd " + shell_quote(dir) + " &&"; // what ran, as a person would type it
  for (const auto &a : argv)
    shown += " " + shell_quote(a);
  child_result r;
  {
    const cleanup_scope waiting; // a signal reaches the stage; this process reports it after
    child_options o;
    o.dir = dir;
    r = run_child(argv, o);
  }
  const int sig = interrupted_by() ? interrupted_by() : r.signal;
  if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || r.exit_code == 130)
    throw interrupted("interrupted during stage " + name + ": " + resume, sig ? sig : SIGINT);
  if (r.signal != 0 || (r.exit_code != 0 && r.exit_code != k_exit_partial))
    throw error("stage " + name + " failed (" + shown + "); " + resume);
  return shown;
}

} // namespace gpuprobe::pipeline
