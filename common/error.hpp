#pragma once
// One exception type for everything a user can get wrong (bad input, missing device, ...).
// main() prints its message on one line and exits non-zero.
#include <stdexcept>
#include <string>

namespace gpuprobe {

struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A signal (SIGINT, SIGTERM, SIGHUP) stopped the command after its children ended and its
// temporary files were removed: main() exits 128 + signal (common/process.hpp).
struct interrupted : error {
  int signal = 0;
  interrupted(const std::string &what, int sig) : error(what), signal(sig) {}
};

} // namespace gpuprobe
