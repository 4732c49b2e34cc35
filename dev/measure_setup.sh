#!/usr/bin/env bash
# What set-up costs on this machine: a clean clone, configured as scripts/setup.sh does (a unity
# build) and built target by target without ccache, for the given CUDA architectures; per-file
# compile times from ninja's log; then the README's test command. Usage:
#   dev/measure_setup.sh OUT_DIR "ARCHS" [more cmake args]   e.g. "90-real" or "80-real;90-real;100"
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$1"; archs="$2"; shift 2
mkdir -p "$out"
src="$(mktemp -d)/gpuprobe"
git clone -q "$here" "$src"
export CCACHE_DISABLE=1 # a fresh machine has no cache
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); echo "$e - $s" | bc; }
{
  echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; archs: $archs"
  echo "configure_s $(t cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_CUDA_ARCHITECTURES=$archs" -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 "$@")"
  for target in gpuprobe_lib gpuprobe gpuprobe-example-tuned gpuprobe-bench \
      gpuprobe_host_tests gpuprobe_gpu_tests; do
    echo "target_s $target $(t cmake --build "$src/build" --target "$target" -j "$(nproc)")"
  done
  echo "test_s $(t ctest --test-dir "$src/build")"
} | tee "$out/summary.txt"
# Per object: seconds (ninja's log: start and end in ms), the slowest first.
awk 'NR > 1 {printf "%.1f %s\n", ($2 - $1) / 1000, $4}' "$src/build/.ninja_log" |
  sort -rn > "$out/objects.txt"
head -25 "$out/objects.txt"
rm -rf "$(dirname "$src")"
