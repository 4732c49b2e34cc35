// gpuprobe analyze: each probe's analysis subcommand (its catalog entry's setup_analyze: `analyze
// tlb`, `analyze sharing`), which turns raw results into parameters.
#include "cli/common.hpp"
#include "probes/catalog.hpp"

namespace gpuprobe::cli {

void setup_analyze(CLI::App &parent) {
  auto *app = parent.add_subcommand("analyze", "turn raw probe results into parameters");
  app->require_subcommand(1);
  for (const auto &probe : probes::probe_catalog())
    if (probe.setup_analyze)
      probe.setup_analyze(*app);
}

} // namespace gpuprobe::cli
