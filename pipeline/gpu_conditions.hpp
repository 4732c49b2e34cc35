#pragma once
// What else is happening on the GPU while characterize measures it: other compute processes
// (nvidia-smi, started without a shell), MIG mode, throttle reasons and the peak SM clock.
// A busy GPU changes the answer, so characterize checks before the run and around every
// measuring stage. Host-only: without nvidia-smi nothing is known, and that is said.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuprobe::pipeline {

struct gpu_process {
  long pid = 0;
  std::string name;
};

// Compute processes on the GPU `uuid` other than this process, its ancestors (a `gpuprobe run`
// parent holds no context) and its descendants (the stage it runs); empty when nvidia-smi is
// absent (`known` false).
struct gpu_activity {
  bool known = false; // nvidia-smi answered
  std::vector<gpu_process> others;
  std::string describe() const; // "2 other processes (PID 11 python3, PID 12 gpuprobe)"
};
gpu_activity query_gpu_activity(const std::string &uuid);

// Parses nvidia-smi's "pid, process_name" CSV lines (no header), dropping `mine` (this process
// and its ancestors). Host-tested.
std::vector<gpu_process> parse_compute_apps(const std::string &csv, const std::vector<long> &mine);
// This process and its ancestors, from /proc.
std::vector<long> own_process_chain();
// The processes this one started, and theirs (a stage measuring now), from /proc.
std::vector<long> own_descendants();

// The conditions block of profile.json before a run: nvidia_smi, mig_mode, other_processes
// (a count, as text, as before), clocks_throttle_reasons_active, sm_clock_mhz_max.
nlohmann::json conditions_before(const std::string &uuid, const gpu_activity &activity);

} // namespace gpuprobe::pipeline
