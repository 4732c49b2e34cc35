#include "test_util.hpp"

#include "common/folder_lock.hpp"
#include "common/json_io.hpp"
#include "common/process.hpp"
#include "common/results_folder.hpp"
#include "tests/common/binary_path.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace gpuprobe::test {

namespace {
// This process's scratch folder, removed when the process exits (not by a forked child that
// exits: only the process that made it removes it), so the tests leave nothing in /tmp.
struct scratch_remover {
  std::filesystem::path dir;
  pid_t owner;
  ~scratch_remover() {
    std::error_code ec;
    if (::getpid() == owner)
      std::filesystem::remove_all(dir, ec);
  }
};
} // namespace

std::string temp_path(const std::string &name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpuprobe_test_" + std::to_string(::getpid()));
  static const scratch_remover remover{dir, ::getpid()};
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

bool file_exists(const std::string &path) { return std::filesystem::exists(path); }

std::vector<named_sweep> committed_real_sweeps() {
  namespace fs = std::filesystem;
  using raw = results_folder::raw_file;
  const fs::path src = GPUPROBE_SOURCE_DIR;
  std::vector<named_sweep> out;
  const auto add = [&](const fs::path &file) {
    out.push_back({fs::relative(file, src).string(), probes::load_tlb_inputs({file.string()})});
  };
  // The runs kept for the tests (tests/fixtures/runs), first and in their folders' order: the
  // simulated family draws its noise from this list in this order, as it did when they were the
  // examples (the curated examples of today's build are not in it: the family's figures stay).
  std::vector<fs::path> runs;
  for (const auto &e : fs::directory_iterator(src / "tests/fixtures/runs"))
    runs.push_back(e.path());
  std::sort(runs.begin(), runs.end());
  for (const auto &run : runs)
    for (const char *f : {raw::tlb, raw::tlb_real})
      if (fs::exists(run / results_folder::raw_dir / f))
        add(run / results_folder::raw_dir / f);
  const std::size_t first_fixture = out.size();
  // The fixtures' gpuprobe results whose probe is the tlb sweep (not sharing, not atomics).
  for (const char *dir : {"tests/fixtures/gpuprobe-alias", "tests/fixtures/gpuprobe-results"})
    for (const auto &e : fs::directory_iterator(src / dir))
      if (e.path().extension() == ".json" &&
          read_json_file(e.path().string()).value("probe", "") == "tlb")
        add(e.path());
  for (const char *gpu : {"K80", "P100", "H100"}) {
    std::vector<std::string> csvs;
    for (const auto &e : fs::directory_iterator(src / "tests/fixtures/cuda-gpu-tlb" / gpu))
      if (e.path().extension() == ".csv")
        csvs.push_back(e.path().string());
    std::sort(csvs.begin(), csvs.end());
    out.push_back(
        {std::string("tests/fixtures/cuda-gpu-tlb/") + gpu, probes::load_tlb_inputs(csvs)});
  }
  std::sort(out.begin() + long(first_fixture), out.end(),
            [](const named_sweep &a, const named_sweep &b) { return a.name < b.name; });
  return out;
}

std::vector<std::filesystem::path> committed_run_folders() {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  for (const char *root : {"reports/examples/runs", "tests/fixtures/runs"}) {
    std::vector<fs::path> in;
    for (const auto &e : fs::directory_iterator(fs::path(GPUPROBE_SOURCE_DIR) / root))
      if (fs::exists(e.path() / "profile.json"))
        in.push_back(e.path());
    std::sort(in.begin(), in.end());
    out.insert(out.end(), in.begin(), in.end());
  }
  return out;
}

std::vector<std::filesystem::directory_entry> committed_result_files() {
  namespace fs = std::filesystem;
  std::vector<fs::directory_entry> out;
  for (const char *root : {"reports/examples", "tests/fixtures/runs", "tests/fixtures/fleet",
                           "tests/fixtures/peers", "tests/fixtures/rw-malloc-issue35",
                           "tests/fixtures/repeats"})
    for (const auto &e : fs::recursive_directory_iterator(fs::path(GPUPROBE_SOURCE_DIR) / root))
      out.push_back(e);
  return out;
}

nlohmann::json without_times(nlohmann::json j) {
  if (j.is_object()) {
    for (const char *k : {"created_utc", "seconds", "wall_seconds"})
      j.erase(k);
    for (auto &[k, v] : j.items())
      v = without_times(v);
  } else if (j.is_array()) {
    for (auto &v : j)
      v = without_times(v);
  }
  return j;
}

std::string committed_run(const std::string &name) {
  for (const auto &f : committed_run_folders())
    if (f.filename() == name)
      return f.string();
  return std::string(GPUPROBE_SOURCE_DIR) + "/tests/fixtures/runs/" + name; // names the missing one
}

std::string write_temp(const std::string &name, const std::string &text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

std::string read_all(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {
int real_figures_held = 0;
const std::string k_stub_plot = std::string(GPUPROBE_SOURCE_DIR) + "/tests/tools/stub_plot.py";
// A report command that names no plotter, with no test holding real figures, draws with the stub.
bool draws_with_stub(bool report, bool names_plotter) {
  return !real_figures_held && report && !names_plotter;
}
} // namespace

std::string stub_plot_script() { return k_stub_plot; }
real_figures::real_figures() { ++real_figures_held; }
real_figures::~real_figures() { --real_figures_held; }

run_result run_gpuprobe(const std::string &args) {
  const bool stub = draws_with_stub(args.rfind("report ", 0) == 0,
                                    args.find("--plot-script") != std::string::npos);
  return run_binary(gpuprobe_binary(), stub ? args + " --plot-script " + k_stub_plot : args);
}

run_result run_gpuprobe_argv(const std::vector<std::string> &args, const std::string &dir) {
  std::vector<std::string> argv = {gpuprobe_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  if (draws_with_stub(!args.empty() && args[0] == "report",
                      std::find(args.begin(), args.end(), "--plot-script") != args.end()))
    argv.insert(argv.end(), {"--plot-script", k_stub_plot});
  child_options o;
  o.dir = dir;
  o.capture = true;
  o.stderr_file = temp_path("stderr_argv.txt");
  const auto c = run_child(argv, o);
  run_result r;
  r.exit_code = c.exit_code;
  r.out = c.output;
  r.err = read_all(o.stderr_file);
  return r;
}

run_result run_binary(const std::string &binary, const std::string &args) {
  const std::string out = temp_path("stdout.txt"), err = temp_path("stderr.txt");
  const std::string cmd = binary + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  run_result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_all(out);
  r.err = read_all(err);
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
