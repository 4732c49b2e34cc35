#pragma once
// One exception type for everything a user can get wrong (bad input, missing device, ...).
// main() prints its message on one line and exits non-zero.
#include <stdexcept>
#include <string>

namespace gpuprobe {

struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

} // namespace gpuprobe
