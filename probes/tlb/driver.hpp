#pragma once
// `gpuprobe tlb`: the driver of the TLB sweep (pointer chase over strides x footprints, with the
// L2-capacity positive control), its result and the result's JSON (gpuprobe.result/2, probe
// "tlb"). Planning and JSON are host code (result.cpp); run_tlb needs a GPU (driver.cpp).
#include "common/defaults.hpp"
#include "common/device_info.hpp"
#include "common/device_memory.hpp"
#include "common/envelope.hpp"
#include "common/units.hpp"
#include "probes/tlb/sweep.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct tlb_options {
  alloc_kind alloc = alloc_kind::cudamalloc;
  std::uint64_t alias_bytes = 0; // alias: the physical chunk every slot maps (0: the granularity)
  // 0: free_fraction of the free memory, whole GiB (alias: k_alias_default_bytes, 384 GiB)
  std::uint64_t max_bytes = 0;
  std::uint64_t min_bytes = k_mib;
  std::uint64_t min_stride = 64 * k_kib, max_stride = k_gib; // powers of two between them...
  std::vector<std::uint64_t> strides;                        // ...unless given explicitly
  int points_per_octave = 8;
  // Strides below short_below sweep up to short_bytes only (0: every stride to max_bytes;
  // sweep_plan::short_below).
  std::uint64_t short_below = 0, short_bytes = 0;
  unsigned samples = 4096;
  bool control = true;
  double free_fraction = defaults::free_fraction;
  std::uint64_t seed = defaults::seed;
};

// The positive control: a 128-byte stride (one L2 line per hop) up to 4 x L2.
struct tlb_control {
  struct rise {
    double boundary_bytes = 0, step_cycles = 0, snr = 0;
  };
  std::uint64_t stride_bytes = 128;
  std::uint64_t expected_bytes = 0; // the L2 size
  std::vector<rise> steps;
  bool passed = false; // a rise between L2/8 and 4 x L2
  // Threads of the chasing block that read each point's warm lap (1: the chasing thread walks it).
  unsigned warm_threads = 1;
  std::vector<sweep_point> points;
};

struct tlb_result : result_envelope { // device, meta
  std::string alloc;
  std::uint64_t granularity_bytes = 0; // 0: the driver decides ("unknown")
  std::uint64_t alias_bytes = 0;       // alias pools: the one physical chunk (else 0, not written)
  std::uint64_t va_base = 0;           // alias pools: the range's virtual address (its alignment)
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::uint64_t max_hops =
      0; // a stride's longest lap (sweep_plan::max_hops; 0: max_bytes / stride)
  // Strides below short_below swept to short_bytes only (sweep_plan::short_below; 0: none).
  std::uint64_t short_below = 0, short_bytes = 0;
  std::vector<std::uint64_t> strides;
  int points_per_octave = 0;
  std::size_t samples_per_point = 0;
  std::string load = "ld.global.cg (L1 bypassed)";
  double sm_clock_mhz_before = 0, sm_clock_mhz_after = 0;
  std::optional<tlb_control> control;
  std::vector<sweep_point> points;
  double wall_seconds = 0;
};

// The sweep plan of `o` on a device with `free_bytes` free (throws gpuprobe::error on options
// that cannot run: footprint beyond the free memory, min > max, a stride not a multiple of 8).
sweep_plan plan_tlb(const tlb_options &o, std::uint64_t free_bytes);
// The control's plan (128-byte stride, 1 MiB to min(max_bytes, 4 x L2), the sweep's points per
// octave up to 8: a quick sweep's 4 halve its 3.2 s) and its verdict.
sweep_plan plan_control(std::uint64_t max_bytes, std::uint64_t l2_bytes, int points_per_octave = 8);
tlb_control judge_control(std::vector<sweep_point> points, std::uint64_t l2_bytes);

// Runs the control (when asked) and the sweep on `dev`; progress lines go to stderr.
tlb_result run_tlb(const tlb_options &o, device_info dev);

nlohmann::json to_json(const sweep_point &p);
sweep_point sweep_point_from_json(const nlohmann::json &j);
nlohmann::json to_json(const tlb_result &r);
tlb_result tlb_result_from_json(const nlohmann::json &doc); // throws gpuprobe::error

} // namespace gpuprobe::probes
