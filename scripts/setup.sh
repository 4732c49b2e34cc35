#!/usr/bin/env bash
# gpuprobe set-up: installs the dependencies (idempotent), then configures and builds.
# The CUDA Toolkit (nvcc) is assumed present. Usage: scripts/setup.sh [build-dir]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"

need_pkgs=()
for p in cmake g++ make libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev \
         libbenchmark-dev python3-matplotlib binutils \
         slurm-wlm munge chromium; do # Slurm: scripts/slurm/ and its test; Chromium: the report test
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]})); then
  echo "setup: installing ${need_pkgs[*]}" >&2
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
# matplotlib for reports: the system package, or pip when python3 is not Debian's.
if ! python3 -c 'import matplotlib' 2>/dev/null; then
  python3 -m pip install -q matplotlib
fi
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
command -v nvcc >/dev/null || { echo "setup: nvcc not found (install the CUDA Toolkit)" >&2; exit 1; }

launcher=()  # ccache, where installed, makes rebuilds of unchanged files free
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
# The GPUs of this machine, each its own target (half the build of the three default targets, or
# a third); with no GPU, Hopper alone (the host tests need no GPU code run). Another set:
# GPUPROBE_CMAKE_ARGS=-DCMAKE_CUDA_ARCHITECTURES="80-real;90-real;100".
archs=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' |
  grep -E '^[0-9]+$' | sort -u | sed 's/$/-real/' | paste -sd';' || true)
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=${archs:-90-real}" \
  "${launcher[@]}" ${GPUPROBE_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
