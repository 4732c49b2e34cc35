// gpuprobe analyze: each probe's analysis subcommand (its catalog entry's analyze_cli: `analyze
// tlb`, `analyze sharing`), which turns raw results into parameters.
#include "cli/common.hpp"
#include "probes/catalog.hpp"

namespace gpuprobe::cli {

void setup_analyze(CLI::App &parent) {
  auto *app = parent.add_subcommand("analyze", "turn raw probe results into parameters");
  app->require_subcommand(1);
  for (const auto &probe : probes::probe_catalog())
    if (probe.analyze_cli)
      add_command(*app, probe.analyze_cli());
}

} // namespace gpuprobe::cli
