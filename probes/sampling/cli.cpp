// gpuprobe tlb-sampling and its stage in characterize (probes/level_probe.hpp): random reads over
// real memory just below and above each level's reach (probes/sampling/driver.hpp), the
// workload-level cross-check; a level past the device memory is skipped, with the reason.
#include "common/units.hpp"
#include "probes/level_probe.hpp"
#include "probes/sampling/driver.hpp"
#include "probes/sampling/probe.hpp"

#include <cstdio>

namespace gpuprobe::probes::sampling {

namespace {

using probe_type = level_probe<sampling_options, sampling_result>;

const probe_type probe = {
    "tlb-sampling",
    "random reads over real memory just below and above each TLB level's reach",
    "Example: gpuprobe tlb-sampling --profile profile.json --out sampling.json",
    "tlb_sampling",
    {"--reps", "3"},
    false,
    run_sampling,
    [](kit::command &c, probe_type::flags_type &f) {
      c.option("--below", &f.o.below, "the footprint below each reach, x reach")
          .shown()
          .in(0.1, 0.99);
      c.option("--above", &f.o.above, "the footprint above each reach, x reach")
          .shown()
          .in(1.01, 16.0);
      c.option("--reps", &f.o.reps, "timed launches per footprint").shown().in(3, 1000);
    },
    nullptr,
    nullptr,
    [](const sampling_level_result &l, const std::string &) {
      std::printf("  %s (reach %s): ", l.target.level.c_str(),
                  format_bytes(l.target.reach_bytes()).c_str());
      if (l.target.skipped.empty())
        std::printf("%s vs %s: ", format_bytes(double(l.target.below_bytes)).c_str(),
                    format_bytes(double(l.target.above_bytes)).c_str());
      std::printf("%s\n", l.verdict_words().c_str());
    }};

} // namespace

probe_descriptor entry() { return level_entry<probe>(contribute); }

} // namespace gpuprobe::probes::sampling
