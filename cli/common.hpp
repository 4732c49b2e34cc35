#pragma once
// Options every subcommand shares, and the wiring of subcommands into main().
#include "common/defaults.hpp"
#include "pipeline/subprocess.hpp"
#include "probes/kit.hpp"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gpuprobe::cli {

using probes::kit::common_options; // the probe kit's (probes/kit.hpp)

void add_device_option(CLI::App &app, common_options &o);
void add_out_option(CLI::App &app, common_options &o, const std::string &what);
void add_input_option(CLI::App &app, common_options &o, const std::string &what);
void add_seed_option(CLI::App &app, common_options &o);
// --busy-wait SECONDS (characterize, run): how long a busy GPU is waited for; busy_wait_text is
// the value as passed on to a child (run -> characterize, --devices -> each unit).
void add_busy_wait_option(CLI::App &app, double &seconds);
std::string busy_wait_text(double seconds);
// --map-late / --no-map-late (characterize, run). --map-late: this GPU runs the stages that map
// no alias range first (atomics; run, full: its TAS/WAS grid before characterize too). With
// --devices every second GPU of the launch does so by default, so neighbours map their ranges and
// pools at different times (2 x H200: -1 and +2 % over one GPU against +12 % on one
// node, +19 against +21 % on another, the answers the same: docs/fleet.md); --no-map-late keeps
// every GPU in the usual order.
struct map_late_options {
  bool late = false;     // --map-late
  bool not_late = false; // --no-map-late
  // What every second GPU of a --devices launch adds to its command.
  std::vector<std::string> every_second() const;
};
void add_map_late_flags(CLI::App &app, map_late_options &o);
// --devices (excludes --device, which must be added first); `what` says where the folders go.
void add_devices_option(CLI::App &app, common_options &o, const std::string &what);

// A one-GPU command's run options (R derives from gpu_run_options; its own flags fill `run`) with
// its --device, --out and --seed.
template <class R> R one_gpu(const common_options &c, R run) {
  run.device = c.device;
  run.out = c.out;
  run.seed = c.seed;
  return run;
}

// A probe's subcommand, as its cli.cpp declares it (probes/kit.hpp): added under `parent`, its
// shared options and flags in their order; its callback checks --out's folder, then runs it.
void add_command(CLI::App &parent, probes::kit::command c);

// Fails early (before a long run) when the output file's folder does not exist.
void check_output_path(const std::string &path);

// A one-GPU run of `command` that reads the file of `input_flag` and writes --out: both given
// ("COMMAND: give INPUT_FLAG and --out (or --devices)"), --out's folder there, and --out not one
// of its inputs (common/paths.hpp).
void check_one_gpu_files(const std::string &command, const std::string &input_flag,
                         const std::string &input, const std::string &out);

// Stages as child processes (pipeline/subprocess.hpp), used by the commands that start them.
using pipeline::k_exit_partial;
using pipeline::run_stage_in;

// Exit statuses, the same for every subcommand (README "Exit status"; `gpuprobe --help`):
//   0 done; 1 an error (one line "gpuprobe: error: ..."); 2 a usage error (an unknown subcommand
//   or option, a bad value: CLI11's own codes are folded into it); 3 done, with something left
//   out and listed (report: an input not drawn; fleet: a folder that is no unit, or a unit that
//   failed or is incomplete); 128 + N interrupted by signal N (130 Ctrl-C, 143 SIGTERM, 129
//   SIGHUP), its temporary files removed and its children ended.
inline constexpr int k_exit_error = 1;
inline constexpr int k_exit_usage = 2;
// Parses and runs one command line (argv[0] the program), printing an error in one line: main's
// body; returns the exit status. run_here runs `gpuprobe ARGS...` inside this process, as a
// characterize stage (its files record its own argv); its exit status.
int run_command(int argc, const char *const *argv);
int run_here(const std::vector<std::string> &args);
// main() returns exit_status() when no error: 0, or k_exit_partial (report left something out).
int &exit_status();

// Each subcommand: setup_<name>(parent) registers it and its callback. cli/registry.cpp lists
// them: first every probe's (its catalog entry's cli, probes/catalog.hpp), then these.
using setup_fn = void (*)(CLI::App &parent);
const std::vector<setup_fn> &subcommands();

// A bound that is a number in [lo, hi] (CLI11's Range lets NaN through: every comparison with it
// is false).
CLI::Validator finite_in(double lo, double hi);

void setup_analyze(CLI::App &parent);
void setup_theory(CLI::App &parent);
void setup_report(CLI::App &parent);
void setup_characterize(CLI::App &parent);
void setup_tune(CLI::App &parent);
void setup_validate(CLI::App &parent);
void setup_fleet(CLI::App &parent);
void setup_compare(CLI::App &parent);
void setup_run(CLI::App &parent);

} // namespace gpuprobe::cli
