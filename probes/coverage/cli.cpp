// gpuprobe tlb-coverage: flags -> probes::coverage_options; what one entry of each level of a
// profile covers (probes/coverage/driver.hpp), written and summarised.
#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/units.hpp"
#include "probes/coverage/driver.hpp"
#include "probes/coverage/probe.hpp"
#include "probes/kit.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes::coverage {

namespace {

struct coverage_flags {
  kit::common_options common;
  std::string profile, max_bytes = "384G";
  probes::coverage_options o;
};

void run(coverage_flags &f) {
  const auto tlb = model::read_profile(f.profile).tlb; // refuses another schema, in one line
  f.o.seed = f.common.seed;
  f.o.max_range_bytes = parse_bytes(f.max_bytes);
  const auto r = probes::run_coverage(f.o, tlb, f.profile, query_device(f.common.device));
  write_json_atomic(f.common.out, to_json(r));
  std::printf("gpuprobe tlb-coverage: %s, %.1f s\n", device_info_from_json(r.device).name.c_str(),
              r.wall_seconds);
  for (const auto &l : r.levels) {
    std::printf("  %s (%u x %s): ", l.target.level.c_str(), l.target.entries(),
                format_bytes(l.target.tested.page_bytes).c_str());
    if (!l.target.skipped.empty())
      std::printf("skipped: %s\n", l.target.skipped.c_str());
    else
      std::printf("%s\n", l.finding().c_str());
  }
  std::printf("  wrote %s\n", f.common.out.c_str());
}

} // namespace

kit::command cli() {
  auto f = std::make_shared<coverage_flags>();
  kit::command c("tlb-coverage",
                 "what one entry of each TLB level covers: one tag or many pages, filled "
                 "whole or page by page, with unmapped neighbours or distinct chunks",
                 "Example: gpuprobe tlb-coverage --profile profile.json --out coverage.json");
  c.common = &f->common;
  c.device = true;
  c.out = "result JSON file (gpuprobe.result/1, probe tlb-coverage)";
  c.seed = true;
  c.option("--profile", &f->profile, "a TLB profile (gpuprobe analyze tlb, characterize)")
      .needed()
      .a_file();
  c.option("--max-bytes", &f->max_bytes, "the largest virtual range a walk may use").shown();
  c.option("--repeats", &f->o.repeats,
           "walks of E and E + 1 windows, each way, for a fully associative level")
      .shown()
      .in(1, 64);
  c.run = [f] { run(*f); };
  return c;
}

} // namespace gpuprobe::probes::coverage
