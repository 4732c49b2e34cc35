#!/usr/bin/env bash
# The TLB analyzer on a family of simulated GPUs (issue 45, probes/tlb/simulate.hpp): N random
# hierarchies and N/5 null GPUs a mode (full and quick, as characterize plans the tlb stage),
# the recovery table docs/analyze-tlb.md quotes, and the GPUs missed or falsely found.
# Usage: scripts/simulated_family.sh [N=1000] [BUILD=build]
set -euo pipefail
n="${1:-1000}"
b="${BUILD:-build}"
GPUPROBE_SIM_GPUS="$n" "$b/tests/gpuprobe_host_tests" --gtest_filter='SimulatedGpus.TheFamily*' |
  grep -E '^\||^\(|missed or false|FAILED|PASSED'
