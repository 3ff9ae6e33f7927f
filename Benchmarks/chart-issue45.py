#!/usr/bin/env python3
"""Issue 45's goals: where each figure stood when the issue was filed and where it stands now.

The figures are the medians of alternated runs recorded in BENCHMARKS.md (sections marked issue 45);
this script only draws them: python3 Benchmarks/chart-issue45.py Benchmarks/issue-45.png
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

# (label, filed, now, goal): time ratios to the raw contender (lower is better). A throughput ratio r
# (shared store / raw prepared postgres-nio) is drawn as its time ratio 1 / r.
RATIOS = [
    ("set 114 B .normal / raw SQLite", 1.23, 1.145, 1.05),
    ("set 114 B .full / raw SQLite", 1.15, 1.10, 1.05),
    ("restore 5,000 keys / raw SQLite", 1.02, 1.05, 0.80),
    ("16 .full writers / raw 16 per commit", 1 / 0.79, 1.27, 1 / 0.90),
    ("16 writers / (raw 16 per commit + empty call)", None, 1.08, 1.05),
    ("shared store 1 × 1 / raw prepared", 1 / 0.85, 1 / 0.965, 1 / 0.95),
    ("shared store 4 × 8 / raw prepared", 1 / 0.65, 1 / 0.88, 1 / 0.95),
    ("shared store 16 × 8 / raw prepared", 1 / 0.73, 1 / 0.83, 1 / 0.95),
]
# (label, filed, now, goal) in milliseconds.
LATENCY = [
    ("replica → replica p50, release", 0.74, 0.725, 1.0),
    ("replica → replica p99, release", 1.14, 1.425, 2.0),
    ("replica → replica p50, debug build", 2.0, 1.35, 1.0),
    ("replica → replica p99, debug build", 3.6, 2.6, 2.0),
]


def panel(axis, rows, unit, title):
    labels = [row[0] for row in rows]
    positions = range(len(rows))
    height = 0.38
    filed = [row[1] if row[1] is not None else 0 for row in rows]
    axis.barh([p - height / 2 for p in positions], filed, height, color="#bbbbbb", label="issue filed")
    axis.barh([p + height / 2 for p in positions], [row[2] for row in rows], height, color="#3a7dc9",
              label="now")
    for position, row in zip(positions, rows):
        axis.plot([row[3], row[3]], [position - 0.45, position + 0.45], color="#d62728", linewidth=2)
        axis.text(row[2], position + height / 2, f" {row[2]:.2f}", va="center", fontsize=8)
    axis.plot([], [], color="#d62728", linewidth=2, label="goal")
    axis.set_yticks(list(positions))
    axis.set_yticklabels(labels, fontsize=8)
    axis.invert_yaxis()
    axis.set_xlabel(unit)
    axis.set_title(title, fontsize=10)
    axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3)


def main():
    output = sys.argv[1] if len(sys.argv) > 1 else "issue-45.png"
    figure, (left, right) = plt.subplots(1, 2, figsize=(14, 5.5), gridspec_kw={"width_ratios": [3, 2]})
    panel(left, RATIOS, "time ratio to raw (lower is better)", "Write and restore costs against raw clients")
    panel(right, LATENCY, "milliseconds", "A set on one replica → the other replica's observer")
    figure.tight_layout()
    figure.savefig(output, dpi=110)


if __name__ == "__main__":
    main()
