#pragma once
// Options every subcommand shares, and the wiring of subcommands into main().
#include "common/defaults.hpp"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gpuprobe::cli {

struct common_options {
  int device = 0;
  std::string out;
  std::vector<std::string> inputs;
  unsigned long long seed = defaults::seed;
  std::string devices; // --devices all|0,2,...: one process per GPU ("" = just --device)
};

void add_device_option(CLI::App &app, common_options &o);
void add_out_option(CLI::App &app, common_options &o, const std::string &what);
void add_input_option(CLI::App &app, common_options &o, const std::string &what);
void add_seed_option(CLI::App &app, common_options &o);
// --devices (excludes --device, which must be added first); `what` says where the folders go.
void add_devices_option(CLI::App &app, common_options &o, const std::string &what);

// Fails early (before a long run) when the output file's folder does not exist.
void check_output_path(const std::string &path);

// 'text' quoted for /bin/sh.
std::string shell_quote(const std::string &text);
// This binary (/proc/self/exe), quoted.
std::string self_command();
// Runs this binary with `args` in folder `dir` and returns the command line it ran; throws
// gpuprobe::error "interrupted during stage NAME ..." on Ctrl-C and "stage NAME failed (...)" on a
// non-zero exit other than k_exit_partial (`resume` is appended: how to go on).
std::string run_stage_in(const std::string &dir, const std::string &name,
                         const std::vector<std::string> &args, const std::string &resume);

// The exit status of a command that did its work but left something out (report: an input it
// could not draw, listed under "not drawn"): 3. main() returns exit_status() when no error.
inline constexpr int k_exit_partial = 3;
int &exit_status();

// Each subcommand: setup_<name>(parent) registers it and its callback; cli/registry.cpp lists
// them (adding a subcommand is one file here and one line there).
using setup_fn = void (*)(CLI::App &parent);
const std::vector<setup_fn> &subcommands();

void setup_tlb(CLI::App &parent);
void setup_analyze(CLI::App &parent);
void setup_tlb_sharing(CLI::App &parent);
void setup_tlb_sampling(CLI::App &parent);
void setup_tlb_conflict(CLI::App &parent);
void setup_atomics(CLI::App &parent);
void setup_theory(CLI::App &parent);
void setup_report(CLI::App &parent);
void setup_characterize(CLI::App &parent);
void setup_tune(CLI::App &parent);
void setup_validate(CLI::App &parent);
void setup_fleet(CLI::App &parent);
void setup_run(CLI::App &parent);

} // namespace gpuprobe::cli
