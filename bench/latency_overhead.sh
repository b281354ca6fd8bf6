#!/usr/bin/env bash
# bench/latency_overhead.sh: what sampling latency costs in throughput (docs/results.md,
# "Latency sampling overhead"). Runs `ferrite bench` with --latency-every N (sampling on)
# and --latency-every 0 (off) REPS times each, interleaved (on, off, off, on, on, off...) so
# a slow phase of the machine hits both alike, one repetition per run, and prints per point
# the median ops/s of each mode, their ratio, and the median (min - max) of the paired
# ratios: repetition r on over repetition r off, run back to back, which cancels most of a
# shared machine's slow phases.
# usage: bench/latency_overhead.sh FERRITE REPS EVERY -- BENCH-ARGS...
#   e.g. bench/latency_overhead.sh build/release/tools/ferrite 7 64 -- \
#          -s vector-volatile -w push-pop -t 1,2,4 --seconds 0.5
set -eu
ferrite=$1 reps=$2 every=$3
shift 3
[ "${1:-}" = "--" ] && shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((r = 0; r < reps; r++)); do
  if ((r % 2 == 0)); then order="$every 0"; else order="0 $every"; fi
  for e in $order; do
    "$ferrite" bench "$@" --reps 1 --seed $((r + 1)) --latency-every "$e" --json > "$out/$r-$e.json" 2>/dev/null
  done
done
python3 - "$out" "$every" <<'PY'
import json, os, statistics, sys
out, every = sys.argv[1], int(sys.argv[2])
rates = {}  # point -> mode -> rep -> ops/s
files = sorted(os.listdir(out), key=lambda f: int(f.split("-")[0]))
for f in files:
    rep = int(f.split("-")[0])
    for r in json.load(open(os.path.join(out, f))):
        key = (r["structure"], r["workload"], r["threads"], r["oversubscribed"])
        rates.setdefault(key, {}).setdefault(r["latency_sample_every"], {})[rep] = r["ops_per_sec"]
print(f"{'structure':<18} {'workload':<9} {'threads':>7} {'on Mops/s':>10} {'off Mops/s':>10} {'on/off':>7}"
      f"  {'paired on/off: median [min - max]':>33}  reps")
for (s, w, t, over), m in rates.items():
    on, off = statistics.median(m[every].values()), statistics.median(m[0].values())
    pairs = [m[every][r] / m[0][r] for r in m[every] if r in m[0]]
    paired = f"{statistics.median(pairs):.3f} [{min(pairs):.3f} - {max(pairs):.3f}]"
    print(f"{s:<18} {w:<9} {str(t) + ('*' if over else ''):>7} {on / 1e6:>10.3f} {off / 1e6:>10.3f} {on / off:>7.3f}"
          f"  {paired:>33}  {len(m[every])}+{len(m[0])}")
print(f"on: --latency-every {every}; off: --latency-every 0; medians; * oversubscribed (more threads than cores)")
PY
