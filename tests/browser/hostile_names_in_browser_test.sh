#!/usr/bin/env bash
# Issue 44: a page whose names carry script payloads runs no script and stays whole. A committed
# H100 run is copied; every file's device name, a workload name and a raw/ file name are set to
# payloads (an attribute break-out, a <script>, an <img onerror>, a single-quote break-out, an
# <svg onload>, matplotlib math syntax, a comma, quotes, a newline); `gpuprobe report` draws it
# (HTML and Markdown); headless Chromium opens the page with a checker appended, which fails
# when any payload ran (window.__pwned set, the title changed), when the page is not whole (its
# last heading "Inputs" missing, a figure not loaded) or when the device line is not shown as the
# text it is. Exit 77 (skipped) where no Chromium or matplotlib exists.
# Usage: hostile_names_in_browser_test.sh GPUPROBE SOURCE_DIR
set -uo pipefail
bin="$1" src="$2"
source "$(dirname "$0")/common.sh" hostile-browser
python3 -c 'import matplotlib' 2>/dev/null || skip "no matplotlib to draw the figures"
run="$src/tests/fixtures/runs/nvidia-h100-80gb-hbm3-bba9cd54"
mkdir -p "$T/in/raw"
cp "$run"/profile.json "$run"/tuning.json "$run"/validation.json "$T/in/"
cp "$run"/raw/tlb.json "$run"/raw/atomics.json "$run"/raw/sharing_L1.json "$T/in/raw/"
# A raw file name that breaks out of an attribute if quotes are not escaped.
cp "$run/raw/sharing_L2.json" "$T/in/raw/sharing_L2 \" onload=\"window.__pwned='file' x.json"
python3 - "$T/in" <<'PY' || fail "could not plant the payloads"
import glob, json, os, sys
d = sys.argv[1]
name = ("\" onload=\"window.__pwned='attr' x=\" <script>window.__pwned='script'</script> "
        "<img src=x onerror=\"window.__pwned='img'\"> ' onmouseover='window.__pwned=4' "
        "<svg onload=window.__pwned='svg'></svg> $\\x{$ NVIDIA H100, PCIe \"q\"\nline")
for f in glob.glob(os.path.join(d, "*.json")) + glob.glob(os.path.join(d, "raw", "*.json")):
    doc = json.load(open(f))
    doc["device"]["name"] = name
    if f.endswith("validation.json"):
        doc["workloads"][0]["workload"] = "<script>window.__pwned='workload'</script>, \"w\"\n2"
    json.dump(doc, open(f, "w"))
open(os.path.join(d, "payload.txt"), "w").write(name)
PY
"$bin" report --input "$T/in" --out "$T/report" --plot-script "$src/reports/plot.py" >"$T/report.txt" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$T/report.txt"; fail "gpuprobe report exited $rc"; }
# The Markdown page's text is what is checked here: the tests' stand-in plotter draws its figures.
"$bin" report --input "$T/in" --out "$T/report-md" --format md --plot-script "$src/tests/tools/stub_plot.py" >/dev/null 2>&1 ||
  fail "gpuprobe report --format md"
if grep -nE '<(script|img|svg)' "$T/report-md/index.md"; then fail "raw HTML in index.md"; fi
n=$(grep -o '<img ' "$T/report/index.html" | wc -l)
[ "$n" -gt 3 ] || fail "the page has $n figures"
add_checker "$T/report/index.html" "$T/report/checked.html" <<'JS'
  const imgs = [...document.images];
  const bad = imgs.filter(i => !i.complete || i.naturalWidth === 0);
  const heads = [...document.querySelectorAll("h2")].map(h => h.textContent);
  return "pwned=" + (window.__pwned === undefined ? "none" : window.__pwned) +
    " title=" + document.title + " last=" + heads[heads.length - 1] +
    " loaded=" + (imgs.length - bad.length) + "/" + imgs.length +
    " device=" + JSON.stringify(document.querySelector("p").textContent);
JS
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --allow-file-access-from-files
       --window-size=1400,900 --virtual-time-budget=15000)
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$T/report/checked.html" >"$T/dom.html" 2>/dev/null
line=$(python3 - "$T/dom.html" <<'PY'
import html, re, sys
m = re.search(r'<pre id="gpuprobe-check">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
print(html.unescape(m.group(1)) if m else "no result")
PY
)
echo "$line"
case "$line" in
  "pwned=none title=gpuprobe report last=Inputs loaded=$n/$n device="*) ;;
  *) fail "a payload ran, or the page is not whole: $line" ;;
esac
# the device line starts with the name, shown as text (the newline as it is)
python3 - "$line" "$T/in/payload.txt" <<'PY' || fail "the device name is not shown as the text it is"
import json, sys
shown = json.loads(sys.argv[1].split(" device=", 1)[1])
name = open(sys.argv[2]).read()
assert shown.startswith(name), (shown[:120], name[:120])
PY
echo "PASSED: 6 payloads in names, none ran; $n of $n figures, the page whole; index.md has no raw HTML"
