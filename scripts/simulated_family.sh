#!/usr/bin/env bash
# The TLB analyzer on a family of simulated GPUs (issue 45, probes/tlb/simulate.hpp): N random
# hierarchies and N/5 null GPUs a mode (full and quick, as characterize plans the tlb stage),
# the recovery table docs/analyze-tlb.md quotes, and the GPUs missed or falsely found; then the
# issue-77 table (recoverable levels, false share, calibration) of the same GPUs analysed by the
# rise detectors alone and by the whole-sweep model (analyze tlb --model), and the held-out 2017
# layout read both ways (N/10 GPUs).
# Usage: scripts/simulated_family.sh [N=1000] [BUILD=build]
set -euo pipefail
n="${1:-1000}"
b="${BUILD:-build}"
GPUPROBE_SIM_GPUS="$n" "$b/tests/gpuprobe_host_tests" --gtest_filter='SimulatedGpus.TheFamily*:SimulatedGpus.TheHeldOut*' |
  grep -E '^\||^\(|missed or false|FAILED|PASSED'
