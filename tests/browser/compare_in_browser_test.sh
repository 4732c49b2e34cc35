#!/usr/bin/env bash
# compare's page as a person sees it (issue 47): `gpuprobe compare --html` of the two committed H100
# units, opened by headless Chromium at 1400 px with a checker appended. It fails unless the page
# holds the differing levels' overlaid sweeps (an SVG with both runs' lines each) and the per-SM
# maps, nothing is wider than the page, and the console stays silent; it can save a screenshot.
# Exit 77 (skipped) where no Chromium exists. Usage: compare_in_browser_test.sh GPUPROBE SOURCE_DIR [SHOT.png]
set -uo pipefail
bin="$1" src="$2" shot="${3:-}"
skip() { echo "SKIPPED: $*"; exit 77; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || skip "no Chromium (scripts/setup.sh installs the chromium package)"
T=$(mktemp -d /tmp/gpuprobe-compare-browser.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
runs="$src/reports/examples/runs"
"$bin" compare "$runs/nvidia-h100-80gb-hbm3-f83ecb16" "$runs/nvidia-h100-80gb-hbm3-5dc71e3e" \
  --html "$T/compare.html" >"$T/compare.md" 2>&1 || { cat "$T/compare.md"; fail "gpuprobe compare"; }
cp "$T/compare.html" "$T/checked.html"
cat >>"$T/checked.html" <<'JS'
<script>
window.addEventListener("load", () => {
  const svgs = [...document.querySelectorAll("svg")];
  // A drawn plot: a box of non-zero size and at least two lines (A and B).
  const drawn = svgs.filter(s => s.getBoundingClientRect().width > 100 &&
                                 s.querySelectorAll("polyline").length >= 2);
  const wide = [...document.body.querySelectorAll("*")]
    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1);
  const out = document.createElement("pre");
  out.id = "gpuprobe-check";
  out.textContent = "gpuprobe-check: " + drawn.length + " of " + svgs.length + " plots drawn" +
    (wide.length ? "; wider than the page: " + wide.slice(0, 3).map(e => e.tagName).join(", ") : "");
  document.body.appendChild(out);
});
</script>
JS
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --allow-file-access-from-files
       --window-size=1400,900 --virtual-time-budget=10000 --enable-logging=stderr --v=0)
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$T/checked.html" >"$T/dom.html" 2>"$T/console.txt"
line=$(grep -o '<pre id="gpuprobe-check">[^<]*' "$T/dom.html" | sed 's/.*>//')
echo "$line"
n=$(grep -o '<svg ' "$T/compare.html" | wc -l)
[ "$n" -ge 2 ] || fail "expected the overlaid sweeps and per-SM maps, the page has $n plots"
[ "$line" = "gpuprobe-check: $n of $n plots drawn" ] || fail "expected $n of $n plots drawn, got: ${line:-no result}"
grep -q "L2: the two sweeps at its page stride" "$T/compare.html" || fail "no overlay for L2, whose penalty differs"
grep -q "miss penalty per SM" "$T/compare.html" || fail "no per-SM map"
if grep -E 'CONSOLE|Uncaught' "$T/console.txt"; then
  fail "the page wrote to the console"
fi
if [ -n "$shot" ]; then
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1400,2600 --screenshot="$shot" "file://$T/compare.html" >/dev/null 2>&1
  [ -s "$shot" ] || fail "no screenshot"
  echo "screenshot: $shot"
fi
echo "PASSED: $n plots drawn, no console error"
