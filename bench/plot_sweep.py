#!/usr/bin/env python3
"""bench/plot_sweep.py: one PNG of a parameter sweep made of several `ferrite bench --csv` runs.

Usage: plot_sweep.py keys|reads OUT.png BENCH.csv...

bench/plot.py draws throughput against threads for one run; a sweep (the durable-sets
paper's key-range and read-share figures) is one run per value of --keys or --reads, each
written with --csv. This draws median ops/s against that value (keys on a log2 axis, reads
in percent), one panel per thread count, one line per structure with its min-max band.
Exit status 3 if matplotlib is missing (Debian: python3-matplotlib), 1 on bad input.
"""
import csv
import sys
from collections import defaultdict

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(3)

COLUMNS = {"keys": ("keys", "keys in the set (half the key range)"),
           "reads": ("reads_percent", "reads (% of operations)")}


def load(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            rows.extend(csv.DictReader(f))
    return rows


def main(argv):
    if len(argv) < 4 or argv[1] not in COLUMNS:
        print("usage: plot_sweep.py keys|reads OUT.png BENCH.csv...", file=sys.stderr)
        return 1
    column, label = COLUMNS[argv[1]]
    rows = load(argv[3:])
    if not rows:
        print("plot_sweep.py: no records", file=sys.stderr)
        return 1
    # series[threads][structure] = [(x, median, min, max)]
    series = defaultdict(lambda: defaultdict(list))
    structures = []
    for r in rows:
        try:
            x = float(r[column])
            point = (x, float(r["ops_per_sec"]), float(r["ops_per_sec_min"]), float(r["ops_per_sec_max"]))
        except (KeyError, ValueError):
            print(f"plot_sweep.py: a record lacks a numeric {column} or ops_per_sec column", file=sys.stderr)
            return 1
        series[int(r["threads"])][r["structure"]].append(point)
        if r["structure"] not in structures:
            structures.append(r["structure"])
    threads = sorted(series)
    fig, axes = plt.subplots(1, len(threads), figsize=(5.5 * len(threads), 4.2), squeeze=False)
    workload = rows[0]["workload"]
    for ax, t in zip(axes[0], threads):
        for s in structures:
            points = sorted(series[t][s])
            if not points:
                continue
            xs = [p[0] for p in points]
            ax.plot(xs, [p[1] / 1e6 for p in points], marker="o", label=s)
            ax.fill_between(xs, [p[2] / 1e6 for p in points], [p[3] / 1e6 for p in points], alpha=0.15)
        if column == "keys":
            ax.set_xscale("log", base=2)
        ax.set_xlabel(label)
        ax.set_ylabel("Mops/s (median, min-max band)")
        ax.set_title(f"{workload}, {t} thread{'s' if t > 1 else ''}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
