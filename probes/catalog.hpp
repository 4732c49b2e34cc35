#pragma once
// Every probe, named once. A probe is one folder, probes/<name>/: its kernel, driver, typed result
// with its reader and writer, its analysis, `cli.cpp` (its subcommand), `draw.cpp` (its part of
// the report), `plan.cpp` (its stages in `gpuprobe characterize`) and `probe.hpp`, whose `entry`
// is its line in probe_catalog() (probes/catalog.cpp). The CLI registry, the report's scan,
// characterize's plan and the tests iterate this list. (A list, not self-registration from each
// folder: the probes live in a static library, whose objects the linker drops when nothing else
// names them, and the list would then differ between binaries.)
//
// This header includes nothing and names the kit's types (probes/kit.hpp) only by declaration: a
// probe's functions fill the kit's plain data, which cli/, pipeline/ and report/ interpret.
#include <string>
#include <vector>

namespace gpuprobe::probes::kit {
struct command;
struct report_content;
struct report_inputs;
struct stage;
struct plan_request;
} // namespace gpuprobe::probes::kit
namespace gpuprobe {
struct results_folder;
namespace model {
struct profile;
}
} // namespace gpuprobe

namespace gpuprobe::probes {

struct probe_descriptor {
  const char *id;      // the result's "probe" field
  const char *command; // `gpuprobe <command>` runs it (its --help says what it measures)
  // `gpuprobe <command>`: its flags and what it runs (cli.cpp), which the CLI adds.
  kit::command (*cli)();
  // Its part of the report: draws the results scan found (inputs::raw[id]), or says in
  // c.missing what it lacks. nullptr: its results are drawn through profile.json's tables (they
  // count as drawn when the folder has a profile).
  void (*draw)(const kit::report_inputs &in, kit::report_content &c);
  // Its stages in `gpuprobe characterize` (pipeline/stage_plan.hpp runs them), appended to `out`;
  // nullptr: characterize does not run it.
  void (*plan)(const kit::plan_request &r, std::vector<kit::stage> &out);
  // What it adds to profile.json (profile.cpp), from its own files of the results folder, over
  // the profile that raw/tlb_profile.json began (characterize's assemble_profile calls each
  // probe's in catalog order); nullptr: nothing.
  void (*contribute)(const results_folder &folder, model::profile &p) = nullptr;
  // Its `gpuprobe analyze <name>` subcommand (cli.cpp); nullptr: none.
  kit::command (*analyze_cli)() = nullptr;
  // The heading of its part of the report (nullptr: the id).
  const char *heading = nullptr;
};

const std::vector<probe_descriptor> &probe_catalog();
// The probe whose results carry `id`, or nullptr.
const probe_descriptor *find_probe(const std::string &id);

} // namespace gpuprobe::probes
