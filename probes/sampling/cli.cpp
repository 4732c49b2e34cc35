// gpuprobe tlb-sampling: flags -> probes::sampling_options; random sampling over real memory just
// below and above each level of a profile (probes/sampling/driver.hpp), written and summarised.
#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/units.hpp"
#include "probes/kit.hpp"
#include "probes/sampling/driver.hpp"
#include "probes/sampling/probe.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes::sampling {

namespace {

struct sampling_flags {
  kit::common_options common;
  std::string profile;
  probes::sampling_options o;
};

void run(sampling_flags &f) {
  const auto tlb = model::read_profile(f.profile).tlb; // refuses another schema, in one line
  f.o.seed = f.common.seed;
  const auto r = probes::run_sampling(f.o, tlb, f.profile, query_device(f.common.device));
  write_json_atomic(f.common.out, to_json(r));
  std::printf("gpuprobe tlb-sampling: %s, %.1f s\n", device_info_from_json(r.device).name.c_str(),
              r.wall_seconds);
  for (const auto &l : r.levels) {
    std::printf("  %s (reach %s): ", l.target.level.c_str(),
                format_bytes(l.target.reach_bytes()).c_str());
    if (l.target.skipped.empty())
      std::printf("%s vs %s: ", format_bytes(double(l.target.below_bytes)).c_str(),
                  format_bytes(double(l.target.above_bytes)).c_str());
    std::printf("%s\n", l.verdict_words().c_str());
  }
  std::printf("  wrote %s\n", f.common.out.c_str());
}

} // namespace

kit::command cli() {
  auto f = std::make_shared<sampling_flags>();
  kit::command c("tlb-sampling",
                 "random reads over real memory just below and above each TLB level's reach",
                 "Example: gpuprobe tlb-sampling --profile profile.json --out sampling.json");
  c.common = &f->common;
  c.device = true;
  c.out = "result JSON file (gpuprobe.result/1, probe tlb-sampling)";
  c.seed = true;
  c.option("--profile", &f->profile, "a TLB profile (gpuprobe analyze tlb, characterize)")
      .needed()
      .a_file();
  c.option("--below", &f->o.below, "the footprint below each reach, x reach").shown().in(0.1, 0.99);
  c.option("--above", &f->o.above, "the footprint above each reach, x reach")
      .shown()
      .in(1.01, 16.0);
  c.option("--reps", &f->o.reps, "timed launches per footprint").shown().in(3, 1000);
  c.run = [f] { run(*f); };
  return c;
}

} // namespace gpuprobe::probes::sampling
