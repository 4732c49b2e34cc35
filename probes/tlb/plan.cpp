// The tlb probe's stages in `gpuprobe characterize`: the aliased sweep and the real-memory
// cross-check, and the analysis of each (before the TLB profile exists; none after).
#include "common/results_folder.hpp"
#include "probes/kit.hpp"
#include "probes/tlb/probe.hpp"

namespace gpuprobe::probes::tlb {

void plan(const kit::plan_request &r, std::vector<kit::stage> &s) {
  if (r.tlb)
    return;
  using F = results_folder::raw_file;
  const auto raw = results_folder::raw_rel;
  const std::string dev = std::to_string(r.device), sd = std::to_string(r.seed);
  // The hierarchy: the aliased chase (one physical chunk at every slot of a 384 GiB range), whose
  // steps are translation alone, with strides 64 KiB..1 GiB (quick: 2 MiB..256 MiB, 4 points an
  // octave instead of 8).
  std::vector<std::string> alias = {"tlb", "--alloc", "alias", "--device", dev, "--no-control"};
  if (r.quick)
    // 4096 timed hops, as the full sweep: fewer sample part of a lap of the 4096-entry level,
    // whose misses fall on a few sets' pages, and its ramp's ends then wander.
    // Strides below 8 MiB to 96 GiB only (past the second level's full miss, 72 GiB on Hopper):
    // the range then maps 44 % of its slots, in about half the time (3.0-3.2 s against 5.6-6.9 s
    // on two H100s). Re-analysed so cut, the committed H100 and H200 sweeps give the
    // same levels, ramps and penalties; the simulated family's quick recovery moved from 49.1 to
    // 48.5 % (docs/analyze-tlb.md).
    alias.insert(alias.end(), {"--min-stride", "2M", "--max-stride", "256M", "--points-per-octave",
                               "4", "--samples", "4096", "--short-strides", "8M:96G"});
  alias.insert(alias.end(), {"--seed", sd, "--out", raw(F::tlb)});
  s.push_back({"tlb", raw(F::tlb), alias, {}});
  s.back().clock_witness = true; // it records the SM clock it ran at
  // The application-level cross-check: a chase over real memory (cudaMalloc, most of the memory)
  // with the L2-capacity control; its L2 slice costs show as the p10/p90 split.
  std::vector<std::string> real = {"tlb",          "--alloc", "cudamalloc",   "--device", dev,
                                   "--min-stride", "2M",      "--max-stride", "128M"};
  if (r.quick)
    real.insert(real.end(), {"--points-per-octave", "4", "--samples", "512"});
  real.insert(real.end(), {"--seed", sd, "--out", raw(F::tlb_real)});
  s.push_back({"tlb_real", raw(F::tlb_real), real, {}});
  s.back().alias_free = true; // real memory: it maps no alias range
  // But it stays after the tlb stage under --map-late: run before any range or chunk existed, its
  // curve at 32-160 MiB read 310-317 cycles a hop against 277-289 and its L1 cross-check "not seen
  // in real memory" in 4 of 4 runs (docs/fleet.md): its placement moves with the order.
  s.back().keeps_place = true;
  s.push_back({"tlb_profile",
               raw(F::tlb_profile),
               {"analyze", "tlb", "--input", raw(F::tlb), "--out", raw(F::tlb_profile)},
               {"tlb"}});
  s.push_back({"tlb_real_profile",
               raw(F::tlb_real_profile),
               {"analyze", "tlb", "--input", raw(F::tlb_real), "--out", raw(F::tlb_real_profile)},
               {"tlb_real"}});
  s.back().alias_free = true;
}

} // namespace gpuprobe::probes::tlb
