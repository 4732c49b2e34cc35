#pragma once
// `gpuprobe clock`: the SM clock while every SM is busy, and whether it throttled (fell during the
// sample). One block per SM keeps it busy with FMAs; the block's first thread reads clock64
// against %globaltimer at even intervals (kernel.hpp). The clock of a window is its cycles over
// its nanoseconds; a window's line is the median, lowest and highest over the SMs. Host code (the
// windows, the verdict, JSON) in result.cpp; run_clock needs a GPU (driver.cpp).
#include "common/device_info.hpp"
#include "common/envelope.hpp"
#include "probes/clock/kernel.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct clock_options {
  double seconds = 1.0; // how long every SM is kept busy
  int samples = 51;     // clock readings per SM (samples - 1 windows)
  int threads = 1024;   // per block, one block per SM
  double drop = 0.05;   // throttled: a window this much under the sample's highest, twice in a row
  std::uint64_t seed = 1; // recorded only (nothing here is random)
};

struct clock_window {
  double t_ms = 0; // the window's middle, from the first reading
  double median_mhz = 0, lowest_mhz = 0, highest_mhz = 0; // over the SMs
};

struct clock_verdict {
  bool throttled = false;
  double highest_mhz = 0, lowest_mhz = 0, last_mhz = 0; // of the windows' medians
  std::string reason;                                   // one sentence
};

struct clock_result : result_envelope { // device, meta
  clock_options options;
  int blocks = 0, sms_seen = 0; // blocks launched; distinct SMs they ran on
  double stated_peak_mhz = 0;   // cudaDevAttrClockRate
  std::vector<clock_window> windows;
  clock_verdict verdict;
  double wall_seconds = 0;
};

// The windows of the samples (a reading pair with no time between is left out).
std::vector<clock_window> clock_windows(const clock_samples &s);
// Throttled when two windows in a row run more than `drop` under the highest window (medians).
clock_verdict judge_clock(const std::vector<clock_window> &w, double drop);

clock_result run_clock(const clock_options &o, const device_info &dev);

nlohmann::json to_json(const clock_result &r);
clock_result clock_result_from_json(const nlohmann::json &doc); // throws gpuprobe::error

} // namespace gpuprobe::probes
