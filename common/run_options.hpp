#pragma once
// What a command that runs on one GPU is given, whatever it does: the GPU, what it writes, the
// seed and whether it is a quick run. The options of tune, validate, characterize and run start
// from it (each command's flags fill it: cli/common.hpp's one_gpu).
#include <string>

namespace gpuprobe {

struct gpu_run_options {
  int device = 0;
  std::string out; // the file or folder it writes
  unsigned long long seed = 0;
  bool quick = false;
};

} // namespace gpuprobe
