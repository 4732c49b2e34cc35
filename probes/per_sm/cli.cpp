// gpuprobe tlb-per-sm: flags -> probes::per_sm_options; each level's hit and miss on every SM
// (probes/per_sm/driver.hpp), written and summarised.
#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/units.hpp"
#include "probes/kit.hpp"
#include "probes/per_sm/driver.hpp"
#include "probes/per_sm/probe.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes::per_sm {

namespace {

struct per_sm_flags {
  kit::common_options common;
  std::string profile;
  probes::per_sm_options o;
  double range_gib = 384;
};

void run(per_sm_flags &f) {
  const auto tlb = model::read_profile(f.profile).tlb; // refuses another schema, in one line
  f.o.seed = f.common.seed;
  f.o.range_bytes = std::uint64_t(f.range_gib * double(1ull << 30));
  const auto r = probes::run_per_sm(f.o, tlb, f.profile, query_device(f.common.device));
  write_json_atomic(f.common.out, to_json(r));
  std::printf("gpuprobe tlb-per-sm: %s, %d reps, %.1f s\n",
              device_info_from_json(r.device).name.c_str(), r.reps, r.wall_seconds);
  for (const auto &l : r.levels) {
    std::printf("  %s (%s pages): ", l.target.level.c_str(),
                format_bytes(l.target.tested.page_bytes).c_str());
    if (!l.target.skipped.empty()) {
      std::printf("skipped: %s\n", l.target.skipped.c_str());
      continue;
    }
    const auto s = probes::summarize_per_sm(l, f.common.out);
    std::printf("%zu SMs; hit %s; penalty %s cycles per hop; rep-to-rep %.2f\n", s.sms.size(),
                probes::spread_text(s.sms, s.hit_cycles).c_str(),
                probes::spread_text(s.sms, s.penalty_cycles).c_str(), s.noise_cycles.value_or(0));
  }
  std::printf("  wrote %s\n", f.common.out.c_str());
}

} // namespace

kit::command cli() {
  auto f = std::make_shared<per_sm_flags>();
  kit::command c("tlb-per-sm",
                 "each TLB level's hit latency and miss penalty on every SM, one SM at a time",
                 "Example: gpuprobe tlb-per-sm --profile profile.json --out per_sm.json");
  c.common = &f->common;
  c.device = true;
  c.out = "result JSON file (gpuprobe.result/1, probe tlb-per-sm)";
  c.seed = true;
  c.option("--profile", &f->profile, "a TLB profile (gpuprobe analyze tlb, characterize)")
      .needed()
      .a_file();
  c.option("--below", &f->o.below, "the footprint the level holds, x its entries")
      .shown()
      .in(0.1, 0.99);
  c.option("--above", &f->o.above,
           "the footprint where every hop misses, x where its misses end (a ramp's end)")
      .shown()
      .in(1.01, 4.0);
  c.option("--reps", &f->o.reps, "rounds over the levels (2 or more give the noise)")
      .shown()
      .in(1, 64);
  c.option("--sms", &f->o.sm_limit, "only the SMs whose id is below this (0: every SM)")
      .shown()
      .in(0, 4096);
  c.option("--range-gib", &f->range_gib, "the most alias range mapped, GiB")
      .shown()
      .in(1.0, 4096.0);
  c.run = [f] { run(*f); };
  return c;
}

} // namespace gpuprobe::probes::per_sm
