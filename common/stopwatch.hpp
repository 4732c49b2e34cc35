#pragma once
// Wall time since a start, in seconds, on std::chrono::steady_clock: what a stage records as its
// wall_seconds and prints in its progress lines; and the local time of day as logs stamp it.
#include <chrono>
#include <ctime>
#include <string>

namespace gpuprobe {

class stopwatch {
public:
  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }
  // Seconds since the start (or the last lap), and the next lap starts now.
  double lap() {
    const auto now = clock::now();
    const double s = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return s;
  }

private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_ = clock::now();
};

// Now, local time, as the logs' headers give it: "2026-12-04T17:24:44".
inline std::string local_time_text() {
  char when[32] = {};
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", std::localtime(&now));
  return when;
}

// A log's header line for one invocation of `command`: "==== <command> at <local time>\n" (run's
// run.log and each `--devices` job's log).
inline std::string log_header(const std::string &command) {
  return "==== " + command + " at " + local_time_text() + "\n";
}

} // namespace gpuprobe
