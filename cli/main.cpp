// gpuprobe: characterize a GPU's TLBs, sharing and atomics; tune and validate RW allocators.
#include "cli/common.hpp"
#include "common/envelope.hpp"
#include "common/folder_lock.hpp"
#include "common/process.hpp"

#include <cstdio>

int main(int argc, char **argv) {
  gpuprobe::set_invocation(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0); // a line at a time into a pipe too: run's status line
  gpuprobe::install_interrupt_handlers();   // SIGINT/SIGTERM/SIGHUP reach the children too
  gpuprobe::end_with_lock_holder();         // a stage ends with the command that started it
  return gpuprobe::cli::run_command(argc, argv); // cli/command.cpp
}
