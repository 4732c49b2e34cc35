// Every subcommand of gpuprobe, in the order --help lists them.
#include "cli/common.hpp"

namespace gpuprobe::cli {

const std::vector<setup_fn> &subcommands() {
  static const std::vector<setup_fn> all = {
      setup_tlb,     setup_tlb_sharing, setup_tlb_sampling, setup_tlb_conflict,
      setup_atomics, setup_analyze,     setup_theory,       setup_report,
      setup_characterize, setup_tune,   setup_validate,     setup_fleet,
      setup_run,
  };
  return all;
}

} // namespace gpuprobe::cli
