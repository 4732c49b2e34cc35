#pragma once
// The `device` block every gpuprobe JSON file carries.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuprobe {

struct device_info {
  int ordinal = 0;
  std::string name;
  std::string uuid;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_sm = 0; // resident threads per SM (full occupancy = sm_count x this)
  int sm_clock_khz_peak = 0;  // cudaDevAttrClockRate
  int mem_clock_khz_peak = 0; // cudaDevAttrMemoryClockRate
  double sm_clock_mhz_seen =
      0; // measured during the run (clock64 vs %globaltimer), 0 = not measured
  long long l2_bytes = 0;
  long long memory_bytes = 0;
  long long memory_free_bytes_at_start = 0;
  int driver_version = 0;     // e.g. 13000: the CUDA API version the driver supports
  std::string driver_release; // e.g. "580.159.04" (the kernel module's version), "" if unknown
  int runtime_version = 0;    // e.g. 13000
  int mig_mode = -1;          // not queried here: -1
};

nlohmann::json to_json(const device_info &d);
device_info device_info_from_json(const nlohmann::json &j);
std::string cuda_version_string(int v); // 13000 -> "13.0"

// The NVIDIA kernel module's version from /proc/driver/nvidia/version's text ("" if none).
std::string parse_driver_release(const std::string &proc_version_text);
// "driver 580.159.04 (CUDA 13.0)" from a device block, or "CUDA driver API 13.0" where the
// release was not recorded: as a person reads it.
std::string describe_driver(const nlohmann::json &device);

// The GPUs of this machine by name and UUID, without creating a context on any (a process that
// starts one gpuprobe per GPU must not hold their memory). Empty when there is none.
struct device_identity {
  int ordinal = 0;
  std::string name, uuid;
};
std::vector<device_identity> list_devices(); // device_info.cu

// Implemented in device_info.cu (needs the CUDA runtime). Throws gpuprobe::error when there is
// no usable device, the ordinal is out of range, or the binary has no code for the GPU.
device_info query_device(int ordinal);

// For a process that only starts others on the GPU (characterize's stages, run's commands): drops
// this process's own context on the current device (its memory and the entry in nvidia-smi's
// process list); the GPU and other processes are untouched. A later CUDA call makes a new one.
void release_own_context();

} // namespace gpuprobe
