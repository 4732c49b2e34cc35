// gpuprobe: characterize a GPU's TLBs, sharing and atomics; tune and validate RW allocators.
#include "cli/common.hpp"
#include "common/error.hpp"

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  gpuprobe::cli::set_invocation(argc, argv);
  CLI::App app{"gpuprobe: GPU TLB/atomics characterization and Random-Walk allocator tuning"};
  app.set_version_flag("--version", std::string("gpuprobe ") + GPUPROBE_VERSION + " (" + GPUPROBE_GIT_COMMIT + ")");
  app.set_config("--config", "", "read options from a TOML/INI file (reproduces a run)");
  app.require_subcommand(1);
  gpuprobe::cli::setup_tlb(app);
  gpuprobe::cli::setup_tlb_sharing(app);
  gpuprobe::cli::setup_atomics(app);
  gpuprobe::cli::setup_analyze(app);
  gpuprobe::cli::setup_theory(app);
  gpuprobe::cli::setup_report(app);
  gpuprobe::cli::setup_characterize(app);
  gpuprobe::cli::setup_tune(app);
  gpuprobe::cli::setup_validate(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const gpuprobe::error& e) {
    std::fprintf(stderr, "gpuprobe: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuprobe: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
