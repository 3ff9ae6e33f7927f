#!/usr/bin/env python3
"""Draws the charts of BENCHMARKS.md from a pld-bench JSON result.

    swift run -c release --package-path Benchmarks pld-bench --json Benchmarks/results/full.json
    python3 Benchmarks/chart.py Benchmarks/results/full.json Benchmarks/set-latency.png
    python3 Benchmarks/chart.py IN.json Benchmarks/set-latency.png Benchmarks/group-commit.png

The set latency chart (second argument): one panel per value size and durability mode; in each, p50 /
p99 / p99.9 of `set` for the library, raw SQLite, GRDB's Codable record and (in .full) the atomic file
write, on a log scale, all from the same run.

The group-commit chart (optional third argument): µs per write of sixteen .full writers — the library's
concurrent write(_:) callers against raw SQLite committing one write per transaction and sixteen per
transaction — with the fsync group's fdatasync p50 as a line when the run measured it. With three
arguments, a chart whose group is missing from the run is skipped; it fails only if both are.

Needs matplotlib (`pip install matplotlib`).
"""

import json
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402

CONTENDERS = [
    ("library", "PersistentLiveData", "#1f77b4"),
    ("raw", "raw SQLite", "#7f7f7f"),
    ("grdb", "GRDB Codable record", "#ff7f0e"),
    ("atomic-file", "atomic file write", "#2ca02c"),
]
PERCENTILES = ["p50", "p99", "p99.9"]
CASE = re.compile(r"^(library|raw|grdb|atomic-file) (.+) (full|normal)$")


def load(path):
    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    # values[(size, mode)][contender][percentile] = microseconds
    values = {}
    for metric in document["metrics"]:
        if metric["group"] != "set" or metric["metric"] not in PERCENTILES:
            continue
        match = CASE.match(metric["case"])
        if not match:
            continue
        contender, size, mode = match.groups()
        values.setdefault((size, mode), {}).setdefault(contender, {})[metric["metric"]] = metric["value"]
    return document["run"], values


def size_key(size):
    number, unit = size.split(" ")
    return float(number) * (1000 if unit == "KB" else 1)


def run_label(run):
    """The machine and build of a run, for a chart's title."""
    mode = "quick run, not a measurement — " if run.get("quick") else ""
    return (
        f"{mode}{run.get('date', '')}, {run.get('processors', '?')} cores "
        f"({run.get('cpuModel', '')}), SQLite {run.get('sqliteVersion', '?')}, {run.get('build', '')} build"
    )


def draw_set_latency(run, values, destination):
    sizes = sorted({size for size, _ in values}, key=size_key)
    modes = ["normal", "full"]
    figure, axes = plt.subplots(
        len(sizes), len(modes), figsize=(10, 3.4 * len(sizes)), squeeze=False, constrained_layout=True
    )
    for row, size in enumerate(sizes):
        for column, mode in enumerate(modes):
            axis = axes[row][column]
            case = values.get((size, mode), {})
            present = [c for c in CONTENDERS if c[0] in case]
            width = 0.8 / max(1, len(present))
            for index, (key, label, color) in enumerate(present):
                heights = [case[key].get(p, float("nan")) for p in PERCENTILES]
                positions = [p + (index - (len(present) - 1) / 2) * width for p in range(len(PERCENTILES))]
                bars = axis.bar(positions, heights, width, label=label, color=color)
                axis.bar_label(bars, labels=[f"{h:,.0f}" if h >= 10 else f"{h:.1f}" for h in heights],
                               fontsize=5.5, padding=1)
            axis.set_yscale("log")
            axis.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:,.0f}"))
            axis.yaxis.set_minor_formatter(ticker.NullFormatter())
            axis.set_xticks(range(len(PERCENTILES)), PERCENTILES)
            axis.set_title(f"{size} value, .{mode}", fontsize=10)
            axis.set_ylabel("set latency (µs, log)")
            axis.grid(axis="y", which="both", alpha=0.25)
            axis.legend(fontsize=7, loc="upper left")
    figure.suptitle(f"set latency percentiles — {run_label(run)}", fontsize=9)
    figure.savefig(destination, dpi=90)
    plt.close(figure)
    print(f"wrote {destination}")


# The groupcommit group's cases (metric "secondsPerWrite"), in bar order.
GROUP_COMMIT = [
    ("library write", "library, 16 concurrent\nwrite(_:) callers", "#1f77b4"),
    ("raw 1/commit", "raw SQLite,\none write per commit", "#7f7f7f"),
    ("raw 16/commit", "raw SQLite,\n16 writes per commit", "#bcbcbc"),
]


def load_group_commit(path):
    """µs per write by groupcommit case, and the fsync group's fdatasync p50 in µs (or None)."""
    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    per_write, fdatasync = {}, None
    for metric in document["metrics"]:
        if metric["group"] == "groupcommit" and metric["metric"] == "secondsPerWrite":
            per_write[metric["case"]] = metric["value"] * 1e6
        elif metric["group"] == "fsync" and metric["case"] == "fdatasync" and metric["metric"] == "p50":
            fdatasync = metric["value"]
    return per_write, fdatasync


def draw_group_commit(run, per_write, fdatasync, destination):
    present = [c for c in GROUP_COMMIT if c[0] in per_write]
    figure, axis = plt.subplots(figsize=(8, 4.5), constrained_layout=True)
    heights = [per_write[key] for key, _, _ in present]
    bars = axis.bar(range(len(present)), heights, 0.6, color=[color for _, _, color in present])
    library = per_write.get("library write")
    labels = []
    for (key, _, _), height in zip(present, heights):
        ratio = f"\nlibrary / this {library / height:.2f}x" if library and key != "library write" else ""
        labels.append(f"{height:,.0f} µs{ratio}" if height >= 10 else f"{height:.1f} µs{ratio}")
    axis.bar_label(bars, labels=labels, fontsize=8, padding=2)
    if fdatasync is not None:
        axis.axhline(fdatasync, color="#d62728", linestyle="--", linewidth=1)
        axis.annotate(
            f"fdatasync p50 {fdatasync:,.0f} µs", (1, fdatasync), xycoords=("axes fraction", "data"),
            xytext=(-4, 3), textcoords="offset points", ha="right", fontsize=8, color="#d62728",
        )
    axis.set_xticks(range(len(present)), [label for _, label, _ in present], fontsize=8)
    axis.set_ylabel("µs per write (median of the rounds)")
    axis.set_ylim(0, max(heights + [fdatasync or 0]) * 1.25)
    axis.grid(axis="y", alpha=0.25)
    figure.suptitle(f"group commit: 16 writers at .full, ~115 B values (issue 16)\n{run_label(run)}", fontsize=8)
    figure.savefig(destination, dpi=90)
    plt.close(figure)
    print(f"wrote {destination}")


def main(arguments):
    if len(arguments) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    source, destination = arguments[:2]
    group_commit_destination = arguments[2] if len(arguments) == 3 else None
    run, values = load(source)
    drawn = 0
    if values:
        draw_set_latency(run, values, destination)
        drawn += 1
    else:
        print(f"{source}: no set results (run pld-bench without --only, or with --only set)", file=sys.stderr)
    if group_commit_destination:
        per_write, fdatasync = load_group_commit(source)
        if per_write:
            draw_group_commit(run, per_write, fdatasync, group_commit_destination)
            drawn += 1
        else:
            print(f"{source}: no groupcommit results (run pld-bench without --only, or with --only groupcommit)",
                  file=sys.stderr)
    return 0 if drawn else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
