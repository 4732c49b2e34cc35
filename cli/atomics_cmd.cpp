// gpuprobe atomics: flags -> probes::atomics_options; the probe (probes/atomics_driver.hpp) runs,
// each variant's curve is fitted (analysis/atomics_fit.hpp), the result written and summarised.
#include "analysis/atomics_fit.hpp"
#include "cli/common.hpp"
#include "common/json_io.hpp"
#include "probes/atomics_driver.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::cli {

namespace {

struct atomics_flags {
  common_options common;
  std::vector<std::string> variants;
  probes::atomics_options o;
};

void run(atomics_flags &f) {
  check_output_path(f.common.out);
  for (const auto &s : f.variants)
    f.o.variants.push_back(probes::parse_atomic_variant(s));
  f.o.seed = f.common.seed;
  std::vector<std::string> table;
  const auto r = probes::run_atomics(
      f.o, query_device(f.common.device), [&](probes::atomics_variant_result &v, double mhz) {
        analysis::atomics_curve curve;
        curve.queues = v.variant != probes::atomic_variant::distinct_u32 &&
                       v.variant != probes::atomic_variant::distinct_u64;
        for (const auto &p : v.points) {
          curve.threads.push_back(double(p.threads));
          curve.mean_cycles.push_back(p.mean_cycles);
          curve.warp_max_mean_cycles.push_back(p.warp_max_mean_cycles);
          curve.ops_per_s_at_max = p.ops_per_s;
        }
        const auto fit = analysis::fit_atomics(curve, mhz);
        v.analysis = analysis::to_json(fit);
        char line[256];
        int len =
            fit.model == "line"
                ? std::snprintf(line, sizeof line,
                                "  %-15s slope %10.4f cycles/thread (r2 %.3f, %s %.0f..%.0f "
                                "threads)  queue model ",
                                probes::to_string(v.variant).c_str(), fit.fit.slope, fit.fit.r2,
                                fit.contended ? "contended" : "all points", fit.from_threads,
                                fit.to_threads)
                : std::snprintf(line, sizeof line,
                                "  %-15s %s %.4g x N^%.3f cycles (r2 of logs %.3f, %.0f..%.0f "
                                "threads)  queue model ",
                                probes::to_string(v.variant).c_str(),
                                fit.model == "power" ? "power" : "no fit:", fit.power_coefficient,
                                fit.power_exponent, fit.power_r2, fit.from_threads, fit.to_threads);
        if (fit.queue_model)
          std::snprintf(line + len, sizeof line - std::size_t(len), "%.4f (step %.4f)",
                        fit.model_slope, fit.step_cycles);
        else
          std::snprintf(line + len, sizeof line - std::size_t(len), "n/a");
        table.push_back(line);
      });
  write_json_atomic(f.common.out, to_json(r));
  std::printf("gpuprobe atomics: %s, up to %llu threads, %.1f s, SM clock %.0f MHz\n",
              r.device.value("name", "?").c_str(),
              (unsigned long long)(f.o.max_threads ? f.o.max_threads : r.full_occupancy_threads),
              r.wall_seconds, r.device.value("sm_clock_mhz_seen", 0.0));
  for (const auto &l : table)
    std::printf("%s\n", l.c_str());
  std::printf("  wrote %s\n", f.common.out.c_str());
}

} // namespace

void setup_atomics(CLI::App &parent) {
  auto f = std::make_shared<atomics_flags>();
  auto *app = parent.add_subcommand("atomics", "atomic latency vs concurrent threads (contention)");
  app->footer("Example: gpuprobe atomics --variants same_u32 distinct_u32 --out atomics.json");
  add_device_option(*app, f->common);
  add_out_option(*app, f->common, "result JSON file (gpuprobe.result/1, probe atomics)");
  add_seed_option(*app, f->common);
  app->add_option("--variants", f->variants,
                  "subset of same_u32 same_u64 distinct_u32 distinct_u64 cas_u32 cas_u64 "
                  "aggregated_u32 aggregated_u64");
  app->add_option("--max-threads", f->o.max_threads, "largest thread count (0: full occupancy)")
      ->capture_default_str();
  app->add_option("--cas-max-threads", f->o.cas_max_threads,
                  "cap for the CAS loops (their retries grow as N^2)")
      ->capture_default_str();
  app->add_option("--samples", f->o.samples, "latencies per point (launches repeat until reached)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  app->callback([f] { run(*f); });
}

} // namespace gpuprobe::cli
