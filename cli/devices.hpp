#pragma once
// `--devices all|0,2,...`: one gpuprobe process per GPU, concurrently, each in its own unit folder
// PARENT/<gpu-slug>-<uuid8>; progress lines carry the GPU's label; a GPU that fails does not stop
// the others and is reported with its error. characterize, run, tune and validate use it
// (characterize and run through stage_command_flags, below).
#include "cli/common.hpp"
#include "common/device_info.hpp"

#include <functional>
#include <string>
#include <vector>

namespace gpuprobe::cli {

// What one GPU's process does: the subcommand's arguments for this unit folder, or a one-line
// reason why it cannot run (a missing input), which fails that GPU only. The process runs with
// CUDA_VISIBLE_DEVICES=<the GPU's UUID>: its GPU is device 0 there.
struct device_step {
  std::vector<std::string> args;
  std::string cannot_run;
};
// `position`: the GPU's place in the launch (0, 1, 2, ...), not its ordinal.
using device_plan = std::function<device_step(const device_identity &, const std::string &unit,
                                              std::size_t position)>;

// Throws gpuprobe::error (after the per-GPU summary) when a GPU failed. `what` names the command.
void run_per_device(const std::string &what, const std::string &devices, const std::string &parent,
                    const device_plan &plan);

// The usual plan: `sub --device 0 [input_flag UNIT/input] --out UNIT[/output] extra...
// [every_second...]`, the last only for the 2nd, 4th, ... GPU of the launch; a unit whose input
// is missing is refused with "no UNIT/input: <missing_hint>".
struct unit_command {
  std::string sub;
  std::string input_flag, input; // "" = none
  std::string output;            // "" = the unit folder itself
  std::vector<std::string> extra;
  std::string missing_hint;
  std::vector<std::string> every_second = {};
};
device_plan plan_for(const unit_command &c);

// The files of a command that measures one unit folder's input into its output (tune, validate),
// for its options' help: the input's flag, what the input is, what --out writes, and what each
// GPU's process of --devices reads and writes.
struct unit_file_texts {
  std::string input_flag, input_help, out_help, devices_what;
};

// tune's and validate's flags (R: their run options, with reps and quick): on one GPU the input
// (input_flag) and --out; with --devices, `results` is the parent of the unit folders, each GPU's
// process reads `input` of its unit folder (a unit without it is refused: run gpuprobe <before>
// --devices first) and writes `output` there, with --reps, --seed and --quick as given.
template <class R> struct unit_file_flags {
  common_options common;
  R run;                           // the flags of its own
  std::string results = "results"; // --devices: the parent of the unit folders
  std::string input_flag;          // the input's flag, as add_options declared it

  // The input flag, --out, --device, --devices, --results and --seed, in that order.
  void add_options(CLI::App &app, std::string &input, const unit_file_texts &t) {
    input_flag = t.input_flag;
    app.add_option(t.input_flag, input, t.input_help);
    app.add_option("--out", common.out, t.out_help);
    add_device_option(app, common);
    add_devices_option(app, common, t.devices_what);
    app.add_option("--results", results, "with --devices: the parent of the GPUs' folders")
        ->capture_default_str();
    add_seed_option(app, common);
  }
  // On one GPU: the input and --out given, and the input readable (check_one_gpu_files).
  void check_files(const std::string &sub, const std::string &input) const {
    check_one_gpu_files(sub, input_flag, input, common.out);
  }
  unit_command measure_command(const std::string &sub, const std::string &input,
                               const std::string &output, const std::string &before) const {
    unit_command c{sub,
                   input_flag,
                   input,
                   output,
                   {"--reps", std::to_string(run.reps), "--seed", std::to_string(common.seed)},
                   "run gpuprobe " + before + " --devices first"};
    if (run.quick)
      c.extra.push_back("--quick");
    return c;
  }
};

// The unit folder of a GPU under `parent`: PARENT/<gpu-slug>-<uuid8>.
std::string unit_folder(const std::string &parent, const device_identity &d);

// The flags of a command that runs characterize's stages on one GPU or on every GPU of --devices
// (characterize, run): the shared ones, its own (R, a gpu_run_options with allow_busy,
// busy_wait_seconds, map_late and run_here), and --map-late / --no-map-late.
template <class R> struct stage_command_flags {
  common_options common;
  R run;
  map_late_options map_late;
  // One GPU: --device, --out, --seed and --map-late over its own; stages in this process.
  R one_gpu_options() const {
    auto r = one_gpu(common, run);
    r.map_late = map_late.late;
    r.run_here = run_here;
    return r;
  }
  // Every GPU of --devices: `sub` with --seed, --quick, --allow-busy and --busy-wait as given,
  // every second GPU mapping late (unless --no-map-late), into PARENT (--out, else results).
  void per_device(const std::string &sub, const std::vector<std::string> &extra = {}) const {
    run_per_device(sub, common.devices, common.out.empty() ? "results" : common.out,
                   plan_for(unit_command_of(sub, extra)));
  }
  // What each GPU's process of per_device runs.
  unit_command unit_command_of(const std::string &sub,
                               const std::vector<std::string> &extra) const {
    unit_command c{sub, "", "", "", {"--seed", std::to_string(common.seed)}, ""};
    if (run.quick)
      c.extra.push_back("--quick");
    if (run.allow_busy)
      c.extra.push_back("--allow-busy");
    c.extra.insert(c.extra.end(), {"--busy-wait", busy_wait_text(run.busy_wait_seconds)});
    c.extra.insert(c.extra.end(), extra.begin(), extra.end());
    c.every_second = map_late.every_second(); // neighbours map at different times
    return c;
  }
};

} // namespace gpuprobe::cli
