#!/usr/bin/env bash
# The aliased-VMM chase (issue 12's method) on the GPU machine: its GPU tests, then
# `gpuprobe tlb --alloc alias` at the default footprint (4 x the memory) with the default
# strides, once with the granularity's chunk and once with a 32 MiB chunk (does an entry's
# coverage depend on physical contiguity?), each analyzed; logs and results in one archive.
# Usage: OUT=/some/dir scripts/device_alias.sh   (BUILD=build TAG=run1 GTEST_FILTER=...)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" alias
for t in ${GTEST_TESTS:-TlbProbeGpu.AliasPoolWalksPastTheDeviceMemory TlbProbeGpu.AliasBadInputIsAOneLineError Tuned.TuneThenValidateEndToEnd}; do
  timed "test_$t" 300 "$B/tests/gpuprobe_gpu_tests" --gtest_filter="$t"
done
timed alias_2m 400 "$B/gpuprobe" tlb --alloc alias --out "$D/alias_2m.json"
timed analyze_2m 60 "$B/gpuprobe" analyze tlb --input "$D/alias_2m.json" --out "$D/profile_2m.json"
timed alias_32m 300 "$B/gpuprobe" tlb --alloc alias --alias-bytes 32M --min-stride 2M --out "$D/alias_32m.json"
timed analyze_32m 60 "$B/gpuprobe" analyze tlb --input "$D/alias_32m.json" --out "$D/profile_32m.json"
echo "---- summary"
cat "$D/steps.txt"
for t in ${GTEST_TESTS:-TlbProbeGpu.AliasPoolWalksPastTheDeviceMemory TlbProbeGpu.AliasBadInputIsAOneLineError Tuned.TuneThenValidateEndToEnd}; do
  grep -E '^\[  (PASSED|FAILED) |alias, stride|Failure|Expected|actual' "$D/test_$t.txt" | head -6
done
for f in alias_2m alias_32m; do grep -E 'mapped in|control \(|^gpuprobe tlb|level:|note:' "$D/$f.txt" | cut -c1-200; done
for f in analyze_2m analyze_32m; do cat "$D/$f.txt" | cut -c1-200; done
