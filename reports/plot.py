#!/usr/bin/env python3
"""Draws the figures of `gpuprobe report`: reads FIG_DIR/manifest.json and each figure's CSV,
writes <id>.png and <id>.svg beside them. Kinds: "lines" (csv: series,style,x,y; style is
points | line | dashed | dotted), "heatmap" (csv: first row = column labels, then the
matrix; `boxes` = [first, last] index ranges outlined), "forest" (csv: label,ratio,low,high,
verdict: one interval per row, a line at 1), "groupmap" (csv: unit,<SM ids>, then a row per
unit whose cells are each SM's sharing group), "per_sm" (csv: sm,group,baseline,penalty: bars
by group and dots on a second axis) and "per_sm_penalty" (the same csv: a TLB level's hit and
miss penalty per SM), "sm_grid" (the same csv: one row per sharing group, a cell per SM coloured
by its miss penalty, and the penalties' distribution beside) and "small_multiples" (a "lines" csv
drawn 4 measured series a panel), "spread" (csv: model,unit,value: a point per unit, named on the x
axis). Every text from data is drawn with math parsing off,
so "$" and "\\" are drawn as they are. A figure that cannot be drawn (a ragged matrix, a value
that is no number) is left out: its id and the reason go to FIG_DIR/not_drawn.json, the others
are drawn, exit 0. Exit 1 with one line when the manifest itself cannot be read."""
import csv
import json
import math
import os
import re
import signal
import sys
from collections import OrderedDict

# Ctrl-C or SIGTERM ends the plotter quietly: gpuprobe, which started it, says the one line.
for _sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_sig, signal.SIG_DFL)

os.environ.pop("MPLBACKEND", None)  # ours is Agg: a bogus value in the caller's environment must not stop the import
import matplotlib  # noqa: E402

matplotlib.use("Agg")
matplotlib.rcParams["text.usetex"] = False
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


def plain(texts):
    """Text from data (names, titles, labels) is drawn as it is: "$\\x{$" is text, not TeX. The
    axes' own number formatters keep their math (log ticks are $10^{k}$)."""
    for t in texts:
        t.set_parse_math(False)


SUPERSCRIPT = str.maketrans("0123456789-\u2212", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b\u207b")


class UnicodeLog(matplotlib.ticker.Formatter):
    """A log axis's tick labels as plain text with Unicode superscripts (2¹⁰, 5×10³): the same
    labels as matplotlib's math ones ($\\mathdefault{2^{10}}$), without the math parser, which took
    a third of a figure's time. A label it cannot rewrite keeps its math."""

    def __init__(self, inner):
        self.inner = inner

    def set_axis(self, axis):
        super().set_axis(axis)
        self.inner.set_axis(axis)

    def set_locs(self, locs):
        self.inner.set_locs(locs)

    def __call__(self, x, pos=None):
        s = self.inner(x, pos)
        m = re.fullmatch(r"\$\\mathdefault\{(.*)\}\$", s)
        if not m:
            return s
        t = m.group(1).replace("\\times", "\u00d7")
        t = re.sub(r"\^\{([-\u2212]?\d+)\}", lambda e: e.group(1).translate(SUPERSCRIPT), t)
        return s if re.search(r"[\\${}^]", t) else t


def log_axis(axis):
    """Plain-text labels on a log axis (UnicodeLog), major and minor."""
    axis.set_major_formatter(UnicodeLog(axis.get_major_formatter()))
    axis.set_minor_formatter(UnicodeLog(axis.get_minor_formatter()))


def number(v, path):
    """A CSV cell as a finite number, else a one-line ValueError naming the file."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{os.path.basename(path)}: {v!r} is not a number")
    if not math.isfinite(x):
        raise ValueError(f"{os.path.basename(path)}: {v!r} is not a finite number")
    return x

STYLES = {"points": dict(linestyle="none", marker="o", markersize=3),
          "line": dict(linestyle="-", linewidth=1),
          "dashed": dict(linestyle="--", linewidth=1),
          "dotted": dict(linestyle=":", linewidth=1.5),
          "flag": dict(linestyle="none", marker="x", markersize=8, markeredgewidth=1.5)}
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "*"]
DASHES = ["-", "--", "-.", ":"]


def series_colors(bases):
    """One distinct look per base series: 10 colours, then (beyond 10) a sequential colour map
    so neighbours in order (strides, thread counts) stay neighbours in colour."""
    n = len(bases)
    if n <= 10:
        return {b: f"C{i}" for i, b in enumerate(bases)}
    cmap = plt.get_cmap("viridis" if n > 20 else "tab20")
    return {b: cmap(i / max(1, n - 1) if n > 20 else i) for i, b in enumerate(bases)}


def read_series(path):
    series = OrderedDict()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            series.setdefault((r["series"], r["style"]), ([], []))
            series[(r["series"], r["style"])][0].append(number(r["x"], path))
            series[(r["series"], r["style"])][1].append(number(r["y"], path))
    if not series:
        raise ValueError(f"{path}: no data rows")
    return series


def base_of(name):
    """A measured series and its fit / model / theory share a colour and a panel."""
    for suffix in (" theory", " fit", " queue model"):
        name = name.split(suffix)[0]
    return name


def lines(fig, ax, spec, path):
    """One axes of every series; kind "small_multiples": panels of 4 measured series each (a colour
    each, its fit and model in its colour, one legend entry a series) on shared axes instead."""
    series = read_series(path)
    bases = list(OrderedDict.fromkeys(base_of(n) for (n, st) in series if st != "flag"))
    if spec.get("kind") == "small_multiples":
        return panels(fig, ax, spec, series, bases, 4)
    draw_series(ax, spec, series, bases)
    return False


def panels(fig, ax, spec, series, bases, k):
    n = (len(bases) + k - 1) // k
    cols = 2 if n > 1 else 1
    rows = (n + cols - 1) // cols
    fig.delaxes(ax)
    fig.set_size_inches(12, 3.6 * rows + 0.8)
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False).flatten()
    for i, pax in enumerate(axes):
        if i >= n:
            pax.set_visible(False)
            continue
        mine = bases[i * k:(i + 1) * k]
        draw_series(pax, spec, OrderedDict((key, v) for key, v in series.items()
                                           if base_of(key[0]) in mine or key[1] == "flag"), mine, compact=True)
        plain([pax.set_xlabel(spec["xlabel"]), pax.set_ylabel(spec["ylabel"])])
    plain([fig.suptitle(spec["title"] + f" ({len(bases)} series, {k} a panel)", fontsize=9)])
    return True


def draw_series(ax, spec, series, bases, compact=False):
    """`compact` (a panel): one legend entry a measured series, the fits' and models' line styles
    said once, the legend inside the panel."""
    colors = series_colors(bases)
    many = len(bases) > 10
    for (name, style), (x, y) in series.items():
        base = base_of(name)
        k = bases.index(base) if base in bases else 0
        look = dict(STYLES.get(style, STYLES["line"]))
        if style == "flag":
            look["color"] = "red"
        else:
            look["color"] = colors[base]
            if many and style == "line":  # beyond 10 series colour alone does not tell them apart
                look["linestyle"] = DASHES[k % len(DASHES)]
            if many and style == "points":
                look["marker"] = MARKERS[k % len(MARKERS)]
        xy = sorted(zip(x, y))
        # Beyond 10 series a model's line shares its measurement's colour and one legend entry
        # says what dashed means: half the legend, every entry readable.
        label = "_nolegend_" if (many or compact) and name != base else name
        ax.plot([p[0] for p in xy], [p[1] for p in xy], label=label, **look)
    if compact:
        for style, what in (("dashed", "fit"), ("dotted", "queue model")):
            if any(st == style for (n, st) in series):
                ax.plot([], [], color="grey", label=what, **STYLES[style])
    if many and any(n != base_of(n) for (n, st) in series):
        ax.plot([], [], color="grey", linestyle="--", linewidth=1, label="dashed: its model / fit")
    if many and any("p = M/A" in n for (n, st) in series):
        ax.plot([], [], color="grey", linestyle=":", linewidth=1.5, label="dotted: CRW, Eq. 9 with p = M/A of the occupancy")
    for v in spec.get("vlines", []):
        ax.axvline(v["x"], color="grey", linestyle="--", linewidth=0.8)
        plain([ax.annotate(v["label"], (v["x"], 1), xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right", fontsize=7)])
    if spec.get("logx"):
        ax.set_xscale("log", base=2)
        log_axis(ax.xaxis)
    if spec.get("logy"):
        ax.set_yscale("log")
        log_axis(ax.yaxis)
    if compact:
        plain(ax.legend(fontsize=7, loc="best").get_texts())
        return
    # Beside the axes, never over the data.
    plain(ax.legend(fontsize=8, ncol=2 if len(series) > 24 else 1, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0).get_texts())


def group_ticks(boxes, n):
    """Ticks labelled with SM ids: at the first SM of every group where there are at least four
    groups (the labels follow the group structure), else about 24 evenly spaced; and the words the
    axis label adds to say which."""
    starts = sorted({lo for lo, hi in boxes if 0 <= lo < n})
    if len(starts) >= 4:
        return starts, " (ticks: the first SM of each sharing group)"
    return list(range(0, n, max(1, n // 24))), " (ticks: SM ids)"


def heatmap(fig, ax, spec, path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        raise ValueError(f"{path}: no matrix")
    labels = rows[0]
    m = [[number(v, path) for v in r] for r in rows[1:]]
    if any(len(r) != len(labels) for r in m):
        raise ValueError(f"{os.path.basename(path)}: a row is not {len(labels)} cells long (a ragged matrix)")
    fig.set_size_inches(8, 7)
    im = ax.imshow(m, cmap="viridis", interpolation="nearest")
    fig.colorbar(im, ax=ax, label="cycles above reference")
    boxes = spec.get("boxes", [])
    ticks, which = group_ticks(boxes, len(labels))
    ax.set_xticks(ticks, [labels[t] for t in ticks], fontsize=6, rotation=90)
    ax.set_yticks(ticks, [labels[t] for t in ticks], fontsize=6)
    plain(ax.get_xticklabels() + ax.get_yticklabels())
    plain([ax.set_xlabel(spec["xlabel"] + which)])
    for lo, hi in boxes:
        ax.add_patch(plt.Rectangle((lo - 0.5, lo - 0.5), hi - lo + 1, hi - lo + 1, fill=False, edgecolor="red", linewidth=1))


VERDICT_COLORS = {"faster": "C2", "slower": "C3"}


def forest(fig, ax, spec, path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path}: no data rows")
    fig.set_size_inches(10, max(3.0, 0.3 * len(rows) + 1.2))
    for i, r in enumerate(rows):
        x, lo, hi = (number(r[k], path) for k in ("ratio", "low", "high"))
        ax.errorbar([x], [i], xerr=[[x - lo], [hi - x]], fmt="o", markersize=3, capsize=2,
                    color=VERDICT_COLORS.get(r["verdict"], "grey"))
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [r["label"] for r in rows], fontsize=8)
    plain(ax.get_yticklabels())
    ax.invert_yaxis()
    handles = [plt.Line2D([], [], color=c, marker="o", linestyle="none", label=v) for v, c in
               list(VERDICT_COLORS.items()) + [("no significant difference", "grey")]]
    ax.legend(handles=handles, fontsize=8)


def groupmap(fig, ax, spec, path):
    """Rows: units; columns: SM ids; colour: the sharing group an SM belongs to (-1: none)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        raise ValueError(f"{path}: no units")
    sms = rows[0][1:]
    units = [r[0] for r in rows[1:]]
    m = [[number(v, path) for v in r[1:]] for r in rows[1:]]
    if any(len(r) != len(sms) for r in m):
        raise ValueError(f"{os.path.basename(path)}: a unit's row is not {len(sms)} SMs long")
    fig.set_size_inches(10, max(2.0, 0.35 * len(units) + 1.2))
    masked = [[v if v >= 0 else float("nan") for v in r] for r in m]
    ax.imshow(masked, cmap="tab20", interpolation="nearest", aspect="auto")
    step = max(1, len(sms) // 22)
    ax.set_xticks(range(0, len(sms), step), [sms[t] for t in range(0, len(sms), step)], fontsize=6)
    ax.set_yticks(range(len(units)), units, fontsize=7)
    plain(ax.get_xticklabels() + ax.get_yticklabels())


def per_sm(fig, ax, spec, path, dots="rise, itself the disruptor (cycles per hop)"):
    """Bars: each SM's latency with no disruptor, coloured by its sharing group; dots: its rise
    with itself as the disruptor ("per_sm_penalty": a TLB level's hit and miss penalty per SM,
    from the tlb-per-sm probe)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path}: no SMs")
    base = [number(r["baseline"], path) for r in rows]
    pen = [number(r["penalty"], path) for r in rows]
    group = [int(number(r["group"], path)) for r in rows]
    fig.set_size_inches(max(8.0, 0.09 * len(rows) + 2), 5)
    cmap = plt.get_cmap("tab20")
    ax.bar(range(len(rows)), base, width=0.85,
           color=[cmap(g % 20) if g >= 0 else "lightgrey" for g in group])
    lo, hi = min(base), max(base)
    ax.set_ylim(lo - max(2.0, 0.2 * (hi - lo)), hi + max(2.0, 0.2 * (hi - lo)))
    ax.set_ylabel("latency, no disruptor (cycles per hop)")
    twin = ax.twinx()
    twin.plot(range(len(rows)), pen, "k.", markersize=4)
    twin.set_ylabel(dots)
    ticks, which = group_ticks(spec.get("boxes", []), len(rows))
    ax.set_xticks(ticks, [rows[t]["sm"] for t in ticks], fontsize=6, rotation=90)
    plain(ax.get_xticklabels())
    plain([ax.set_xlabel(spec["xlabel"] + which)])


def sm_grid(fig, ax, spec, path):
    """A level's per-SM miss penalty as a map: one row per sharing group of SMs (the groups the
    sharing probe measured, in the CSV's order: `group`), one cell per SM of the group in id order,
    its id written in the cell, coloured by its penalty; SMs of no group in rows of 16. Beside it,
    the penalties' distribution with its median."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path}: no SMs")
    pen = [number(r["penalty"], path) for r in rows]
    sms = [int(number(r["sm"], path)) for r in rows]
    group = [int(number(r["group"], path)) for r in rows]
    grid = OrderedDict()
    loose = 0
    for i, g in enumerate(group):
        if g >= 0:
            key = ("group", g)
        else:
            key = ("sms", loose // 16)
            loose += 1
        grid.setdefault(key, []).append(i)
    width = max(len(v) for v in grid.values())
    m = [[pen[i] for i in v] + [float("nan")] * (width - len(v)) for v in grid.values()]
    fig.delaxes(ax)
    fig.set_size_inches(max(8.0, 0.55 * width + 5), max(3.5, 0.26 * len(grid) + 1.6))
    gs = fig.add_gridspec(1, 2, width_ratios=[3, 1], wspace=0.45)
    mx, hx = fig.add_subplot(gs[0]), fig.add_subplot(gs[1])
    im = mx.imshow(m, cmap="viridis", interpolation="nearest", aspect="auto")
    fig.colorbar(im, ax=mx, label="miss penalty (cycles per hop)")
    for r, v in enumerate(grid.values()):
        for c, i in enumerate(v):
            mx.text(c, r, str(sms[i]), ha="center", va="center", fontsize=6, color="white")
    mx.set_yticks(range(len(grid)), [f"group {k[1] + 1}" if k[0] == "group" else f"SMs {k[1] * 16}+"
                                     for k in grid], fontsize=6)
    mx.set_xticks(range(width), [str(c + 1) for c in range(width)], fontsize=6)
    plain([mx.set_xlabel("SM of the group, in id order (its id in the cell)"),
           mx.set_ylabel("sharing group" if any(k[0] == "group" for k in grid) else "SMs by id"),
           mx.set_title(spec["title"], fontsize=9, loc="left")])
    hx.hist(pen, bins=min(30, max(5, len(pen) // 4)), orientation="horizontal", color="C0")
    med = sorted(pen)[len(pen) // 2]
    hx.axhline(med, color="black", linewidth=0.8)
    plain([hx.annotate(f"median {med:.4g}", (1, med), xycoords=("axes fraction", "data"),
                       ha="right", va="bottom", fontsize=7)])
    hx.set_xlabel("SMs")
    hx.set_title("distribution", fontsize=9)
    fig.subplots_adjust(left=0.1, right=0.97, top=0.93, bottom=0.08)
    return "laid out"


def spread(fig, ax, spec, path):
    """One figure over the units of a fleet: a point per unit, its name under it, a colour per
    model; the y axis in plain numbers (no offset)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path}: no units")
    models = list(OrderedDict.fromkeys(r["model"] for r in rows))
    for k, m in enumerate(models):
        xs = [i for i, r in enumerate(rows) if r["model"] == m]
        ax.plot(xs, [number(rows[i]["value"], path) for i in xs], "o", color=f"C{k % 10}", label=m)
    fig.set_size_inches(max(6.0, 0.45 * len(rows) + 3), 4.5)
    ax.set_xticks(range(len(rows)), [r["unit"] for r in rows], fontsize=7, rotation=45, ha="right")
    ax.ticklabel_format(axis="y", useOffset=False, style="plain")
    plain(ax.get_xticklabels() + ax.legend(fontsize=7, loc="best").get_texts())


def draw_one(d, spec):
    fig, ax = plt.subplots(figsize=(10, 5))
    try:
        draw = {"heatmap": heatmap, "forest": forest, "groupmap": groupmap, "per_sm": per_sm,
                "per_sm_penalty": lambda f, a, s, p: per_sm(f, a, s, p, "miss penalty (cycles per hop)"),
                "sm_grid": sm_grid, "spread": spread}.get(spec["kind"], lines)
        # A drawer that made its own axes (small multiples, a map beside a histogram) labelled
        # them itself; the others get the spec's title and labels.
        own = draw(fig, ax, spec, os.path.join(d, os.path.basename(spec["csv"])))
        if not own:
            # A kind that said what its ticks are (heatmap, per_sm) keeps its own x label.
            plain([ax.set_title(spec["title"], fontsize=9), ax.set_ylabel(spec["ylabel"])] +
                  ([] if ax.get_xlabel() else [ax.set_xlabel(spec["xlabel"])]))
        if own != "laid out":  # a map beside a histogram places its axes itself
            fig.tight_layout()
        for ext in ("png", "svg"):
            fig.savefig(os.path.join(d, f"{os.path.basename(spec['id'])}.{ext}"), dpi=120)
    finally:
        plt.close(fig)


def draw_safely(d, spec):
    """One figure: (its id, None) when drawn, (its id, the reason) when not; a figure that fails
    leaves no half-written file to be taken for it."""
    try:
        draw_one(d, spec)
        return None, None
    except Exception as e:  # noqa: BLE001 -- one bad figure is listed, the rest are drawn
        fid = str(spec.get("id", "?")) if isinstance(spec, dict) else "?"
        for ext in ("png", "svg"):
            try:
                os.remove(os.path.join(d, f"{os.path.basename(fid)}.{ext}"))
            except OSError:
                pass
        return fid, f"{type(e).__name__}: {e}".splitlines()[0][:300]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plot.py FIG_DIR")
    d = sys.argv[1]
    try:
        with open(os.path.join(d, "manifest.json")) as f:
            manifest = json.load(f)
        specs = manifest["figures"]
        if not isinstance(specs, list):
            raise TypeError("figures is not a list")
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"plot.py: {e}")
    # The figures are independent: drawn by forked workers, one a figure up to one a CPU (a full
    # run's 19 took 8-10 s one after another, 0.2-0.4 s each); one worker where the machine has
    # one CPU or cannot fork.
    workers = min(len(specs), os.cpu_count() or 1)
    results = None
    if workers > 1:
        try:
            import multiprocessing
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                results = pool.starmap(draw_safely, [(d, spec) for spec in specs])
        except (OSError, ValueError, ImportError):
            results = None
    if results is None:
        results = [draw_safely(d, spec) for spec in specs]
    not_drawn = {fid: why for fid, why in results if fid is not None}
    with open(os.path.join(d, "not_drawn.json"), "w") as f:
        json.dump(not_drawn, f)


if __name__ == "__main__":
    main()
