#!/usr/bin/env bash
# The report as a person sees it: `gpuprobe report` draws a committed results folder, headless
# Chromium opens a copy of its index.html at 1400 px with a checker appended (every <img> complete
# with a non-zero natural size, nothing wider than the page), and the test fails on a figure that
# did not load, on a horizontal scroll or on any console error. It also takes a screenshot of the first screen. Exit 77 (skipped) with the reason where
# no Chromium or matplotlib exists. Usage: report_in_browser_test.sh GPUPROBE SOURCE_DIR [SHOT.png]
set -uo pipefail
bin="$1" src="$2" shot="${3:-}"
source "$(dirname "$0")/common.sh" browser
python3 -c 'import matplotlib' 2>/dev/null || skip "no matplotlib to draw the figures"
"$bin" report --input "$src/reports/examples/runs/nvidia-h100-80gb-hbm3-bba9cd54" --out "$T/report" \
  --plot-script "$src/reports/plot.py" >"$T/report.txt" 2>&1 || { cat "$T/report.txt"; fail "gpuprobe report"; }
n=$(grep -o '<img ' "$T/report/index.html" | wc -l)
[ "$n" -gt 0 ] || fail "the page has no figure"
cp "$T/report/index.html" "$T/report/checked.html"
cat >>"$T/report/checked.html" <<'JS'
<script>
window.addEventListener("load", () => {
  const imgs = [...document.images];
  const bad = imgs.filter(i => !i.complete || i.naturalWidth === 0 || i.naturalHeight === 0);
  const out = document.createElement("pre");
  out.id = "gpuprobe-check";
  // At 1400 px nothing may stick out to the right (a horizontal scroll bar).
  const wide = [...document.body.querySelectorAll("*")]
    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1);
  out.textContent = "gpuprobe-check: " + (imgs.length - bad.length) + " of " + imgs.length +
                    " figures loaded" + bad.map(i => "; not loaded: " + i.alt).join("") +
                    (wide.length ? "; wider than the page: " + wide.slice(0, 3).map(e => e.tagName + " " +
                     Math.round(e.getBoundingClientRect().right) + " px").join(", ") : "");
  document.body.appendChild(out);
});
</script>
JS
check_page "$T/report/checked.html"
[ "$line" = "gpuprobe-check: $n of $n figures loaded" ] || fail "expected all $n figures loaded, got: ${line:-no result}"
[ -z "$shot" ] || screenshot "$T/report/index.html" "$shot" 900
echo "PASSED: $n figures loaded, no console error"
