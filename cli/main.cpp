// gpuprobe: characterize a GPU's TLBs, sharing and atomics; tune and validate RW allocators.
#include "cli/common.hpp"
#include "common/build_info.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/folder_lock.hpp"
#include "common/process.hpp"

#include <cstdio>
#include <exception>

int main(int argc, char **argv) {
  gpuprobe::set_invocation(argc, argv);
  gpuprobe::install_interrupt_handlers(); // SIGINT/SIGTERM/SIGHUP reach the children too
  gpuprobe::end_with_lock_holder();       // a stage ends with the command that started it
  CLI::App app{"gpuprobe: GPU TLB/atomics characterization and Random-Walk allocator tuning"};
  app.set_version_flag("--version", std::string("gpuprobe ") + GPUPROBE_VERSION + " (" +
                                        gpuprobe::git_commit() + ")");
  app.set_config("--config", "", "read options from a TOML/INI file (reproduces a run)");
  app.require_subcommand(1);
  for (auto setup : gpuprobe::cli::subcommands())
    setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  } catch (const gpuprobe::interrupted &e) {
    std::fprintf(stderr, "gpuprobe: %s\n", e.what());
    return 128 + e.signal; // as a shell reports a command a signal ended
  } catch (const gpuprobe::error &e) {
    std::fprintf(stderr, "gpuprobe: error: %s\n", e.what());
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "gpuprobe: error: %s\n", e.what());
    return 1;
  }
  return gpuprobe::cli::exit_status(); // 0, or k_exit_partial: done, with something left out
}
