// gpuprobe tlb-sampling: flags -> probes::sampling_options; random sampling over real memory just
// below and above each level of a profile (probes/sampling/driver.hpp), written and summarised.
#include "cli/common.hpp"
#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/units.hpp"
#include "probes/sampling/driver.hpp"
#include "probes/sampling/probe.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes::sampling {

using namespace cli; // the options every subcommand shares (cli/common.hpp)

namespace {

struct sampling_flags {
  common_options common;
  std::string profile;
  probes::sampling_options o;
};

void run(sampling_flags &f) {
  check_output_path(f.common.out);
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

void setup_cli(CLI::App &parent) {
  auto f = std::make_shared<sampling_flags>();
  auto *app = parent.add_subcommand(
      "tlb-sampling", "random reads over real memory just below and above each TLB level's reach");
  app->footer("Example: gpuprobe tlb-sampling --profile profile.json --out sampling.json");
  add_device_option(*app, f->common);
  add_out_option(*app, f->common, "result JSON file (gpuprobe.result/1, probe tlb-sampling)");
  add_seed_option(*app, f->common);
  app->add_option("--profile", f->profile, "a TLB profile (gpuprobe analyze tlb, characterize)")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_option("--below", f->o.below, "the footprint below each reach, x reach")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 0.99));
  app->add_option("--above", f->o.above, "the footprint above each reach, x reach")
      ->capture_default_str()
      ->check(CLI::Range(1.01, 16.0));
  app->add_option("--reps", f->o.reps, "timed launches per footprint")
      ->capture_default_str()
      ->check(CLI::Range(3, 1000));
  app->callback([f] { run(*f); });
}

} // namespace gpuprobe::probes::sampling
