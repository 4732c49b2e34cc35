#pragma once
// Defaults shared by several stages, in one place (cuCollections keeps one such header).
#include <cstdint>

namespace gpuprobe::defaults {

// Share of the device's free memory a probe or pool may take (the rest: the context, the
// CUDA heap, the chain's bookkeeping).
inline constexpr double free_fraction = 0.94;
// (Threads per block: alloc::k_block in allocators/common.cuh, which the header-only
// allocators export without common/.)
// The --seed every command starts from.
inline constexpr std::uint64_t seed = 1;
// The step detector's noise floor in cycles (rounding to integer cycles alone gives 0.29) and
// the rise, in noise sigmas, that counts as a step.
inline constexpr double min_noise_cycles = 0.3;
inline constexpr double step_snr_min = 6.0;
// The TLB level test (probes/tlb/levels.hpp, docs/analyze-tlb.md): a level's strides' rises in
// noise sigmas, Stouffer-summed, must reach this. Calibrated on null sweeps of real noise
// (SimulatedGpus.TheLevelTestIsCalibratedOnNullSweepsOfRealNoise): at most 1 % of them exceed it.
inline constexpr double level_test_z = 10.0;
// The least rise, in noise sigmas at single points, that may seed a TLB level (the sweep's own
// refinement keeps step_snr_min).
inline constexpr double tlb_seed_snr = 4.5;

} // namespace gpuprobe::defaults
