#!/usr/bin/env bash
# The screenshots beside the curated examples (README, reports/examples/README.md): the first
# screen of the run's report, of the compare page and of the fleet's report, in headless
# Chromium, reduced to 64 colours. Usage: dev/screenshots.sh [GPUPROBE] (default build/gpuprobe)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="${1:-build/gpuprobe}"
ex=reports/examples
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
shot() { # PAGE PNG
  chromium --headless=new --disable-gpu --no-sandbox --hide-scrollbars --window-size=1280,1500 \
    --screenshot="$2" "file://$(realpath "$1")" >/dev/null 2>&1
  python3 -c 'import sys; from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
im.save(sys.argv[1], optimize=True)' "$2"
}
"$bin" report --input "$ex/runs/nvidia-h200-bc72dbee" --out "$T/run" >/dev/null
shot "$T/run/index.html" "$ex/runs/nvidia-h200-bc72dbee/report_first_screen.png"
shot "$ex/compare/compare.html" "$ex/compare/compare_screen.png"
"$bin" report --input "$ex/fleet/units/fleet" --out "$T/fleet" >/dev/null
shot "$T/fleet/index.html" "$ex/fleet/fleet_screen.png"
ls -l "$ex"/runs/*/report_first_screen.png "$ex"/compare/compare_screen.png "$ex"/fleet/fleet_screen.png
