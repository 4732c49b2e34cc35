#!/usr/bin/env bash
# compare's page as a person sees it: `gpuprobe compare --html` of the two committed H100
# units, opened by headless Chromium at 1400 px with a checker appended. It fails unless the page
# holds the differing levels' overlaid sweeps (an SVG with both runs' lines each) and the per-SM
# maps, nothing is wider than the page, and the console stays silent; it can save a screenshot.
# Exit 77 (skipped) where no Chromium exists. Usage: compare_in_browser_test.sh GPUPROBE SOURCE_DIR [SHOT.png]
set -uo pipefail
bin="$1" src="$2" shot="${3:-}"
source "$(dirname "$0")/common.sh" compare-browser
runs="$src/tests/fixtures/runs"
"$bin" compare "$runs/nvidia-h100-80gb-hbm3-f83ecb16" "$runs/nvidia-h100-80gb-hbm3-5dc71e3e" \
  --html "$T/compare.html" >"$T/compare.md" 2>&1 || { cat "$T/compare.md"; fail "gpuprobe compare"; }
add_checker "$T/compare.html" "$T/checked.html" <<'JS'
  const svgs = [...document.querySelectorAll("svg")];
  // A drawn plot: a box of non-zero size and at least two lines (A and B).
  const drawn = svgs.filter(s => s.getBoundingClientRect().width > 100 &&
                                 s.querySelectorAll("polyline").length >= 2);
  return "gpuprobe-check: " + drawn.length + " of " + svgs.length + " plots drawn" +
    (wide.length ? "; wider than the page: " + wide.slice(0, 3).map(e => e.tagName).join(", ") : "");
JS
check_page "$T/checked.html"
n=$(grep -o '<svg ' "$T/compare.html" | wc -l)
[ "$n" -ge 2 ] || fail "expected the overlaid sweeps and per-SM maps, the page has $n plots"
[ "$line" = "gpuprobe-check: $n of $n plots drawn" ] || fail "expected $n of $n plots drawn, got: ${line:-no result}"
grep -q "L2: the two sweeps at its page stride" "$T/compare.html" || fail "no overlay for L2, whose penalty differs"
grep -q "miss penalty per SM" "$T/compare.html" || fail "no per-SM map"
[ -z "$shot" ] || screenshot "$T/compare.html" "$shot" 2600
echo "PASSED: $n plots drawn, no console error"
