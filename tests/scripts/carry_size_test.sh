#!/bin/bash
# dev/carry_size.sh in a throwaway git repository: tracked, untracked-not-ignored and carried
# (ignored) bytes summed as a device call counts them; exit 1 past 64 MiB, 2 for a missing path.
# Sizes are drawn from a fixed seed; files are sparse (their size, not their blocks, counts).
set -uo pipefail
script="$1/dev/carry_size.sh"
T=$(mktemp -d /tmp/gpuprobe-carry.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$T" && git init -q . && mkdir -p carried && echo '/carried/' >.gitignore
RANDOM=74
over=0
for case in $(seq 1 12); do
  rm -rf tracked untracked carried/* && mkdir -p tracked untracked
  tr=$((RANDOM % 50 + 1)) un=$((RANDOM % 8)) ca=$((RANDOM % 20)) # MiB: some past 64 in all
  truncate -s "${tr}M" tracked/a && truncate -s "${un}M" untracked/b && truncate -s "${ca}M" carried/c
  git add .gitignore tracked # the index is what git tracks
  out=$("$script" carried) && rc=0 || rc=$?
  gi=$(stat -c %s .gitignore)
  total=$(( (tr + un + ca) * 1048576 + gi ))
  want_rc=0 && [ "$total" -gt $((64 << 20)) ] && want_rc=1
  [ "$rc" = "$want_rc" ] || fail "case $case ($tr+$un+$ca MiB): exit $rc, want $want_rc: $out"
  echo "$out" | grep -q "tracked $tr.0 MiB, untracked $un.0 MiB, carried $ca.0 MiB" ||
    fail "case $case: $out"
  over=$((over + rc))
  echo "case $case: $out (exit $rc)"
done
[ "$over" -gt 0 ] && [ "$over" -lt 12 ] || fail "the family must hold cases on both sides of 64 MiB"
"$script" no-such-path 2>/dev/null
[ $? = 2 ] || fail "a missing carried path must exit 2"
# TRACKED_LIMIT: the tracked bytes alone against a limit drawn on both sides of them.
rm -rf untracked carried/* && truncate -s 3M tracked/a && git add tracked
tracked_now=$(git ls-files -z | xargs -0 stat -c %s | awk '{s += $1} END {print s}')
for case in $(seq 1 8); do
  lim=$((tracked_now + (RANDOM % 2001) - 1000))
  TRACKED_LIMIT=$lim "$script" >/dev/null && rc=0 || rc=$?
  want_rc=0 && [ "$tracked_now" -gt "$lim" ] && want_rc=1
  [ "$rc" = "$want_rc" ] || fail "TRACKED_LIMIT=$lim with $tracked_now tracked: exit $rc, want $want_rc"
done
out=$(TRACKED_LIMIT=$((tracked_now - 1)) "$script")
echo "$out" | grep -q "tracked files: $tracked_now bytes, over" ||
  fail "a tracked tree over its limit must say its bytes: $out"
echo "carry_size: 12 cases ($over past the limit), a missing path and 8 tracked limits as expected"
