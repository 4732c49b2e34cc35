// gpuprobe tlb-coverage: the level probe (probes/level_probe.hpp) over probes::coverage_options;
// what one entry of each level of a profile covers (probes/coverage/driver.hpp), written and
// summarised.
#include "common/units.hpp"
#include "probes/coverage/driver.hpp"
#include "probes/coverage/probe.hpp"
#include "probes/level_probe.hpp"

#include <cstdio>
#include <string>

namespace gpuprobe::probes::coverage {

namespace {

struct coverage_extra {
  std::string max_bytes = "384G"; // --max-bytes, in words
};

using probe_type = level_probe<coverage_options, coverage_result, coverage_extra>;

const probe_type probe = {
    "tlb-coverage",
    "what one entry of each TLB level covers: one tag or many pages, filled "
    "whole or page by page, with unmapped neighbours or distinct chunks",
    "Example: gpuprobe tlb-coverage --profile profile.json --out coverage.json",
    "tlb_coverage",
    {},
    true, // full runs only
    run_coverage,
    [](kit::command &c, probe_type::flags_type &f) {
      c.option("--max-bytes", &f.extra.max_bytes, "the largest virtual range a walk may use")
          .shown();
      c.option("--repeats", &f.o.repeats,
               "walks of E and E + 1 windows, each way, for a fully associative level")
          .shown()
          .in(1, 64);
    },
    [](probe_type::flags_type &f) { f.o.max_range_bytes = parse_bytes(f.extra.max_bytes); },
    nullptr,
    [](const probe_type::level_type &l, const std::string &) {
      std::printf("  %s (%u x %s): ", l.target.level.c_str(), l.target.entries(),
                  format_bytes(l.target.tested.coverage_bytes).c_str());
      if (!l.target.skipped.empty())
        std::printf("skipped: %s\n", l.target.skipped.c_str());
      else
        std::printf("%s\n", l.finding().c_str());
    }};

} // namespace

probe_descriptor entry() { return level_entry<probe>(contribute); }

} // namespace gpuprobe::probes::coverage
