#pragma once
// The SM clock, an instrument of the tlb and atomics probes: the clock seen right now.

namespace gpuprobe::probes {

// SM clock seen right now: a one-block kernel spins ~20 ms comparing clock64 to %globaltimer.
double measure_sm_clock_mhz();

} // namespace gpuprobe::probes
