#include "model/run_folder.hpp"

#include "common/error.hpp"
#include "common/results_folder.hpp"

namespace gpuprobe::model {

folder_files read_folder_files(const std::string &dir) {
  const results_folder f{std::filesystem::path(dir)};
  return {read_folder_file(f.profile().string(), read_profile),
          read_folder_file(f.tuning().string(), read_tuning),
          read_folder_file(f.validation().string(), read_validation)};
}

run_folder read_run_folder(const std::string &dir) {
  folder_files f = read_folder_files(dir);
  if (!f.prof.value && f.prof.problem.empty())
    throw error(dir + " has no " + results_folder::profile_file +
                ": not a finished run (gpuprobe characterize or run makes one)");
  for (const std::string *why : {&f.prof.problem, &f.tuning.problem, &f.valid.problem})
    if (!why->empty())
      throw error(*why);
  return {dir, std::move(*f.prof.value), std::move(f.tuning.value), std::move(f.valid.value)};
}

} // namespace gpuprobe::model
