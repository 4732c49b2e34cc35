// gpuprobe tlb-coverage: flags -> probes::coverage_options; what one entry of each level of a
// profile covers (probes/coverage/driver.hpp), written and summarised.
#include "cli/common.hpp"
#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/units.hpp"
#include "probes/coverage/driver.hpp"
#include "probes/coverage/probe.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes::coverage {

using namespace cli; // the options every subcommand shares (cli/common.hpp)

namespace {

struct coverage_flags {
  common_options common;
  std::string profile, max_bytes = "384G";
  probes::coverage_options o;
};

void run(coverage_flags &f) {
  check_output_path(f.common.out);
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

void setup_cli(CLI::App &parent) {
  auto f = std::make_shared<coverage_flags>();
  auto *app = parent.add_subcommand(
      "tlb-coverage", "what one entry of each TLB level covers: one tag or many pages, filled "
                      "whole or page by page, with unmapped neighbours or distinct chunks");
  app->footer("Example: gpuprobe tlb-coverage --profile profile.json --out coverage.json");
  add_device_option(*app, f->common);
  add_out_option(*app, f->common, "result JSON file (gpuprobe.result/1, probe tlb-coverage)");
  add_seed_option(*app, f->common);
  app->add_option("--profile", f->profile, "a TLB profile (gpuprobe analyze tlb, characterize)")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_option("--max-bytes", f->max_bytes, "the largest virtual range a walk may use")
      ->capture_default_str();
  app->add_option("--repeats", f->o.repeats,
                  "walks of E and E + 1 windows, each way, for a fully associative level")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app->callback([f] { run(*f); });
}

} // namespace gpuprobe::probes::coverage
