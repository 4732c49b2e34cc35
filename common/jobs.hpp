#pragma once
// Several commands at once, each line of their output shown as it comes with the job's
// label in front and kept in the job's log; a job that fails does not stop the others. Used by
// `--devices` (one gpuprobe process per GPU). POSIX (posix_spawn/poll, no shell); no GPU.
#include <cstdio>
#include <string>
#include <vector>

namespace gpuprobe {

struct job {
  std::string label;   // "[gpu0 06b5a2b0]"
  std::vector<std::string> argv; // run without a shell, stdout and stderr together
  std::vector<std::string> env;  // "NAME=value" set for it
  std::string log;     // the file that receives its output ("" = none)
};

struct job_result {
  int exit_code = -1; // 128 + signal when killed
  double seconds = 0;
  std::string tail; // its last lines (an error is read here)
};

// Runs every job concurrently; returns when all have ended, in the order given.
std::vector<job_result> run_jobs(const std::vector<job> &jobs, std::FILE *progress);

// "all" -> 0..count-1; "0,2" -> {0, 2}. Throws gpuprobe::error (one line) for an id out of range,
// a repeated id, an empty list or text that is no list of ids.
std::vector<int> parse_device_list(const std::string &text, int count);

} // namespace gpuprobe
