#!/usr/bin/env python3
"""Draws the set latency chart of BENCHMARKS.md from a pld-bench JSON result.

    swift run -c release --package-path Benchmarks pld-bench --json Benchmarks/results/full.json
    python3 Benchmarks/chart.py Benchmarks/results/full.json Benchmarks/set-latency.png

One panel per value size and durability mode; in each, p50 / p99 / p99.9 of `set` for the library,
raw SQLite, GRDB's Codable record and (in .full) the atomic file write, on a log scale, all from the
same run. Needs matplotlib (`pip install matplotlib`).
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


def main(arguments):
    if len(arguments) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    source, destination = arguments
    run, values = load(source)
    if not values:
        print(f"{source}: no set results (run pld-bench without --only, or with --only set)", file=sys.stderr)
        return 1
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
    mode = "quick run, not a measurement — " if run.get("quick") else ""
    figure.suptitle(
        f"set latency percentiles — {mode}{run.get('date', '')}, {run.get('processors', '?')} cores "
        f"({run.get('cpuModel', '')}), SQLite {run.get('sqliteVersion', '?')}, {run.get('build', '')} build",
        fontsize=9,
    )
    figure.savefig(destination, dpi=90)
    print(f"wrote {destination}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
