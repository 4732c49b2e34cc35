#pragma once
// `--devices all|0,2,...`: one gpuprobe process per GPU, concurrently, each in its own unit folder
// PARENT/<gpu-slug>-<uuid8>; progress lines carry the GPU's label; a GPU that fails does not stop
// the others and is reported with its error. characterize, tune and validate use it.
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

// The unit folder of a GPU under `parent`: PARENT/<gpu-slug>-<uuid8>.
std::string unit_folder(const std::string &parent, const device_identity &d);

} // namespace gpuprobe::cli
