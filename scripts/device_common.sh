# Sourced by the scripts/device_*.sh rounds: `source scripts/device_common.sh NAME`.
# Sets B (the build folder, $BUILD or build), OUT, TAG and D=$OUT/NAME-$TAG (created); exports
# LD_LIBRARY_PATH for the libbenchmark copied into $B/lib; defines `pack` (one archive of $D under
# $OUT: call it after each stage, so a time-out keeps what ran) and `timed NAME LIMIT CMD...` (runs
# CMD under a time limit into $D/NAME.txt, appends "NAME: exit RC in S s" to $D/steps.txt, packs);
# records the device and the other processes on it in $D and prints the device line.
B="${BUILD:-build}"
OUT="${OUT:-/tmp/gpuprobe-out}"
TAG="${TAG:-run1}"
RUN="$1-$TAG"
D="$OUT/$RUN"
mkdir -p "$D"
pack() { tar czf "$OUT/$RUN.tar.gz" -C "$OUT" "$RUN"; }
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
