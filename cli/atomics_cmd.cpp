// gpuprobe atomics: latency of one atomic per thread vs concurrent threads, per variant.
#include "analysis/atomics_fit.hpp"
#include "cli/common.hpp"
#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "probes/atomics.cuh"
#include "probes/tlb_chase.cuh"

#include <chrono>
#include <cstdio>
#include <memory>

namespace gpuprobe::cli {

namespace {

struct atomics_options {
  common_options common;
  std::vector<std::string> variants;
  std::uint64_t max_threads = 0;      // 0: full occupancy
  std::uint64_t cas_max_threads = 1u << 14;
  std::uint64_t samples = 4096;
};

// 1, 2, 4, ... below `full`, then `full` itself.
std::vector<std::uint64_t> thread_counts(std::uint64_t full) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t n = 1; n < full; n *= 2) v.push_back(n);
  v.push_back(full);
  return v;
}

void run_atomics(const atomics_options& o) {
  using clock = std::chrono::steady_clock;
  const auto t_start = clock::now();
  check_output_path(o.common.out);
  std::vector<probes::atomic_variant> variants;
  for (const auto& s : o.variants) variants.push_back(probes::parse_atomic_variant(s));
  if (variants.empty()) variants = probes::all_atomic_variants();
  device_info dev = query_device(o.common.device);
  const std::uint64_t full = std::uint64_t(dev.sm_count) * std::uint64_t(dev.max_threads_per_sm);
  const std::uint64_t top = o.max_threads ? o.max_threads : full;
  if (top > full)
    throw error("--max-threads " + std::to_string(top) + " is beyond full occupancy (" + std::to_string(full) +
                " = " + std::to_string(dev.sm_count) + " SMs x " + std::to_string(dev.max_threads_per_sm) + ")");
  std::fprintf(stderr, "[atomics] %s, %d SMs x %d threads = %llu at full occupancy\n", dev.name.c_str(), dev.sm_count,
               dev.max_threads_per_sm, (unsigned long long)full);
  const double mhz_before = probes::measure_sm_clock_mhz();
  probes::atomics_probe probe(top);

  json out = json::array();
  std::vector<std::string> table;
  for (auto v : variants) {
    const bool cas = v == probes::atomic_variant::cas_u32 || v == probes::atomic_variant::cas_u64;
    const std::uint64_t cap = cas ? std::min(top, o.cas_max_threads) : top;
    json pts = json::array();
    analysis::atomics_curve curve;
    curve.queues = v != probes::atomic_variant::distinct_u32 && v != probes::atomic_variant::distinct_u64;
    for (auto n : thread_counts(cap)) {
      const auto p = probe.measure(v, n, o.samples);
      pts.push_back({{"threads", p.threads},
                     {"samples", p.samples},
                     {"launches", p.launches},
                     {"mean_cycles", p.mean_cycles},
                     {"median_cycles", p.median_cycles},
                     {"p99_cycles", p.p99_cycles},
                     {"warp_max_mean_cycles", p.warp_max_mean_cycles},
                     {"ops_per_s", p.ops_per_s},
                     {"counter_checked", p.counter_delta}});
      curve.threads.push_back(double(n));
      curve.mean_cycles.push_back(p.mean_cycles);
      curve.warp_max_mean_cycles.push_back(p.warp_max_mean_cycles);
      curve.ops_per_s_at_max = p.ops_per_s;
      std::fprintf(stderr, "[atomics] %-15s %7llu threads: mean %8.0f  median %8.0f  p99 %8.0f cycles, %.3g ops/s\n",
                   probes::to_string(v).c_str(), (unsigned long long)n, p.mean_cycles, p.median_cycles, p.p99_cycles,
                   p.ops_per_s);
    }
    const auto f = analysis::fit_atomics(curve, mhz_before);
    json jv = {{"variant", probes::to_string(v)},
               {"bits", probes::bits_of(v)},
               {"max_threads", cap},
               {"capped", cap < top},
               {"points", pts}};
    jv.update(analysis::to_json(f));
    out.push_back(jv);
    char line[256];
    int len = std::snprintf(line, sizeof line, "  %-15s slope %10.4f cycles/thread (r2 %.3f, %s %.0f..%.0f threads)  queue model ",
                            probes::to_string(v).c_str(), f.fit.slope, f.fit.r2, f.contended ? "contended" : "all points",
                            f.from_threads, f.to_threads);
    if (f.queue_model)
      std::snprintf(line + len, sizeof line - std::size_t(len), "%.4f (step %.4f)", f.model_slope, f.step_cycles);
    else
      std::snprintf(line + len, sizeof line - std::size_t(len), "n/a");
    table.push_back(line);
  }
  const double mhz_after = probes::measure_sm_clock_mhz();
  dev.sm_clock_mhz_seen = 0.5 * (mhz_before + mhz_after);
  const double wall = std::chrono::duration<double>(clock::now() - t_start).count();
  json doc = {{"schema", "gpuprobe.result/1"},
              {"probe", "atomics"},
              {"device", to_json(dev)},
              {"meta", run_metadata(this_invocation().argc, this_invocation().argv, o.common.seed)},
              {"atomics",
               {{"method", "one atomic per thread per launch (single shot), clock64 around it; launches repeated to >= samples"},
                {"full_occupancy_threads", full},
                {"cas_max_threads", o.cas_max_threads},
                {"sm_clock_mhz_before", mhz_before},
                {"sm_clock_mhz_after", mhz_after},
                {"variants", out},
                {"wall_seconds", wall}}}};
  write_json_atomic(o.common.out, doc);
  std::printf("gpuprobe atomics: %s, up to %llu threads, %.1f s, SM clock %.0f MHz\n", dev.name.c_str(),
              (unsigned long long)top, wall, dev.sm_clock_mhz_seen);
  for (const auto& l : table) std::printf("%s\n", l.c_str());
  std::printf("  wrote %s\n", o.common.out.c_str());
}

}  // namespace

void setup_atomics(CLI::App& parent) {
  auto opt = std::make_shared<atomics_options>();
  auto* app = parent.add_subcommand("atomics", "atomic latency vs concurrent threads (contention)");
  add_device_option(*app, opt->common);
  add_out_option(*app, opt->common, "result JSON file (gpuprobe.result/1, probe atomics)");
  add_seed_option(*app, opt->common);
  app->add_option("--variants", opt->variants, "subset of same_u32 same_u64 distinct_u32 distinct_u64 cas_u32 cas_u64 aggregated_u32 aggregated_u64");
  app->add_option("--max-threads", opt->max_threads, "largest thread count (0: full occupancy)")->capture_default_str();
  app->add_option("--cas-max-threads", opt->cas_max_threads, "cap for the CAS loops (their retries grow as N^2)")->capture_default_str();
  app->add_option("--samples", opt->samples, "latencies per point (launches repeat until reached)")->capture_default_str()->check(CLI::Range(1, 1 << 24));
  app->callback([opt] { run_atomics(*opt); });
}

}  // namespace gpuprobe::cli
