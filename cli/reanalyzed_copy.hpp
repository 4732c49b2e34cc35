#pragma once
// compare --reanalyze's copies: a results folder's measurements copied into a scratch folder made
// for the command alone, its profile derived again there by this build, and the copy read back.
#include "common/non_copyable.hpp"
#include "common/process.hpp"
#include "model/run_folder.hpp"

#include <filesystem>
#include <string>

namespace gpuprobe::cli {

namespace fs = std::filesystem;

// A folder made for this command alone (mkdtemp: a fresh name, mode 0700) and removed with it,
// also on SIGINT, SIGTERM and SIGHUP (a cleanup_scope: the command stops at its next check).
// Its name carries this process's id, so one a SIGKILL left behind is removed by the next
// compare once that process is gone.
class scratch_folder : private non_copyable {
public:
  scratch_folder();
  ~scratch_folder();
  const fs::path &path() const { return path_; }

private:
  fs::path path_;
  cleanup_scope cleaning_; // a signal sets a flag; the command stops at check_interrupted
};

// `dir`'s raw measurements, profile, tuning and validation copied into `to` (plain files and
// folders only: links, FIFOs, the report and the lock are left behind), its profile derived again
// from raw/ by this build (`gpuprobe characterize --reanalyze`, a child), and the copy read back
// under `dir`'s name.
model::run_folder reanalyzed(const std::string &dir, const fs::path &to);

} // namespace gpuprobe::cli
