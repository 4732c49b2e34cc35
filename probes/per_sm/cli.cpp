// gpuprobe tlb-per-sm: the level probe (probes/level_probe.hpp) over probes::per_sm_options; each
// level's hit and miss on every SM (probes/per_sm/driver.hpp), written and summarised.
#include "common/units.hpp"
#include "probes/level_probe.hpp"
#include "probes/per_sm/driver.hpp"
#include "probes/per_sm/probe.hpp"

#include <cstdio>
#include <string>

namespace gpuprobe::probes::per_sm {

namespace {

struct per_sm_extra {
  double range_gib = 384; // --range-gib
};

using probe_type = level_probe<per_sm_options, per_sm_result, per_sm_extra>;

const probe_type probe = {
    "tlb-per-sm",
    "each TLB level's hit latency and miss penalty on every SM, one SM at a time",
    "Example: gpuprobe tlb-per-sm --profile profile.json --out per_sm.json",
    "tlb_per_sm",
    {"--sms",
     "16"}, // quick: the first 16 SMs, as the quick sharing stages test (2.5 -> 0.4 s on an H100)
    false,
    run_per_sm,
    [](kit::command &c, probe_type::flags_type &f) {
      c.option("--below", &f.o.below, "the footprint the level holds, x its entries")
          .shown()
          .in(0.1, 0.99);
      c.option("--above", &f.o.above,
               "the footprint where every hop misses, x where its misses end (a ramp's end)")
          .shown()
          .in(1.01, 4.0);
      c.option("--reps", &f.o.reps, "rounds over the levels (2 or more give the noise)")
          .shown()
          .in(1, 64);
      c.option("--sms", &f.o.sm_limit, "only the SMs whose id is below this (0: every SM)")
          .shown()
          .in(0, 4096);
      c.option("--range-gib", &f.extra.range_gib, "the most alias range mapped, GiB")
          .shown()
          .in(1.0, 4096.0);
    },
    [](probe_type::flags_type &f) {
      f.o.range_bytes = std::uint64_t(f.extra.range_gib * double(1ull << 30));
    },
    [](const per_sm_result &r) { return ", " + std::to_string(r.reps) + " reps"; },
    [](const probe_type::level_type &l, const std::string &out) {
      std::printf("  %s (%s pages): ", l.target.level.c_str(),
                  format_bytes(l.target.tested.coverage_bytes).c_str());
      if (!l.target.skipped.empty()) {
        std::printf("skipped: %s\n", l.target.skipped.c_str());
        return;
      }
      const auto s = probes::summarize_per_sm(l, out);
      std::printf("%zu SMs; hit %s; penalty %s cycles per hop; rep-to-rep %.2f\n", s.sms.size(),
                  probes::spread_text(s.sms, s.hit_cycles).c_str(),
                  probes::spread_text(s.sms, s.penalty_cycles).c_str(), s.noise_cycles.value_or(0));
    }};

} // namespace

probe_descriptor entry() { return level_entry<probe>(contribute, draw, "Per-SM TLB latency"); }

} // namespace gpuprobe::probes::per_sm
