#pragma once
// Options every subcommand shares, and the wiring of subcommands into main().
#include "common/defaults.hpp"
#include "pipeline/subprocess.hpp"

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

// Stages as child processes (pipeline/subprocess.hpp), used by the commands that start them.
using pipeline::k_exit_partial;
using pipeline::run_stage_in;

// main() returns exit_status() when no error: 0, or k_exit_partial (report left something out).
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
