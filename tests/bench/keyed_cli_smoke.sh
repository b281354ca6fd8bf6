#!/usr/bin/env bash
# Smoke test of `ferrite bench` for the keyed workloads, the map baselines and the latency
# percentiles (issue 17), the durable sets (issue 18) and the plain B+-tree (issue 19): --list
# generated from the registrations, a short run of every keyed workload, JSON and table
# latency for keyed and sequence workloads, and the usage errors (exit 2, one line) of a
# structure asked for the other family's workload. Tiny runs (a few thousand operations): not
# a timed test, nothing here looks at a speed.
set -u
ferrite=$1
source "$(dirname "$0")/../cli/cli_test_lib.sh"
fb() { "$ferrite" --pool-dir "$dir" bench "$@"; }
small=(--reps 1 --ops 2000 --keys 1000)

expect 0 '^keyed structures:' -- fb --list
expect 0 '^  map-mutex +volatile std::unordered_map' -- fb --list
expect 0 '^  ordered-map-mutex +volatile std::map' -- fb --list
expect 0 '^keyed workloads:' -- fb --list
for w in set-mix ycsb-load ycsb-a ycsb-b ycsb-c ycsb-e; do expect 0 "^  $w " -- fb --list; done
expect 0 '^  push-pop ' -- fb --list

# Every keyed workload runs on the ordered baseline (the only one with scan), the table has
# the latency columns.
expect 0 'p50 +p99 +p99\.9' -- fb -s ordered-map-mutex -w set-mix,ycsb-load,ycsb-a,ycsb-b,ycsb-c,ycsb-e \
  -t 1,2 "${small[@]}"
expect 0 '1000 keys, zipfian, 50% reads' -- fb -s map-mutex,ordered-map-mutex -w set-mix -t 2 \
  --reads 50 --distribution zipfian "${small[@]}"

check_json() {  # check_json WHAT JSON PYTHON-ASSERTIONS (records in `recs`)
  if python3 -c "import json, sys; recs = json.loads(sys.argv[1]); $3" "$2"; then ok; else bad "$1: $2"; fi
}
latency='
for r in recs:
    assert r["latency_sample_every"] == 256 and r["latency_samples"] > 0, r
    assert 0 < r["latency_p50_ns"] <= r["latency_p99_ns"] <= r["latency_p999_ns"], r'
json=$(fb -s map-mutex -w ycsb-a -t 1,2 "${small[@]}" --json)
check_json "map-mutex ycsb-a --json" "$json" "
assert [(r['structure'], r['workload'], r['threads']) for r in recs] == [('map-mutex', 'ycsb-a', 1), ('map-mutex', 'ycsb-a', 2)]
assert all(r['keys'] == 1000 and r['distribution'] == 'zipfian' and r['initial_size'] == 1000 for r in recs)
$latency"
# Sequence workloads report latency too; --latency-every 0 switches it off.
json=$(fb -s vector-volatile -w push-pop -t 1 --reps 1 --ops 2000 --json)
check_json "push-pop latency" "$json" "$latency
assert 'keys' not in recs[0] and 'distribution' not in recs[0]"
json=$(fb -s vector-volatile -w push-pop -t 1 --reps 1 --ops 2000 --latency-every 0 --json)
check_json "--latency-every 0" "$json" "
assert recs[0]['latency_samples'] == 0 and recs[0]['latency_p50_ns'] is None and recs[0]['latency_p999_ns'] is None"

# set-growth (any keyed structure with insert and erase): grows from 1024 keys, then steady
# pairs; the table and JSON carry the steady-state latency and the growth/steady ratio.
expect 0 'p99\.9 growth/steady' -- fb -s map-mutex -w set-growth -t 1,2 --keys 3000 --ops 500 --reps 1 --latency-every 4
expect 0 'inserts from 1024 to 3000 keys' -- fb -s map-mutex -w set-growth -t 1 --keys 3000 --ops 500 --reps 1
json=$(fb -s map-mutex -w set-growth -t 2 --keys 3000 --ops 500 --reps 2 --latency-every 1 --json)
check_json "set-growth --json" "$json" "
r = recs[0]
assert r['ops'] == 3000 - 1024 and r['keys'] == 3000 and r['distribution'] == 'none', r
assert r['latency_samples'] == 2 * (3000 - 1024) and r['steady_latency_samples'] == 2 * 2 * 500, r
assert 0 < r['steady_latency_p50_ns'] <= r['steady_latency_p99_ns'] <= r['steady_latency_p999_ns'], r
assert abs(r['growth_vs_steady_p999'] - r['latency_p999_ns'] / r['steady_latency_p999_ns']) < 1e-9, r"
# The durable sets (bench/sets/): listed as keyed; set-recovery reopens soft-hash with 1 and 2
# recovery threads and finds every key (ops = keys), its time in ms in the table.
for s in soft-hash soft-list linkfree-hash linkfree-list volatile-hash; do expect 0 "^  $s " -- fb --list; done
expect 0 'set-recovery: ms = median time' -- fb -s soft-hash -w set-recovery -t 1,2 --keys 5000 --reps 2
json=$(fb -s soft-hash,linkfree-hash -w set-recovery -t 1,2 --keys 5000 --reps 2 --json)
check_json "set-recovery --json" "$json" "
assert [(r['structure'], r['threads'], r['ops'], r['keys']) for r in recs] == [('soft-hash', 1, 5000, 5000), ('linkfree-hash', 1, 5000, 5000), ('soft-hash', 2, 5000, 5000), ('linkfree-hash', 2, 5000, 5000)], recs
assert all(r['seconds'] > 0 and r['pwb_per_op'] is None for r in recs), recs"
expect 0 '^soft-list +2 ' -- fb -s soft-hash,volatile-hash,soft-list -w set-mix,ycsb-a -t 1,2 "${small[@]}"
expect 0 '^linkfree-list +2 ' -- fb -s linkfree-hash,linkfree-list -w set-mix,ycsb-c -t 1,2 "${small[@]}"
one_line_error 2 "'linkfree-hash' cannot run workload 'ycsb-a': it lacks put" -- fb -s linkfree-hash -w ycsb-a
# The plain B+-tree of issue 19 (bench/trees/): listed as keyed, runs scans (ycsb-e) and
# set-mix, persists nothing (pwb/op and pfence/op 0, counted).
expect 0 '^  volatile-tree +volatile B\+-tree' -- fb --list
expect 0 '^  tree-volatile +Masstree-style B\+-tree' -- fb --list
expect 0 '^tree-volatile +2 ' -- fb -s tree-volatile -w ycsb-e,set-mix -t 1,2 "${small[@]}"
expect 0 '^volatile-tree +2 ' -- fb -s volatile-tree -w ycsb-e,set-mix -t 1,2 "${small[@]}"
json=$(fb -s volatile-tree -w ycsb-e,set-mix -t 1 "${small[@]}" --json)
check_json "volatile-tree --json" "$json" "
assert [(r['structure'], r['workload']) for r in recs] == [('volatile-tree', 'ycsb-e'), ('volatile-tree', 'set-mix')], recs
assert all(r['pwb_per_op'] == 0 and r['pfence_per_op'] == 0 and r['ops'] == 2000 for r in recs), recs"
one_line_error 2 "'map-mutex' cannot run workload 'set-recovery': it cannot be closed and reopened" -- \
  fb -s map-mutex -w set-recovery
# The CpNvm trees reopen: tree-recovery times the open and the first lookup (eager: the whole
# image loaded; lazy: pages on first touch), then finds every key (ops = keys).
expect 0 'tree-recovery: ms = median time' -- fb -s cpnvm-tree,cpnvm-tree-lazy -w tree-recovery -t 1,2 --keys 5000 --reps 2
json=$(fb -s cpnvm-tree,cpnvm-tree-lazy -w tree-recovery,set-recovery -t 1 --keys 5000 --reps 1 --json)
check_json "tree-recovery --json" "$json" "
assert [(r['structure'], r['workload'], r['ops'], r['keys']) for r in recs] == [('cpnvm-tree', 'tree-recovery', 5000, 5000), ('cpnvm-tree-lazy', 'tree-recovery', 5000, 5000), ('cpnvm-tree', 'set-recovery', 5000, 5000), ('cpnvm-tree-lazy', 'set-recovery', 5000, 5000)], recs
assert all(r['seconds'] > 0 and r['pwb_per_op'] is None and r['distribution'] == 'none' for r in recs), recs"
one_line_error 2 "'volatile-tree' cannot run workload 'tree-recovery': it cannot be closed and reopened" -- \
  fb -s volatile-tree -w tree-recovery
one_line_error 2 "--seconds: workload 'set-growth' runs a fixed amount of work" -- \
  fb -s map-mutex -w set-growth --seconds 1
expect 0 '^  set-recovery ' -- fb --list
expect 0 '^  tree-recovery ' -- fb --list
expect 0 '^  cpnvm-tree-lazy +cpnvm-tree reopened lazily' -- fb --list
expect 0 '^  set-growth ' -- fb --list

one_line_error 2 "'vector-pmdk' is a sequence structure and cannot run the keyed workload 'ycsb-a'" -- \
  fb -s vector-pmdk -w ycsb-a
one_line_error 2 "'map-mutex' is a keyed structure and cannot run the sequence workload 'push-pop'" -- \
  fb -s map-mutex -w push-pop
one_line_error 2 "'map-mutex' cannot run workload 'ycsb-e': it lacks scan" -- fb -s map-mutex -w ycsb-e
one_line_error 2 '--distribution must be uniform or zipfian' -- fb -s map-mutex -w ycsb-a --distribution pareto
one_line_error 2 '--reads applies to the set-mix workload only' -- fb -s map-mutex -w ycsb-a --reads 50
one_line_error 2 '--reads is a percentage' -- fb -s map-mutex -w set-mix --reads 150
one_line_error 2 '--keys sets the prefill of keyed workloads' -- fb -s vector-pmdk -w push-pop --keys 10

# A key-range sweep drawn by bench/plot_sweep.py from one CSV per --keys value.
sweep="$(dirname "$0")/../../bench/plot_sweep.py"
py=/usr/bin/python3  # Debian's, which python3-matplotlib serves (a python3 earlier on PATH may lack it)
[ -x "$py" ] || py=python3
for k in 100 400; do
  expect 0 'set-mix' -- fb -s map-mutex,ordered-map-mutex -w set-mix -t 1,2 --reps 1 --ops 2000 --keys $k --csv "$dir/sweep-$k.csv"
done
expect 0 '' -- "$py" "$sweep" keys "$dir/sweep.png" "$dir/sweep-100.csv" "$dir/sweep-400.csv"
if [ -s "$dir/sweep.png" ]; then ok; else bad "plot_sweep.py wrote no $dir/sweep.png"; fi
expect 1 'usage: plot_sweep.py' -- "$py" "$sweep" threads "$dir/x.png" "$dir/sweep-100.csv"

finish bench-keyed
