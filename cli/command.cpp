// One gpuprobe command line, parsed and run: main's body (cli/main.cpp), and a characterize stage
// run inside the characterize process (run_here).
#include "cli/common.hpp"
#include "common/build_info.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/process.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>

namespace gpuprobe::cli {

namespace {

constexpr std::size_t k_max_config_bytes = 1u << 20;

// Edits (insert, delete, replace, swap of neighbours) from a to b.
std::size_t distance(const std::string &a, const std::string &b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// "gpuprobe reprot": the first word is no subcommand; the closest one, if any is close.
std::string unknown_subcommand(const CLI::App &app, int argc, const char *const *argv) {
  if (argc < 2 || argv[1][0] == '-')
    return "";
  const std::string word = argv[1];
  std::string best;
  std::size_t best_d = SIZE_MAX;
  for (const auto *sub : app.get_subcommands([](const CLI::App *) { return true; })) {
    if (sub->get_name() == word)
      return "";
    const auto d = distance(word, sub->get_name());
    if (d < best_d)
      best_d = d, best = sub->get_name();
  }
  return "'" + word + "' is not a gpuprobe subcommand" +
         (best_d <= 2 ? "; did you mean '" + best + "'?" : "") + " (gpuprobe --help lists them)";
}

// --config FILE is read by CLI11 itself: it gets the checks every gpuprobe reader makes first (a
// regular file, not /dev/zero or a FIFO, of at most 1 MiB), so a bad one fails in one line.
void check_config_file(int argc, const char *const *argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string path;
    if (a == "--config" && i + 1 < argc)
      path = argv[i + 1];
    else if (a.rfind("--config=", 0) == 0)
      path = a.substr(9);
    else
      continue;
    check_input_file(path, k_max_config_bytes); // before CLI11 reads a byte
  }
}

} // namespace

int run_command(int argc, const char *const *argv) {
  const read_once_scope once; // each file read from disk once in a command (common/json_io.hpp)
  CLI::App app{"gpuprobe: GPU TLB/atomics characterization and Random-Walk allocator tuning"};
  app.set_version_flag("--version",
                       std::string("gpuprobe ") + GPUPROBE_VERSION + " (" + git_commit() + ")");
  app.set_config("--config", "", "read options from a TOML/INI file (reproduces a run)");
  app.require_subcommand(1);
  app.footer("Exit status: 0 done; 1 error (one line); 2 usage error; 3 done with something left "
             "out and listed (report, fleet); 4 compare --fail-on different: a finding differs or "
             "is missing; 128+N interrupted by signal N (130 Ctrl-C, 143 "
             "SIGTERM, 129 SIGHUP), temporary files removed.\nWithout a GPU: report, fleet, "
             "analyze, theory and characterize --reanalyze (try reports/examples).");
  for (auto setup : subcommands())
    setup(app);
  if (const std::string bad = unknown_subcommand(app, argc, argv); !bad.empty()) {
    std::fprintf(stderr, "gpuprobe: error: %s\n", bad.c_str());
    return k_exit_usage;
  }
  try {
    check_config_file(argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    const int code = app.exit(e);        // prints help, the version, or the error
    return code == 0 ? 0 : k_exit_usage; // one status for every usage error
  } catch (const interrupted &e) {
    std::fprintf(stderr, "gpuprobe: %s\n", e.what());
    return 128 + e.signal; // as a shell reports a command a signal ended
  } catch (const std::exception &e) {
    std::fprintf(stderr, "gpuprobe: error: %s\n", e.what());
    return k_exit_error;
  }
  // What was printed must have arrived: `theory > /dev/full` is an error, not a silent exit 0.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "gpuprobe: error: writing the output to standard output failed (%s)\n",
                 std::strerror(errno ? errno : EIO));
    return k_exit_error;
  }
  return exit_status(); // 0, or k_exit_partial: done, with something left out
}

int run_here(const std::vector<std::string> &args) {
  std::vector<std::string> words = {self_path()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<const char *> argv;
  for (const auto &w : words)
    argv.push_back(w.c_str());
  argv.push_back(nullptr);
  const invocation_scope as_its_own(int(words.size()), argv.data()); // meta.argv: the stage's
  const int outer = exit_status();
  exit_status() = 0;
  const int code = run_command(int(words.size()), argv.data());
  exit_status() = outer;
  std::fflush(stderr);
  return code;
}

} // namespace gpuprobe::cli
