// gpuprobe atomics: flags -> probes::atomics_options; the probe (probes/atomics/driver.hpp) runs,
// each variant's curve is fitted (probes::fit_variant), the result written and summarised.
#include "common/device_info.hpp"
#include "common/json_io.hpp"
#include "probes/atomics/driver.hpp"
#include "probes/atomics/fit.hpp"
#include "probes/atomics/probe.hpp"
#include "probes/kit.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes::atomics {

namespace {

struct atomics_flags {
  kit::common_options common;
  std::vector<std::string> variants;
  probes::atomics_options o;
};

void run(atomics_flags &f) {
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

kit::command cli() {
  auto f = std::make_shared<atomics_flags>();
  kit::command c("atomics", "atomic latency vs concurrent threads (contention)",
                 "Example: gpuprobe atomics --variants same_u32 distinct_u32 --out atomics.json");
  c.measures_result(f->common);
  c.option("--variants", &f->variants,
           "subset of same_u32 same_u64 distinct_u32 distinct_u64 cas_u32 cas_u64 "
           "aggregated_u32 aggregated_u64");
  c.option("--max-threads", &f->o.max_threads, "largest thread count (0: full occupancy)").shown();
  c.option("--cas-max-threads", &f->o.cas_max_threads,
           "cap for the CAS loops (their retries grow as N^2)")
      .shown();
  c.option("--samples", &f->o.samples, "latencies per point (launches repeat until reached)")
      .shown()
      .in(1, 1 << 24);
  c.run = [f] { run(*f); };
  return c;
}

} // namespace gpuprobe::probes::atomics
