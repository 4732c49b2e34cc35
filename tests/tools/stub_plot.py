#!/usr/bin/env python3
"""The tests' stand-in for reports/plot.py where a test checks the page, not its images: reads
FIG_DIR/manifest.json as plot.py does and writes each figure as a valid 1 x 1 PNG and an empty
SVG, and an empty not_drawn.json; no matplotlib (a report's drawing costs 2-8 s, this 30 ms).
Tests of the images themselves, and of what plot.py refuses, run plot.py."""
import base64
import json
import os
import sys

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>\n'


def figures(d):
    """FIG_DIR's figures as plot.py reads them; a manifest it cannot read ends the run, in one line."""
    try:
        with open(os.path.join(d, "manifest.json")) as f:
            return json.load(f)["figures"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"stub_plot.py: {e}")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: stub_plot.py FIG_DIR")
    for spec in figures(sys.argv[1]):
        stem = os.path.join(sys.argv[1], os.path.basename(str(spec["id"])))
        with open(stem + ".png", "wb") as f:
            f.write(PNG)
        with open(stem + ".svg", "w") as f:
            f.write(SVG)
    with open(os.path.join(sys.argv[1], "not_drawn.json"), "w") as f:
        json.dump({}, f)


if __name__ == "__main__":
    main()
