#pragma once
// characterize's measuring stages on an idle GPU: checked before each, watched during it (a
// process that starts and ends within the stage is seen too) and checked after it; and the
// disturbances an --allow-busy run recorded in its results, read back on every resume.
#include "common/results_folder.hpp"
#include "pipeline/gpu_conditions.hpp"
#include "pipeline/stage_plan.hpp"

#include <functional>
#include <string>
#include <vector>

namespace gpuprobe::pipeline {

// Waits up to `seconds` for the GPU to have no other compute process; the activity at the end.
gpu_activity wait_for_idle(const std::string &uuid, double seconds, const std::string &stage);

// The measuring stages (not the analyses) run on an idle GPU: checked before each, watched during
// it and checked after it; a stage during which another process appeared is measured again once,
// and refused (its output removed) when it happens again. With allow_busy, what was seen is
// collected instead (`seen`) and written into the stage's own output ("disturbed"), so a resume
// that keeps the stage keeps the mark.
struct busy_guard {
  std::string uuid;
  bool allow = false;
  double wait = 60;
  std::vector<std::string> seen; // "stage: N other processes (...)"
  bool idle_just_seen = false;   // the check after the last stage found the GPU idle

  // Runs `execute` (stage s) as the guard allows; an analysis stage runs unwatched.
  void run(const stage &s, const std::function<void()> &execute);
  // The one-line refusal of a busy GPU (`when`: "before stage tlb", ...).
  static std::string refusal(const std::string &when, const gpu_activity &a);
  std::string dir; // the results folder

private:
  void remove_output(const stage &s) const;
  void mark_output_disturbed(const stage &s, const std::string &why) const;
};

// The disturbances recorded in raw/ results (mark_output_disturbed): those of stages this run
// kept from an --allow-busy run are this profile's too, however many resumes ago they were made.
std::vector<std::string> kept_disturbances(const results_folder &folder);

} // namespace gpuprobe::pipeline
