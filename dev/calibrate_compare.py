#!/usr/bin/env python3
"""compare's validation bars, and tune's CRW tie, from measured run-to-run spread (issue 47).

Reads every validation.json of a full run in the device-round archives or results folders given
(default: what tests/fixtures/validation_pairs.json lists; an archive that left the working tree is
read back from git at EVIDENCE_COMMIT, docs/evidence.md), pairs the runs of one unit (same GPU
UUID), and for each validation row ("workload on pool") collects |B/A - 1| of the tuned medians,
the larger of the two orientations, by GPU model and pooled over models. compare derives each
row's bar and, for a row that takes two values from run to run, its step from these pairs
(analysis::spread_of_pairs). Reads every tuning.json's CRW placement measurements too. Writes:
  tests/fixtures/validation_pairs.json  every pair's value per model and row
  findings/validation_spread.inc        the same, as C++ initializers
  tests/fixtures/crw_placements.json    every run's CRW times (the test holds tune's tie past them)
Usage: python3 dev/calibrate_compare.py [ARCHIVE | COMMIT:PATH | FOLDER ...]
"""
import io
import itertools
import json
import os
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EVIDENCE_COMMIT = "07bd0bcc55"  # the last commit whose tree holds the round archives


def open_archive(path):
    """A tar archive from a file, or from git's object store when given as COMMIT:PATH."""
    if os.path.exists(path) or ":" not in path:
        return tarfile.open(path)
    blob = subprocess.run(["git", "-C", ROOT, "show", path], check=True, capture_output=True).stdout
    return tarfile.open(fileobj=io.BytesIO(blob))


def display_name(path):
    """The archive's path as the fixture records it: relative to the repository, no commit."""
    return path.split(":", 1)[1] if ":" in path and not os.path.exists(path) else os.path.relpath(path, ROOT)


def documents(path, filename):
    """(name, document) of every `filename` (validation.json, tuning.json) in an archive, a
    COMMIT:PATH archive, or a folder tree of results folders."""
    if os.path.isdir(path):
        for d, _, files in sorted(os.walk(path)):
            if filename in files:
                with open(os.path.join(d, filename)) as f:
                    yield os.path.relpath(os.path.join(d, filename), ROOT), json.load(f)
        return
    with open_archive(path) as t:
        for m in t.getmembers():
            if m.isfile() and m.name.endswith("/" + filename):
                yield os.path.basename(path) + ":" + m.name, json.load(io.TextIOWrapper(t.extractfile(m)))


def runs_of(archives):
    """Every full run's validation rows (a quick run validates fewer workloads, fewer times: its
    drift is another method's), with its GPU model and unit."""
    for path in archives:
        for name, v in documents(path, "validation.json"):
            if "--quick" in v.get("meta", {}).get("argv", []):
                continue
            rows = {w["workload"] + " on " + w["pool"]: w["median_tuned_ms"]
                    for w in v.get("workloads", [])
                    if w.get("measured") and w.get("median_tuned_ms")}
            yield v["device"].get("name", ""), v["device"]["uuid"], name, rows


def crw_runs(archives):
    """Every tuning.json's CRW placement times, once per distinct measurement."""
    seen = set()
    for path in archives:
        for name, d in documents(path, "tuning.json"):
            c = d.get("decisions", {}).get("crw_placement") or {}
            pts = [[p["start"], p["free_fraction"], p["ms"]] for p in c.get("measurements", [])]
            key = json.dumps(pts)
            if pts and key not in seen:  # a run copied into two archives counts once
                seen.add(key)
                yield {"run": name, "gpu": d.get("device", {}).get("name", ""), "points": pts}


def main():
    if sys.argv[1:]:
        archives = sys.argv[1:]
    else:
        with open(os.path.join(ROOT, "tests/fixtures/validation_pairs.json")) as f:
            archives = [a if os.path.exists(os.path.join(ROOT, a)) else EVIDENCE_COMMIT + ":" + a
                        for a in json.load(f)["archives"]]
    by_unit = {}
    for model, uuid, name, rows in runs_of(archives):
        by_unit.setdefault((model, uuid), []).append((name, rows))
    pairs = {}  # model -> row -> every pair's |B/A - 1|; model "" pools every model
    npairs = 0
    for (model, uuid), runs in sorted(by_unit.items()):
        for (na, a), (nb, b) in itertools.combinations(sorted(runs), 2):
            npairs += 1
            for k in sorted(a):
                if k in b:
                    r = b[k] / a[k]
                    d = round(max(abs(r - 1), abs(1 / r - 1)), 6)
                    for m in (model, ""):
                        pairs.setdefault(m, {}).setdefault(k, []).append(d)
    fixture = {"archives": [display_name(a) for a in archives], "units": len(by_unit),
               "pairs": npairs, "rows": pairs}
    with open(os.path.join(ROOT, "tests/fixtures/validation_pairs.json"), "w") as f:
        json.dump(fixture, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(ROOT, "findings/validation_spread.inc"), "w") as f:
        f.write("// Generated by dev/calibrate_compare.py from %d pairs of full runs of %d units; do not\n"
                "// edit. {GPU model (\"\": every model), row, each pair's |B/A - 1|}\n"
                % (npairs, len(by_unit)))
        for m in sorted(pairs):
            for k, v in sorted(pairs[m].items()):
                f.write("{%s, %s, {%s}},\n" % (json.dumps(m), json.dumps(k), ", ".join("%g" % x for x in v)))
    crw = list(crw_runs(archives))
    with open(os.path.join(ROOT, "tests/fixtures/crw_placements.json"), "w") as f:
        json.dump({"archives": fixture["archives"], "runs": crw}, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%d units, %d pairs of full runs, %d models, %d rows; %d CRW placement runs" % (len(by_unit), npairs, len(pairs) - 1, len(pairs.get("", {})), len(crw)))


if __name__ == "__main__":
    main()
