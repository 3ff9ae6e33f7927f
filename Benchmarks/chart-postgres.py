#!/usr/bin/env python3
"""Throughput against writers, from `pld-bench-postgres --durable --json PATH`.

    python3 Benchmarks/chart-postgres.py RESULT.json Benchmarks/postgres-scaling.png

Left: writers (tasks) on one replica; right: replica processes x tasks each. Writes per second (the
median round) of SharedLiveData.set, raw postgres-nio without NOTIFY (sent as a query, and prepared)
and raw postgres-nio with pg_notify inside the statement, on a durable server (fsync on).
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SERIES = [
    ("store", "SharedLiveData.set (prepared; NOTIFY after the commit, gathered)", "tab:blue", "o"),
    ("raw", "raw postgres-nio, no NOTIFY (query)", "tab:green", "s"),
    ("rawPrepared", "raw postgres-nio, no NOTIFY (prepared)", "tab:olive", "D"),
    ("rawNotify", "raw postgres-nio, pg_notify in the statement", "tab:red", "^"),
]


def panel(axis, rows, key, label, tasks=None):
    counts = [row[key] for row in rows]
    for name, title, color, marker in SERIES:
        if all(name in row for row in rows):
            axis.plot(counts, [row[name] for row in rows], marker=marker, color=color, label=title)
    axis.set_xscale("log", base=2)
    axis.set_xticks(counts)
    axis.set_xticklabels([f"{c}" if tasks is None else f"{c}×{tasks}" for c in counts])
    axis.set_xlabel(label)
    axis.set_ylabel("writes/s")
    axis.set_ylim(bottom=0)
    axis.grid(True, alpha=0.3)
    for row in rows:
        axis.annotate(
            f"{row['storeOverRaw']:.2f}×",
            (row[key], row["store"]),
            textcoords="offset points",
            xytext=(0, -15),
            ha="center",
            fontsize=8,
            color="tab:blue",
        )


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as handle:
        result = json.load(handle)
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    panel(axes[0], result["writers"], "writers", "concurrent writers (tasks) on one replica")
    panel(
        axes[1],
        result["replicas"],
        "replicas",
        "replica processes × tasks each",
        tasks=result.get("tasksPerReplica"),
    )
    axes[0].legend(fontsize=8, loc="upper left")
    figure.suptitle(
        f"Shared store on a durable PostgreSQL (fsync on), {result['date']}: "
        "writes/s (labels: store / raw without NOTIFY)",
        fontsize=10,
    )
    figure.tight_layout()
    figure.savefig(sys.argv[2], dpi=110)
    print(f"wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
