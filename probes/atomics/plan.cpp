// The atomics probe's stage in `gpuprobe characterize` (quick: two variants, 1024 samples).
#include "common/results_folder.hpp"
#include "probes/atomics/probe.hpp"
#include "probes/kit.hpp"

namespace gpuprobe::probes::atomics {

void plan(const kit::plan_request &r, std::vector<kit::stage> &s) {
  if (r.tlb)
    return;
  const std::string dev = std::to_string(r.device), sd = std::to_string(r.seed);
  const std::string out = results_folder::raw_rel(results_folder::raw_file::atomics);
  if (r.quick)
    s.push_back({"atomics",
                 out,
                 {"atomics", "--device", dev, "--variants", "same_u32", "distinct_u32", "--samples",
                  "1024", "--seed", sd, "--out", out},
                 {}});
  else
    s.push_back({"atomics", out, {"atomics", "--device", dev, "--seed", sd, "--out", out}, {}});
  s.back().runs_last = true;     // its many launches come last, after the TLB's stages
  s.back().clock_witness = true; // it records the SM clock it ran at
  s.back().alias_free = true;    // its own small buffers: --map-late runs it first
}

} // namespace gpuprobe::probes::atomics
