#pragma once
// Atomic latency vs concurrent threads: a line over the contended range, and the RW paper's
// queue model (Eqs. 1-2) beside it. The model's one parameter is the service time of one atomic
// on a contended address, taken from the measured throughput at the most threads; with it a
// thread at queue position k waits k services, so the mean latency grows by step/2 per thread.
#include "analysis/fit.hpp"
#include "model/atomics.hpp"
#include "probes/atomics/driver.hpp"

#include <nlohmann/json.hpp>
#include <vector>

namespace gpuprobe::probes {

struct atomics_curve {
  std::vector<double> threads, mean_cycles, warp_max_mean_cycles;
  double ops_per_s_at_max = 0; // throughput at the largest thread count
  bool queues = true;          // one address: threads queue (distinct addresses do not)
};

struct atomics_fit {
  // The model drawn and reported: "line" (slope per thread) where a line fits the contended range
  // (r2 >= 0.98); else "power", cycles = coefficient * N^exponent fitted in log-log, where that
  // fits (r2 of the logs >= 0.95: CAS retry loops grow faster than linearly); else "none".
  std::string model = "line";
  analysis::line_fit fit;
  double power_coefficient = 0, power_exponent = 0, power_r2 = 0;
  bool contended = false; // some point reached 1.5x the 1-thread latency
  double from_threads = 0, to_threads = 0;
  bool queue_model = false; // the queue model applies (one contended address)
  double step_cycles = 0;   // queue model: one contended atomic's service time
  double model_slope = 0;   // step / 2
  std::vector<double> model_mean_cycles, model_warp_max_cycles;
};

atomics_fit fit_atomics(const atomics_curve &c, double sm_clock_mhz);
// The fit as a result and profile.json hold it (model/atomics.hpp); to_json writes it as "fit",
// beside the queue model.
model::atomics_fit fit_model(const atomics_fit &f);
nlohmann::json to_json(const atomics_fit &f);

// One measured variant of the atomics probe fitted (its curve, the queue model where its threads
// queue on one address) into v.analysis; returns its line of the probe's summary table.
std::string fit_variant(probes::atomics_variant_result &v, double sm_clock_mhz);

} // namespace gpuprobe::probes
