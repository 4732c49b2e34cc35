#!/usr/bin/env bash
# The allocator soak (issue 15) on the GPU machine: Soak.* with GPUPROBE_SOAK_OPS operations each
# (default 10^9), then the Malloc* GPU tests one process each.
# Usage: OUT=/some/dir scripts/device_soak.sh   (BUILD=build TAG=run1 OPS=1e9 MALLOC=1)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" soak
export GPUPROBE_SOAK_OPS="${OPS:-1e9}"
timed soak_rw 400 "$B/tests/gpuprobe_gpu_tests" --gtest_filter='Soak.RwMalloc*'
timed soak_corw 300 "$B/tests/gpuprobe_gpu_tests" --gtest_filter='Soak.Corw*'
[ "${MALLOC:-0}" = 1 ] && gpu_tests 'Malloc*'
echo "---- summary"
cat "$D/steps.txt"
grep -hE 'soak:|fill:|OK \]|FAILED \]|Which is|Failure' "$D"/soak_*.txt
