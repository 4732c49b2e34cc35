// gpuprobe atomics: flags -> probes::atomics_options; the probe (probes/atomics/driver.hpp) runs,
// each variant's curve is fitted (probes::fit_variant), the result written and summarised.
#include "cli/common.hpp"
#include "common/device_info.hpp"
#include "common/json_io.hpp"
#include "probes/atomics/driver.hpp"
#include "probes/atomics/fit.hpp"
#include "probes/atomics/probe.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes::atomics {

using namespace cli; // the options every subcommand shares (cli/common.hpp)

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
        table.push_back(probes::fit_variant(v, mhz)); // the fit into the result, its line here
      });
  write_json_atomic(f.common.out, to_json(r));
  const device_info dev = device_info_from_json(r.device); // the block the result records
  std::printf("gpuprobe atomics: %s, up to %llu threads, %.1f s, SM clock %.0f MHz\n",
              dev.name.c_str(),
              (unsigned long long)(f.o.max_threads ? f.o.max_threads : r.full_occupancy_threads),
              r.wall_seconds, dev.sm_clock_mhz_seen);
  for (const auto &l : table)
    std::printf("%s\n", l.c_str());
  std::printf("  wrote %s\n", f.common.out.c_str());
}

} // namespace

void setup_cli(CLI::App &parent) {
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

} // namespace gpuprobe::probes::atomics
