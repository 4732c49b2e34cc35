#pragma once
// A results folder read once into its typed values (issue 46): profile.json, and tuning.json and
// validation.json where tune and validate wrote them. `gpuprobe compare` takes two of these.
// Host-only.
#include "model/profile.hpp"
#include "model/tuning.hpp"
#include "model/validation.hpp"

#include <optional>
#include <string>

namespace gpuprobe::model {

struct run_folder {
  std::string dir;
  profile prof;
  std::optional<tuning_file> tuning;
  std::optional<validation> valid;
};

// Throws gpuprobe::error in one line where DIR has no profile.json (a folder characterize has
// not finished) or a file of it does not read.
run_folder read_run_folder(const std::string &dir);

} // namespace gpuprobe::model
