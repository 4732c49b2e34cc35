#pragma once
// A results folder (README "From a new GPU to its report"): the one place that names its files.
// characterize writes raw/ and profile.json, tune tuning.json, validate validation.json, report
// report/. Host-only, header-only.
#include <filesystem>
#include <string>

namespace gpuprobe {

struct results_folder {
  static constexpr const char *raw_dir = "raw";
  static constexpr const char *profile_file = "profile.json";
  static constexpr const char *tuning_file = "tuning.json";
  static constexpr const char *validation_file = "validation.json";
  static constexpr const char *report_dir = "report";

  std::filesystem::path dir;

  std::filesystem::path raw() const { return dir / raw_dir; }
  std::filesystem::path raw(const std::string &file) const { return raw() / file; }
  std::filesystem::path profile() const { return dir / profile_file; }
  std::filesystem::path tuning() const { return dir / tuning_file; }
  std::filesystem::path validation() const { return dir / validation_file; }
  std::filesystem::path report() const { return dir / report_dir; }
};

} // namespace gpuprobe
