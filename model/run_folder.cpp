#include "model/run_folder.hpp"

#include "common/error.hpp"
#include "common/results_folder.hpp"

#include <filesystem>

namespace gpuprobe::model {

run_folder read_run_folder(const std::string &dir) {
  namespace fs = std::filesystem;
  const results_folder f{fs::path(dir)};
  if (!fs::exists(f.profile()))
    throw error(dir + " has no " + results_folder::profile_file +
                ": not a finished run (gpuprobe characterize or run makes one)");
  run_folder r;
  r.dir = dir;
  r.prof = read_profile(f.profile().string());
  if (fs::exists(f.tuning()))
    r.tuning = read_tuning(f.tuning().string());
  if (fs::exists(f.validation()))
    r.valid = read_validation(f.validation().string());
  return r;
}

} // namespace gpuprobe::model
