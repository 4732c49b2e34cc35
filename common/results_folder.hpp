#pragma once
// A results folder (README "Set-up and a first run"): the one place that names its files.
// characterize writes raw/ and profile.json, tune tuning.json, validate validation.json, report
// report/. Host-only, header-only.
#include <filesystem>
#include <string>
#include <vector>

namespace gpuprobe {

struct results_folder {
  static constexpr const char *raw_dir = "raw";
  static constexpr const char *profile_file = "profile.json";
  static constexpr const char *tuning_file = "tuning.json";
  static constexpr const char *validation_file = "validation.json";
  static constexpr const char *report_dir = "report";
  static constexpr const char *run_log_file = "run.log"; // run's own: every stage's output whole

  // What `COMMAND --devices` keeps of a GPU's console output in its unit folder, appended to:
  // COMMAND.log (characterize.log: fleet reads it), or COMMAND-console.log where the command
  // keeps COMMAND.log itself (run's run.log), so that two writers never share one file.
  static std::string devices_log_file(const std::string &command) {
    return command + (command + ".log" == run_log_file ? "-console.log" : ".log");
  }
  // The commands that run once per GPU under --devices (run_per_device refuses another), so
  // that every log they keep is named here.
  static constexpr const char *devices_commands[] = {"characterize", "tune", "validate", "run"};
  // Every name the stages write at a results folder's top (not the report): what report --out
  // inside the folder must not take.
  static std::vector<std::string> stage_names() {
    std::vector<std::string> n = {raw_dir, profile_file, tuning_file, validation_file,
                                  run_log_file};
    for (const char *c : devices_commands)
      n.push_back(devices_log_file(c));
    return n;
  }

  // The files characterize's stages write under raw/, named once: each probe's plan.cpp writes
  // them, characterize and the report read them through these names.
  struct raw_file {
    static constexpr const char *tlb = "tlb.json";                 // the aliased sweep
    static constexpr const char *tlb_real = "tlb_real.json";       // the real-memory sweep
    static constexpr const char *tlb_profile = "tlb_profile.json"; // the hierarchy of tlb.json
    static constexpr const char *tlb_real_profile = "tlb_real_profile.json";
    static constexpr const char *tlb_sampling = "tlb_sampling.json"; // stage tlb_sampling
    static constexpr const char *tlb_conflict = "tlb_conflict.json"; // stage tlb_conflict
    static constexpr const char *tlb_coverage = "tlb_coverage.json"; // stage tlb_coverage
    static constexpr const char *tlb_per_sm = "tlb_per_sm.json";     // stage tlb_per_sm
    static constexpr const char *atomics = "atomics.json";
    static constexpr const char *bench_getpage = "bench_getpage.json";
    static constexpr const char *sharing_prefix = "sharing_";
    // A stage's own file: "<stage>.json" (tlb_sampling, tlb_conflict, sharing_L2, ...).
    static std::string of_stage(const std::string &stage) { return stage + ".json"; }
    // The stage that writes `file` (of_stage's inverse): "tlb_profile" for tlb_profile.json.
    static std::string stage_of(const std::string &file) {
      return file.size() > 5 ? file.substr(0, file.size() - 5) : file;
    }
    static std::string sharing(const std::string &label) {
      return of_stage(sharing_prefix + label);
    }
  };
  // "raw/<file>": a stage's output as its arguments name it, relative to the folder.
  static std::string raw_rel(const std::string &file) { return std::string(raw_dir) + "/" + file; }

  std::filesystem::path dir;

  std::filesystem::path raw() const { return dir / raw_dir; }
  std::filesystem::path raw(const std::string &file) const { return raw() / file; }
  std::filesystem::path profile() const { return dir / profile_file; }
  std::filesystem::path tuning() const { return dir / tuning_file; }
  std::filesystem::path validation() const { return dir / validation_file; }
  std::filesystem::path report() const { return dir / report_dir; }
  std::filesystem::path run_log() const { return dir / run_log_file; }
};

} // namespace gpuprobe
