#!/usr/bin/env python3
"""bench/plot.py: PNG plots of a `ferrite bench` CSV (written by `ferrite bench --plot DIR`).

Usage: plot.py BENCH.csv OUTDIR

One plot per workload, OUTDIR/<workload>.png: median ops/s against threads on a log2 axis,
one line per structure with its min-max band shaded, and a dashed line where the thread
count passes the machine's hardware threads (to its right, threads are oversubscribed).
The y axis is logarithmic when the medians span more than a factor of 10 (a volatile
upper bound beside PMDK, say), so the structures in between stay readable. A keyed
workload's title names its keys and their distribution (uniform, zipfian).
Exit status 3 if matplotlib is missing (Debian: python3-matplotlib), 1 on a bad CSV.
"""
import csv
import os
import sys
from collections import defaultdict

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(3)


def main(argv):
    if len(argv) != 3:
        print("usage: plot.py BENCH.csv OUTDIR", file=sys.stderr)
        return 1
    with open(argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print(f"plot.py: {argv[1]} has no records", file=sys.stderr)
        return 1
    out = argv[2]
    os.makedirs(out, exist_ok=True)
    by_workload = defaultdict(lambda: defaultdict(list))
    order = []
    for r in rows:
        by_workload[r["workload"]][r["structure"]].append(r)
        if r["structure"] not in order:
            order.append(r["structure"])
    for workload, structures in by_workload.items():
        fig, ax = plt.subplots(figsize=(7, 4.5))
        all_threads = set()
        medians = []
        for name in order:
            if name not in structures:
                continue
            pts = sorted(structures[name], key=lambda r: int(r["threads"]))
            t = [int(r["threads"]) for r in pts]
            all_threads.update(t)
            med = [float(r["ops_per_sec"]) / 1e6 for r in pts]
            medians += med
            lo = [float(r["ops_per_sec_min"]) / 1e6 for r in pts]
            hi = [float(r["ops_per_sec_max"]) / 1e6 for r in pts]
            line, = ax.plot(t, med, marker="o", label=name)
            ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
        ax.set_xscale("log", base=2)
        ticks = sorted(all_threads)
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(x) for x in ticks])
        ax.set_xlabel("threads")
        positive = [m for m in medians if m > 0]
        if positive and max(positive) > 10 * min(positive):
            ax.set_yscale("log")
            ax.set_ylabel("Mops/s, log scale (median, min-max shaded)")
        else:
            ax.set_ylabel("Mops/s (median, min-max shaded)")
            ax.set_ylim(bottom=0)
        first = rows[0]
        cores = int(first.get("hardware_concurrency") or 0)
        title = f"{workload}"
        # Keyed workloads: the keys and their distribution (a uniform and a Zipfian run of
        # one workload would otherwise carry the same title).
        mine = next(iter(structures.values()))[0]
        if mine.get("distribution") and mine["distribution"] != "none":
            title += f", {mine.get('keys') or '?'} {mine['distribution']} keys"
        if first.get("backend"):
            title += f"  (backend {first['backend']}"
            if first.get("ablation") and first["ablation"] != "none":
                title += f", ablation {first['ablation']}"
            title += ")"
        ax.set_title(title)
        if cores and ticks and max(ticks) > cores:
            ax.axvline(cores, color="grey", linestyle="--", linewidth=1)
            ax.annotate(f"threads > {cores} cores are oversubscribed", xy=(cores, 0),
                        xycoords=("data", "axes fraction"), xytext=(4, 6),
                        textcoords="offset points", fontsize=8, color="grey")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"{workload}.png"), dpi=120)
        plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
