// Every subcommand of gpuprobe, in the order --help lists them: the probes' (in catalog order),
// then the commands over results.
#include "cli/common.hpp"
#include "probes/catalog.hpp"

namespace gpuprobe::cli {

namespace {

void setup_probes(CLI::App &parent) {
  for (const auto &p : probes::probe_catalog())
    add_command(parent, p.cli());
}

} // namespace

const std::vector<setup_fn> &subcommands() {
  static const std::vector<setup_fn> all = [] {
    std::vector<setup_fn> s = {setup_probes};
    for (setup_fn f : {setup_analyze, setup_theory, setup_report, setup_characterize, setup_tune,
                       setup_validate, setup_fleet, setup_compare, setup_run})
      s.push_back(f);
    return s;
  }();
  return all;
}

} // namespace gpuprobe::cli
