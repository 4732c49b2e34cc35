#include "test_util.hpp"

#include "common/folder_lock.hpp"
#include "common/process.hpp"
#include "tests/common/binary_path.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace gpuprobe::test {

std::string temp_path(const std::string &name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpuprobe_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

bool file_exists(const std::string &path) { return std::filesystem::exists(path); }

std::string write_temp(const std::string &name, const std::string &text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

static std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

run_result run_gpuprobe(const std::string &args) { return run_binary(gpuprobe_binary(), args); }

run_result run_gpuprobe_argv(const std::vector<std::string> &args, const std::string &dir) {
  std::vector<std::string> argv = {gpuprobe_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  child_options o;
  o.dir = dir;
  o.capture = true;
  o.stderr_file = temp_path("stderr_argv.txt");
  const auto c = run_child(argv, o);
  run_result r;
  r.exit_code = c.exit_code;
  r.out = c.output;
  r.err = slurp(o.stderr_file);
  return r;
}

run_result run_binary(const std::string &binary, const std::string &args) {
  const std::string out = temp_path("stdout.txt"), err = temp_path("stderr.txt");
  const std::string cmd = binary + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  run_result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

int hold_folder_lock_in_child(const std::string &dir) {
  int ready[2];
  EXPECT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(ready[0]);
    ::unsetenv(folder_lock::env_name);
    try {
      const folder_lock lock(dir, "characterize");
      const char ok = 1;
      (void)!::write(ready[1], &ok, 1);
      for (;;)
        ::pause();
    } catch (...) {
      std::_Exit(2);
    }
  }
  ::close(ready[1]);
  char ok = 0;
  EXPECT_EQ(::read(ready[0], &ok, 1), 1);
  ::close(ready[0]);
  return pid;
}

} // namespace gpuprobe::test
