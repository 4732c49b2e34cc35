# Sourced by the dev/device_*.sh rounds: `source dev/device_common.sh NAME`.
# Sets B (the build folder, $BUILD or build), OUT, TAG and D=$OUT/NAME-$TAG (created); exports
# LD_LIBRARY_PATH for the libbenchmark copied into $B/lib; defines `pack` (one archive of $D under
# $OUT: call it after each stage, so a time-out keeps what ran) and `timed NAME LIMIT CMD...` (runs
# CMD under a time limit into $D/NAME.txt, appends "NAME: exit RC in S s" to $D/steps.txt, packs);
# records the device and the other processes on it in $D and prints the device line;
# `gpu_tests [FILTER]` runs the GPU tests (gtest FILTER, default all) one process each.
B="${BUILD:-build}"
OUT="${OUT:-/tmp/gpuprobe-out}"
TAG="${TAG:-run1}"
RUN="$1-$TAG"
D="$OUT/$RUN"
mkdir -p "$D"
# The reports' PNG and SVG figures stay behind (16 MiB a file comes back; the CSVs they are drawn
# from travel, and `gpuprobe report` draws them again here).
pack() { tar czf "$OUT/$RUN.tar.gz" --exclude='*.png' --exclude='*.svg' -C "$OUT" "$RUN"; }
timed() {
  local name=$1 limit=$2
  shift 2
  local s=$(date +%s)
  timeout "$limit" "$@" >"$D/$name.txt" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(( $(date +%s) - s )) s" | tee -a "$D/steps.txt"
  pack
  return $rc
}
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,memory.used,memory.total,mig.mode.current \
  --format=csv >"$D/nvidia-smi.csv" 2>&1
nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv >"$D/other-processes.csv" 2>&1
cat "$D/nvidia-smi.csv"
gpu_tests() {
  # One process per test: the device malloc heap is fixed per process.
  "$B/tests/gpuprobe_gpu_tests" --gtest_list_tests --gtest_filter="${1:-*}" |
    awk '/^[^ ]/{s=$1} /^  /{print s $1}' >"$D/gpu_test_names.txt"
  local s=$(date +%s) pass=0 fail=0 skip=0 t rc
  while read -r t; do
    timeout 400 "$B/tests/gpuprobe_gpu_tests" --gtest_filter="$t" >"$D/gpu_test.log.tmp" 2>&1
    rc=$?
    if grep -q '^\[  SKIPPED \] 1 test' "$D/gpu_test.log.tmp"; then skip=$((skip + 1))
    elif [ $rc -eq 0 ]; then pass=$((pass + 1))
    else fail=$((fail + 1)); echo "FAILED $t (exit $rc)" >>"$D/gpu_failures.txt"; cat "$D/gpu_test.log.tmp" >>"$D/gpu_failures.txt"; fi
    cat "$D/gpu_test.log.tmp" >>"$D/gpu_tests.txt"
  done <"$D/gpu_test_names.txt"
  rm -f "$D/gpu_test.log.tmp"
  echo "gpu tests: $pass passed, $fail failed, $skip skipped of $(wc -l <"$D/gpu_test_names.txt") in $(( $(date +%s) - s )) s" | tee -a "$D/steps.txt"
  [ -f "$D/gpu_failures.txt" ] && grep -E '^FAILED|Failure|Expected|actual|Which is' "$D/gpu_failures.txt" | head -30
  pack
}
