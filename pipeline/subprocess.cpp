#include "pipeline/subprocess.hpp"

#include "common/error.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

namespace gpuprobe::pipeline {

std::string shell_quote(const std::string &text) {
  std::string o = "'";
  for (char c : text)
    o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

std::string self_command() {
  return shell_quote(std::filesystem::read_symlink("/proc/self/exe").string());
}

std::string run_stage_in(const std::string &dir, const std::string &name,
                         const std::vector<std::string> &args, const std::string &resume) {
  std::string cmd = "cd " + shell_quote(dir) + " && " + self_command();
  for (const auto &a : args)
    cmd += " " + shell_quote(a);
  const int status = std::system(cmd.c_str());
  if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 130))
    throw error("interrupted during stage " + name + ": " + resume);
  if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != k_exit_partial))
    throw error("stage " + name + " failed (" + cmd + "); " + resume);
  return cmd;
}

} // namespace gpuprobe::pipeline
