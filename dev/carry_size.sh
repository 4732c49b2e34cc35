#!/bin/bash
# What a device call would copy, against its 64 MiB limit: the files git tracks, the untracked
# ones it does not ignore, and the carried paths given (ignored build folders). Prints each part
# and what is left; exits 1 when the sum is over the limit. Usage: dev/carry_size.sh [PATH...]
# TRACKED_LIMIT=BYTES: also exit 1 when the tracked files alone are over BYTES (the repository a
# user clones: 20,000,000, a ctest), naming their bytes and the five largest.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
limit=$((64 << 20))
bytes() { xargs -0 -r stat -c %s -- 2>/dev/null | awk '{s += $1} END {print s + 0}'; }
tracked=$(git ls-files -z | bytes)
untracked=$(git ls-files -z --others --exclude-standard | bytes)
carried=0
for p in "$@"; do
  [ -e "$p" ] || { echo "carry_size: no such path: $p" >&2; exit 2; }
  carried=$((carried + $(find "$p" -type f -print0 | bytes)))
done
total=$((tracked + untracked + carried))
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
left="$(mib $((limit - total))) left"
[ "$total" -le "$limit" ] || left="$(mib $((total - limit))) over: a call would be refused"
echo "tracked $(mib "$tracked"), untracked $(mib "$untracked"), carried $(mib "$carried"):" \
  "$(mib "$total") of 64 MiB, $left"
if [ -n "${TRACKED_LIMIT:-}" ] && [ "$tracked" -gt "$TRACKED_LIMIT" ]; then
  echo "tracked files: $tracked bytes, over $TRACKED_LIMIT; the largest:"
  git ls-files -z | xargs -0 -r stat -c '%s %n' | sort -rn | head -5
  exit 1
fi
[ "$total" -le "$limit" ]
