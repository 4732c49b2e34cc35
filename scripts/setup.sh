#!/usr/bin/env bash
# gpuprobe set-up: installs the dependencies (idempotent), then configures and builds.
# The CUDA Toolkit (nvcc) is assumed present.
# Usage: scripts/setup.sh [--test-tools] [build-dir]
#   --test-tools  also Slurm, munge and Chromium, for the Slurm and browser tests (CI uses it;
#                 without them those tests skip and say why)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
test_tools=0
if [ "${1:-}" = "--test-tools" ]; then
  test_tools=1
  shift
fi
build="${1:-$here/build}"

need_pkgs=()
pkgs=(cmake g++ make curl libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  python3-matplotlib binutils)
((test_tools)) && pkgs+=(slurm-wlm munge chromium)
for p in "${pkgs[@]}"; do
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

# Google Benchmark as a release build. Debian's libbenchmark is built without NDEBUG: every run
# prints "Library was built as DEBUG" and records library_build_type "debug". The same version's
# source, from Debian's archive, is built release and static into $build/_deps (about 25 s).
# Offline, the system's build stays and this says so.
release_benchmark() {
  local so prefix="$build/_deps/benchmark" ver url src
  [ -f "$prefix/lib/cmake/benchmark/benchmarkConfig.cmake" ] && { echo "$prefix"; return; }
  so=$(ls /usr/lib/*/libbenchmark.so.* /usr/lib/libbenchmark.so.* 2>/dev/null | head -1 || true)
  [ -n "$so" ] && grep -qa "built as DEBUG" "$so" || return 0 # a release build already
  ver=$(dpkg-query -W -f='${Version}' libbenchmark-dev 2>/dev/null | sed 's/-[^-]*$//')
  url="http://deb.debian.org/debian/pool/main/b/benchmark/benchmark_${ver}.orig.tar.gz"
  src=$(mktemp -d)
  if [ -n "$ver" ] && curl -fsS --max-time 60 -o "$src/gb.tar.gz" "$url" &&
    tar xzf "$src/gb.tar.gz" -C "$src" --strip-components=1 &&
    cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DBENCHMARK_ENABLE_TESTING=OFF \
      -DBENCHMARK_ENABLE_GTEST_TESTS=OFF -DBENCHMARK_ENABLE_WERROR=OFF \
      -DBENCHMARK_INSTALL_DOCS=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null &&
    cmake --build "$src/build" -j "$(nproc)" >/dev/null && cmake --install "$src/build" >/dev/null; then
    echo "$prefix"
  else
    echo "setup: Google Benchmark stays the system's debug build (could not build $url)" >&2
  fi
  rm -rf "$src"
}
mkdir -p "$build"
benchmark_prefix=$(release_benchmark)
benchmark_args=()
[ -n "$benchmark_prefix" ] && benchmark_args=("-Dbenchmark_DIR=$benchmark_prefix/lib/cmake/benchmark")

launcher=()  # ccache, where installed, makes rebuilds of unchanged files free
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
# The GPUs of this machine, each its own target (half the build of the three default targets, or
# a third); with no GPU, Hopper alone (the host tests need no GPU code run). Another set:
# GPUPROBE_CMAKE_ARGS=-DCMAKE_CUDA_ARCHITECTURES="80-real;90-real;100".
archs=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' |
  grep -E '^[0-9]+$' | sort -u | sed 's/$/-real/' | paste -sd';' || true)
# A unity build: the C++ files compiled 16 to a unit, the CUDA files a few to a unit
# (cmake/cuda_unity.cmake), so the JSON, CLI, test and benchmark headers are parsed and
# instantiated once a unit, not once a file (more than half the build's time on 2 cores).
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=${archs:-90-real}" \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 \
  "${benchmark_args[@]}" "${launcher[@]}" ${GPUPROBE_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
