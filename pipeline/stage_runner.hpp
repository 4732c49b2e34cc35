#pragma once
// The resume rule of `gpuprobe characterize` (README "Set-up and a first run"), apart from
// the command: a stage's file is kept when it was made the same way on this GPU by this version
// (check_stage) and no stage it reads from ran now; else the stage runs (again), and
// the record says why. With `reanalyze`, measurements are kept as they are (or reported missing)
// and analyses run again without a GPU. The runner takes the way to execute a stage, so host
// tests drive it without a GPU or a subprocess. Host-only.
#include "model/profile.hpp"
#include "pipeline/stage_plan.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <functional>
#include <set>
#include <string>

namespace gpuprobe::pipeline {

// The one resume rule, for characterize's stages and run's: `s`'s file is kept when it was made
// the same way on this GPU by this version (check_stage) and no stage it reads from ran
// now (`upstream_ran`); else the reason it runs (again).
stage_check resume_rule(const std::string &dir, const stage &s, const std::string &uuid,
                        bool upstream_ran);

struct stage_runner {
  std::string dir;  // the results folder
  std::string uuid; // the GPU this run is on (or was measured on, with reanalyze)
  bool reanalyze = false;
  std::vector<model::stage_record> previous_stages; // the former profile's "stages"
  std::function<void(const stage &)> execute;       // runs one stage, throws on failure
  std::function<double()> seconds_so_far = [] { return 0.0; };
  std::FILE *out = stdout; // the progress lines

  // What happened, for profile.json's "stages": kept, ran (with seconds and why), reanalyzed.
  nlohmann::json stages_run = nlohmann::json::array();
  std::set<std::string> ran;  // the stages that ran now
  bool sharing_known = false; // false: "[k/n+]", the count of stages is not final yet

  // Stage `s`, the k-th of n: kept, run, or (reanalyze) reported missing. True when it ran.
  bool run(const stage &s, std::size_t k, std::size_t n);
};

} // namespace gpuprobe::pipeline
