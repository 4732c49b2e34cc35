#!/usr/bin/env bash
# The report as a person sees it: `gpuprobe report` draws a committed results folder, headless
# Chromium opens a copy of its index.html at 1400 px with a checker appended (every <img> complete
# with a non-zero natural size, nothing wider than the page), and the test fails on a figure that
# did not load, on a horizontal scroll, on a contents link with no part to go to, on a part with
# no heading or no table before its figures, or on any console error. It also takes screenshots of
# the first screen and of the TLB part. Exit 77 (skipped) with the reason where no Chromium or
# matplotlib exists.
# Usage: report_in_browser_test.sh GPUPROBE SOURCE_DIR [SHOT.png [TLB_SHOT.png]]
# (UNIT: the committed run folder under reports/examples/runs, default the curated H200 run)
set -uo pipefail
bin="$1" src="$2" shot="${3:-}" tlb_shot="${4:-}"
unit="${UNIT:-nvidia-h200-bc72dbee}"
source "$(dirname "$0")/common.sh" browser
python3 -c 'import matplotlib' 2>/dev/null || skip "no matplotlib to draw the figures"
"$bin" report --input "$src/reports/examples/runs/$unit" --out "$T/report" \
  --plot-script "$src/reports/plot.py" >"$T/report.txt" 2>&1 || { cat "$T/report.txt"; fail "gpuprobe report"; }
n=$(grep -o '<img ' "$T/report/index.html" | wc -l)
[ "$n" -gt 0 ] || fail "the page has no figure"
add_checker "$T/report/index.html" "$T/report/checked.html" <<'JS'
  const imgs = [...document.images];
  const bad = imgs.filter(i => !i.complete || i.naturalWidth === 0 || i.naturalHeight === 0);
  // At 1400 px nothing may stick out to the right (a horizontal scroll bar): `wide`.
  // The contents: every link goes to a part; each part has its heading, and a part with a table
  // and figures gives its table first (the values beside the curves they come from).
  const lost = [...document.querySelectorAll("#contents a")]
    .filter(a => !document.querySelector(a.getAttribute("href"))).map(a => a.textContent);
  const order = [...document.querySelectorAll("section[id^=part-]")].filter(s => {
    const t = s.querySelector("table, h3"), f = s.querySelector("figure");
    return !s.querySelector("h2") || (t && f && (t.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_PRECEDING));
  }).map(s => s.id);
  return "gpuprobe-check: " + (imgs.length - bad.length) + " of " + imgs.length +
         " figures loaded" + bad.map(i => "; not loaded: " + i.alt).join("") +
         (lost.length ? "; contents links to nothing: " + lost.join(", ") : "") +
         (order.length ? "; parts without a heading or table first: " + order.join(", ") : "") +
         (wide.length ? "; wider than the page: " + wide.slice(0, 3).map(e => e.tagName + " " +
          Math.round(e.getBoundingClientRect().right) + " px").join(", ") : "");
JS
check_page "$T/report/checked.html"
[ "$line" = "gpuprobe-check: $n of $n figures loaded" ] || fail "expected all $n figures loaded, got: ${line:-no result}"
grep -q '<nav id="contents">' "$T/report/index.html" || fail "the page has no contents list"
grep -q '<section id="part-tlb">' "$T/report/index.html" || fail "the page has no TLB part"
[ -z "$shot" ] || screenshot "$T/report/index.html" "$shot" 900
if [ -n "$tlb_shot" ]; then # the TLB part alone: everything else hidden
  sed 's|</head>|<style>body > *:not(#part-tlb){display:none}</style></head>|' "$T/report/index.html" \
    >"$T/report/tlb_part.html"
  screenshot "$T/report/tlb_part.html" "$tlb_shot" 1400
fi
echo "PASSED: $n figures loaded, no console error"
