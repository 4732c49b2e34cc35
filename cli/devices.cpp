#include "cli/devices.hpp"

#include "cli/common.hpp"
#include "common/error.hpp"
#include "common/jobs.hpp"
#include "common/process.hpp"
#include "common/results_folder.hpp"
#include "common/stopwatch.hpp"
#include "pipeline/stage_plan.hpp" // default_results_dir

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iterator>

namespace gpuprobe::cli {

namespace fs = std::filesystem;

std::string unit_folder(const std::string &parent, const device_identity &d) {
  const fs::path unit = fs::path(pipeline::default_results_dir(d.name, d.uuid)).filename();
  return (fs::path(parent) / unit).string();
}

device_plan plan_for(const unit_command &c) {
  return [c](const device_identity &, const std::string &unit, std::size_t position) {
    device_step st;
    st.args = {c.sub, "--device", "0"}; // the process sees its GPU alone (run_per_device)
    if (!c.input_flag.empty()) {
      const std::string in = (fs::path(unit) / c.input).string();
      if (!fs::exists(in))
        return device_step{{}, "no " + in + ": " + c.missing_hint};
      st.args.insert(st.args.end(), {c.input_flag, in});
    }
    st.args.insert(st.args.end(),
                   {"--out", c.output.empty() ? unit : (fs::path(unit) / c.output).string()});
    st.args.insert(st.args.end(), c.extra.begin(), c.extra.end());
    if (position % 2 == 1)
      st.args.insert(st.args.end(), c.every_second.begin(), c.every_second.end());
    return st;
  };
}

namespace {

// One GPU's job: its process sees that GPU alone (as device 0), so no context of it lands on
// another GPU. (The driver's cap on mapped range is the node's, not a GPU's: the processes share
// it through the node's mapped-range budget, common/node_budget.hpp.)
job device_job(const std::string &what, const device_identity &d, const std::string &unit,
               const device_step &step) {
  std::vector<std::string> argv = {self_path()};
  argv.insert(argv.end(), step.args.begin(), step.args.end());
  char label[64];
  std::snprintf(label, sizeof label, "[gpu%d %s]", d.ordinal,
                d.uuid.substr(d.uuid.rfind("GPU-", 0) == 0 ? 4 : 0, 8).c_str());
  return {label,
          argv,
          {"CUDA_VISIBLE_DEVICES=" + d.uuid},
          (fs::path(unit) / results_folder::devices_log_file(what)).string()};
}

// One GPU's line of the summary: not run (why), ok, or failed with its last line and its log.
std::string device_status(const std::string &refused, const job_result *r, const job *j) {
  if (!refused.empty())
    return "not run: " + refused;
  char b[96];
  if (r->exit_code == 0) {
    std::snprintf(b, sizeof b, "ok in %.0f s", r->seconds);
    return b;
  }
  std::snprintf(b, sizeof b, "FAILED (exit %d after %.0f s): ", r->exit_code, r->seconds);
  return b + last_line(r->tail) + " (log: " + j->log + ")";
}

} // namespace

void run_per_device(const std::string &what, const std::string &devices, const std::string &parent,
                    const device_plan &plan) {
  if (std::none_of(std::begin(results_folder::devices_commands),
                   std::end(results_folder::devices_commands),
                   [&](const char *c) { return what == c; }))
    throw error("internal: '" + what +
                " --devices' keeps a log that results_folder::devices_commands does not name");
  const stopwatch t0;
  const auto all = list_devices();
  const auto ids = parse_device_list(devices, int(all.size()));
  std::vector<job> jobs;
  std::vector<std::string> units, refused(ids.size());
  std::vector<std::size_t> job_of(ids.size(), SIZE_MAX);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const auto &d = all[std::size_t(ids[k])];
    units.push_back(unit_folder(parent, d));
    const auto step = plan(d, units.back(), k);
    if (!step.cannot_run.empty()) {
      refused[k] = step.cannot_run;
      continue;
    }
    fs::create_directories(units.back());
    job_of[k] = jobs.size();
    jobs.push_back(device_job(what, d, units.back(), step));
  }
  std::printf("gpuprobe %s --devices %s: %zu GPU(s) at once -> %s/\n", what.c_str(),
              devices.c_str(), ids.size(), parent.c_str());
  std::fflush(stdout);
  const auto results = run_jobs(jobs, stdout);
  const double wall = t0.seconds();
  int failed = 0;
  std::printf("gpuprobe %s --devices %s: %.0f s\n", what.c_str(), devices.c_str(), wall);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const auto &d = all[std::size_t(ids[k])];
    const bool ran = refused[k].empty();
    const std::string status = device_status(refused[k], ran ? &results[job_of[k]] : nullptr,
                                             ran ? &jobs[job_of[k]] : nullptr);
    failed += !ran || results[job_of[k]].exit_code != 0;
    std::printf("  gpu%d %-24s %s  %s: %s\n", d.ordinal, d.name.c_str(), d.uuid.c_str(),
                units[k].c_str(), status.c_str());
  }
  if (failed)
    throw error(what + " --devices: " + std::to_string(failed) + " of " +
                std::to_string(ids.size()) +
                " GPU(s) failed (above); the others' results are kept, and the same command "
                "resumes the failed ones");
}

} // namespace gpuprobe::cli
