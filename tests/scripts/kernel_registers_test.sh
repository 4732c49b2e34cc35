#!/bin/bash
# rw_malloc's register budget without a GPU: BM_peers' malloc kernel (malloc_and_tag over
# rw_malloc_handle, __launch_bounds__(256, 4)) compiled as gpuprobe-bench compiles it, with ptxas'
# report: at most 64 registers (4 blocks of 256 threads an SM) and at most SPILL_LIMIT bytes of
# spill stores (4: the one value docs/rw-malloc.md states). The GPU test
# Peers.RwMallocsKernelHoldsFourBlocksAnSm checks the registers on the device.
# Usage: kernel_registers_test.sh BUILD_DIR SOURCE_DIR. Skips (77) where the build is not a
# Makefile build of gpuprobe-bench for sm_90 (the flags are read from its flags.make).
set -uo pipefail
build=$1 src=$2 limit=${SPILL_LIMIT:-4}
flags="$build/CMakeFiles/gpuprobe-bench.dir/flags.make"
[ -f "$flags" ] || { echo "SKIP: no $flags (a Makefile build of gpuprobe-bench)"; exit 77; }
nvcc=$(sed -n 's/^# compile CUDA with //p' "$flags")
defines=$(sed -n 's/^CUDA_DEFINES = //p' "$flags")
includes=$(sed -n 's/^CUDA_INCLUDES = //p' "$flags")
cflags=$(sed -n 's/^CUDA_FLAGS = //p' "$flags")
case "$cflags" in *sm_90*) ;; *) echo "SKIP: gpuprobe-bench is not built for sm_90: $cflags"; exit 77 ;; esac
T=$(mktemp -d /tmp/gpuprobe-regs.XXXXXX)
trap 'rm -rf "$T"' EXIT
# eval: the defines hold escaped quotes (GPUPROBE_VERSION), as make passes them to a shell.
(cd "$build" && eval "$nvcc $defines $includes $cflags -Xptxas -v -x cu -c" \
  "'$src/bench/peers/peers_bench.cu'" "-o '$T/peers.o'") >"$T/ptxas.txt" 2>&1 ||
  { tail -20 "$T/ptxas.txt"; echo "FAIL: the bench's peers source did not compile"; exit 1; }
read -r regs spill < <(awk '
  /Compiling entry function/ { on = ($0 ~ /malloc_and_tag/ && $0 ~ /rw_malloc_handle/) }
  on && /bytes spill stores/ { for (i = 1; i < NF; ++i) if ($(i + 1) == "bytes" && $(i + 2) == "spill") s = $i }
  on && /Used [0-9]+ registers/ { for (i = 1; i < NF; ++i) if ($i == "Used") r = $(i + 1); print r, s; exit }
' "$T/ptxas.txt")
[ -n "${regs:-}" ] && [ -n "${spill:-}" ] ||
  { echo "FAIL: no ptxas registers and spill lines for malloc_and_tag<rw_malloc_handle>"; exit 1; }
echo "malloc_and_tag<rw_malloc_handle>: $regs registers, $spill bytes of spill stores"
[ "$regs" -le 64 ] || { echo "FAIL: over 64 registers: an SM holds fewer than 4 blocks"; exit 1; }
[ "$spill" -le "$limit" ] || { echo "FAIL: more than $limit bytes of spill stores"; exit 1; }
