#!/usr/bin/env bash
# Where a malloc launch spends its time (issue 27): Nsight Compute on the timed malloc launch of
# BM_peers cells, clocks and caches left as they are (--clock-control none --cache-control none),
# the kernel's duration beside the CUDA-event time of the benchmark, warp stall reasons and the
# SASS lines that stall most. Usage: OUT=/dir BUILD=build-carry TAG=t scripts/device_malloc_profile.sh
#   CASES="rw_malloc/size:16/threads:16384/state:empty bump/size:16/threads:16384/state:empty"
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh" profile
CASES="${CASES:-rw_malloc/size:16/threads:16384/state:empty}"
for c in $CASES; do
  n=$(echo "$c" | tr '/:' '__')
  # launch 1 loads the kernels, 2 is the first launch on the heap, 3.. are timed
  timed "ncu_$n" 300 ncu --clock-control none --cache-control none -k regex:malloc_and_tag \
    --launch-skip 2 --launch-count 1 --section SpeedOfLight --section LaunchStats \
    --section WarpStateStats --section SourceCounters --section Occupancy \
    --export "$D/$n" "$B/gpuprobe-bench" --benchmark_filter="^BM_peers/$c"
  ncu --import "$D/$n.ncu-rep" --page source --print-source sass --csv >"$D/${n}_sass.csv" 2>&1
  ncu --import "$D/$n.ncu-rep" --page details >"$D/${n}_details.txt" 2>&1
  pack
done
echo "---- per case: duration, event time, top stalls"
for c in $CASES; do
  n=$(echo "$c" | tr '/:' '__')
  echo "== $c"
  grep -E "^\s+(Duration|Registers Per Thread|Warp Cycles Per Issued Instruction|Executed Ipc Active|Achieved Occupancy|Local Memory Spilling|Stack Size|Block Size)" "$D/${n}_details.txt" | sed 's/  */ /g'
  grep -E "BM_peers/.*manual_time" "$D/ncu_$n.txt" | head -1 | cut -c1-160
done
