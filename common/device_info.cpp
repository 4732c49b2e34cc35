#include "common/device_info.hpp"
#include "common/error.hpp"

#include <cctype>

namespace gpuprobe {

std::string cuda_version_string(int v) {
  if (v <= 0)
    return "unknown";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

nlohmann::json to_json(const device_info &d) {
  return nlohmann::json{
      {"ordinal", d.ordinal},
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
      {"driver_release", d.driver_release},
      {"runtime_version", cuda_version_string(d.runtime_version)}};
}

std::string parse_driver_release(const std::string &text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..." or "... Open Kernel
  // Module for x86_64  580.159.04 ...": the first token of digits with a dot after "Kernel Module".
  const auto k = text.find("Kernel Module");
  if (k == std::string::npos)
    return "";
  const std::string line = text.substr(k, text.find('\n', k) - k);
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ')
      ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ')
      ++j;
    const std::string tok = line.substr(i, j - i);
    if (!tok.empty() && std::isdigit(static_cast<unsigned char>(tok[0])) &&
        tok.find('.') != std::string::npos &&
        tok.find_first_not_of("0123456789.") == std::string::npos)
      return tok;
    i = j;
  }
  return "";
}

std::string describe_driver(const nlohmann::json &d) {
  const auto text = [&](const char *k) {
    if (!d.contains(k))
      return std::string();
    return d[k].is_string() ? d[k].get<std::string>() : d[k].dump();
  };
  const std::string api = text("driver_version"), release = text("driver_release");
  if (!release.empty())
    return "driver " + release + (api.empty() ? std::string() : " (CUDA " + api + ")");
  return api.empty() ? "driver not recorded" : "CUDA driver API " + api;
}

device_info device_info_from_json(const nlohmann::json &j) try {
  device_info d;
  d.ordinal = j.value("ordinal", 0);
  d.name = j.value("name", std::string());
  d.uuid = j.value("uuid", std::string());
  d.sm_count = j.value("sm_count", 0);
  d.max_threads_per_sm = j.value("max_threads_per_sm", 0);
  d.sm_clock_mhz_seen = j.value("sm_clock_mhz_seen", 0.0);
  d.l2_bytes = j.value("l2_bytes", 0LL);
  d.memory_bytes = j.value("memory_bytes", 0LL);
  d.driver_release = j.value("driver_release", std::string());
  return d;
} catch (const nlohmann::json::exception &e) { // a field of another kind: one gpuprobe line
  throw error(std::string("the device block: ") + e.what());
}

} // namespace gpuprobe
