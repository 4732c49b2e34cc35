#include "common/device_info.hpp"

namespace gpuprobe {

std::string cuda_version_string(int v) {
  if (v <= 0) return "unknown";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

nlohmann::json to_json(const device_info& d) {
  return nlohmann::json{{"ordinal", d.ordinal},
                        {"name", d.name},
                        {"uuid", d.uuid},
                        {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                        {"sm_count", d.sm_count},
                        {"max_threads_per_sm", d.max_threads_per_sm},
                        {"sm_clock_mhz_peak", d.sm_clock_khz_peak / 1000.0},
                        {"sm_clock_mhz_seen", d.sm_clock_mhz_seen},
                        {"memory_clock_mhz_peak", d.mem_clock_khz_peak / 1000.0},
                        {"l2_bytes", d.l2_bytes},
                        {"memory_bytes", d.memory_bytes},
                        {"memory_free_bytes_at_start", d.memory_free_bytes_at_start},
                        {"driver_version", cuda_version_string(d.driver_version)},
                        {"runtime_version", cuda_version_string(d.runtime_version)}};
}

device_info device_info_from_json(const nlohmann::json& j) {
  device_info d;
  d.ordinal = j.value("ordinal", 0);
  d.name = j.value("name", std::string());
  d.uuid = j.value("uuid", std::string());
  d.sm_count = j.value("sm_count", 0);
  d.max_threads_per_sm = j.value("max_threads_per_sm", 0);
  d.sm_clock_mhz_seen = j.value("sm_clock_mhz_seen", 0.0);
  d.l2_bytes = j.value("l2_bytes", 0LL);
  d.memory_bytes = j.value("memory_bytes", 0LL);
  return d;
}

}  // namespace gpuprobe
