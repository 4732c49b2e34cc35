#!/usr/bin/env python3
"""docs/results.md, the one page of measured figures, written from the committed runs.

Reads every results folder under reports/examples/ (the curated runs, one build of one commit)
and tests/fixtures/runs/ (older runs kept for the tests): profile.json, tuning.json,
validation.json; writes, per GPU model, each unit's TLB hierarchy (entries x what one entry
covers, ways x sets, miss penalty, sharing) and the wall time of each stage that folder records;
then, per GPU model, the peer allocators' times from tests/fixtures/peers/ (gpuprobe-bench
BM_peers files).
A value a file does not hold reads "—". Nothing on the page is typed by hand: edit this script
or the runs, then run it again.

Usage: python3 dev/results_page.py            # writes docs/results.md
       python3 dev/results_page.py --check    # exit 1 when docs/results.md differs
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = ["reports/examples/runs", "tests/fixtures/runs"]
PEERS = "tests/fixtures/peers"
PAGE = os.path.join(ROOT, "docs", "results.md")


def read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def size(b):
    """Bytes as the CLI prints them: 32 MiB, 64 GiB."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            v = b / scale
            return ("%d %s" % (v, unit)) if v == int(v) else ("%.2f %s" % (v, unit))
    return "%d B" % b


def number(x, fmt="%.0f"):
    return fmt % x if isinstance(x, (int, float)) and not isinstance(x, bool) else "—"


def level_cell(level):
    entries, page = level.get("entries"), level.get("coverage_bytes", level.get("page_bytes"))
    text = number(entries) + " x " + (size(page) if isinstance(page, (int, float)) else "—")
    if isinstance(level.get("ways"), (int, float)) and isinstance(level.get("sets"), (int, float)):
        text += ", " + ("fully associative" if level["sets"] == 1 else
                        "%s x %s" % (number(level["ways"]), number(level["sets"])))
    text += ", +" + number(level.get("miss_penalty_cycles"))
    scope = (level.get("sharing") or {}).get("scope")
    return text + (", " + scope if scope else "")


def seconds(doc):
    return number((doc or {}).get("wall_seconds")) + " s" if doc else "—"


def units():
    out = []
    for root in RUNS:
        for name in sorted(os.listdir(os.path.join(ROOT, root))):
            folder = os.path.join(ROOT, root, name)
            profile = read(os.path.join(folder, "profile.json"))
            if not os.path.isdir(folder) or not profile:
                continue
            device = profile.get("device", {})
            levels = (profile.get("tlb") or {}).get("levels", [])
            out.append({
                "model": device.get("name", "—"),
                "unit": device.get("uuid", "—")[:12],
                "folder": root + "/" + name,
                "mode": "quick" if profile.get("quick") else "full",
                "commit": (profile.get("meta") or {}).get("git_commit", "—"),
                "levels": [level_cell(l) for l in levels],
                "times": [seconds(profile), seconds(read(os.path.join(folder, "tuning.json"))),
                          seconds(read(os.path.join(folder, "validation.json")))],
            })
    return out


def peers():
    """{model: {allocator: {state: median ms}}} of BM_peers at 16 B and 131,072 threads, and the
    units and commits they came from."""
    table, source = {}, {}
    root = os.path.join(ROOT, PEERS)
    for unit in sorted(os.listdir(root)):
        raw = os.path.join(root, unit, "raw")
        if not os.path.isdir(raw):
            continue
        for f in sorted(os.listdir(raw)):
            doc = read(os.path.join(raw, f))
            if not doc or "benchmarks" not in doc:
                continue
            ctx = doc.get("context", {})
            model = ctx.get("gpu") or unit.rsplit("-", 1)[0]
            for b in doc["benchmarks"]:
                parts = dict(p.split(":", 1) for p in b.get("name", "").split("/")[2:] if ":" in p)
                if not b.get("name", "").startswith("BM_peers/") or b.get("run_type") == "aggregate":
                    continue
                if parts.get("size") != "16" or parts.get("threads") != "131072":
                    continue
                alloc = b["name"].split("/")[1]
                table.setdefault(model, {}).setdefault(alloc, {}).setdefault(parts.get("state", "—"), []).append(b["real_time"])
                source.setdefault(model, set()).add("%s (%s)" % (unit, ctx.get("gpuprobe_commit", "—")))
    return table, source


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def page():
    rows = units()
    lines = ["# Measured results", "",
             "Written by `dev/results_page.py` from the runs committed under "
             "`reports/examples/` (the curated examples) and `tests/fixtures/runs/` (older runs "
             "kept for the tests); do not edit by hand. Each row is one run: its TLB levels "
             "(entries x what one entry covers, ways x sets, miss penalty in SM cycles, who "
             "shares the level) and the wall time of characterize, tune and validate as the run "
             "recorded them. A value the run's files do not hold reads \"—\". A profile belongs "
             "to its unit: penalties and SM groups differ between units of one model.", ""]
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        depth = max(len(r["levels"]) for r in mine)
        lines += ["## " + model, "",
                  "| unit | mode | " + " | ".join("L%d" % (k + 1) for k in range(depth)) +
                  " | characterize | tune | validate | analysed by | folder |",
                  "|" + "---|" * (depth + 7)]
        for r in mine:
            cells = r["levels"] + ["—"] * (depth - len(r["levels"]))
            lines.append("| " + " | ".join([r["unit"], r["mode"]] + cells + r["times"] +
                                           [r["commit"], "`" + r["folder"] + "`"]) + " |")
        lines.append("")
    table, source = peers()
    if table:
        lines += ["## Peer allocators", "",
                  "gpuprobe-bench `BM_peers` at 16-byte requests and 131,072 threads: the median "
                  "time in ms of one round of every thread's request, by heap state (`empty`: a "
                  "fresh heap; `churn`: after rounds of allocations and frees), from the peer "
                  "folders committed for the tests (`%s/`)." % PEERS, ""]
        for model in sorted(table):
            states = sorted({s for a in table[model].values() for s in a})
            lines += ["### " + model, "", "From " + ", ".join(sorted(source[model])) + ".", "",
                      "| allocator | " + " | ".join(states) + " |", "|" + "---|" * (len(states) + 1)]
            for alloc in sorted(table[model]):
                lines.append("| " + alloc + " | " + " | ".join(
                    "%.4g" % median(table[model][alloc][st]) if st in table[model][alloc] else "—"
                    for st in states) + " |")
            lines.append("")
    return "\n".join(lines)


def main():
    text = page()
    if sys.argv[1:] == ["--check"]:
        try:
            with open(PAGE) as f:
                same = f.read() == text
        except OSError:
            same = False
        if not same:
            print("docs/results.md is not what dev/results_page.py writes: run it again",
                  file=sys.stderr)
        return 0 if same else 1
    with open(PAGE, "w") as f:
        f.write(text)
    print("docs/results.md: %d units" % len(units()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
