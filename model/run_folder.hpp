#pragma once
// A results folder read once into its typed values: profile.json, and tuning.json and
// validation.json where tune and validate wrote them. `gpuprobe compare` and `gpuprobe fleet` take
// the strict run_folder (a file that does not read ends them in one line); the report takes the
// tolerant folder_files (it draws what reads and lists the rest). Host-only.
#include "model/profile.hpp"
#include "model/tuning.hpp"
#include "model/validation.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

namespace gpuprobe::model {

// One file read tolerantly: its path; its value where it is there and reads; where it is there and
// does not read, why (`problem`, the reader's one line). A link that leads nowhere is there.
template <class T> struct folder_file {
  std::string path;
  std::optional<T> value;
  std::string problem;
};
template <class Reader>
auto read_folder_file(const std::string &path, Reader read) -> folder_file<decltype(read(path))> {
  folder_file<decltype(read(path))> f{path, std::nullopt, ""};
  std::error_code gone;
  if (!std::filesystem::exists(path, gone) && !std::filesystem::is_symlink(path, gone))
    return f;
  try {
    f.value = read(path);
  } catch (const std::exception &e) {
    f.problem = e.what();
  }
  return f;
}

// A results folder's profile, tuning and validation, each read once where it is there.
struct folder_files {
  folder_file<profile> prof;
  folder_file<tuning_file> tuning;
  folder_file<validation> valid;
};
folder_files read_folder_files(const std::string &dir);

struct run_folder {
  std::string dir;
  profile prof;
  std::optional<tuning_file> tuning;
  std::optional<validation> valid;
};

// read_folder_files, strict: throws gpuprobe::error in one line where DIR has no profile.json (a
// folder characterize has not finished) or a file of it does not read.
run_folder read_run_folder(const std::string &dir);

} // namespace gpuprobe::model
