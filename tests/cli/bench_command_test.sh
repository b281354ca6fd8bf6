#!/usr/bin/env bash
# End-to-end test of `ferrite bench`: --list, the JSON records' schema on a small PMDK run,
# --csv, and the usage errors (exit 2, one line). Benchmarks are not timed tests: no
# assertion here looks at a speed beyond "positive".
set -u
ferrite=$1
source "$(dirname "$0")/cli_test_lib.sh"
fb() { "$ferrite" --pool-dir "$dir" bench "$@"; }

expect 0 'Usage|usage' -- "$ferrite" bench --help
expect 0 '^  vector-pmdk +PMDK' -- fb --list
expect 0 '^  stack-pmdk ' -- fb --list
expect 0 '^  push-pop +each thread alternates' -- fb --list
expect 0 '^  deque-pairs ' -- fb --list
one_line_error 2 "no bench structure 'no-such'" -- fb --structure no-such --workload push-pop
one_line_error 2 "no workload 'no-such'" -- fb --structure vector-pmdk --workload no-such
one_line_error 2 "'stack-pmdk' cannot run workload 'get': it lacks get" -- fb --structure stack-pmdk --workload get
one_line_error 2 "'queue-pmdk' cannot run workload 'push-pop'" -- fb --structure vector-pmdk,queue-pmdk --workload push-pop
one_line_error 2 'not a thread count' -- fb --structure vector-pmdk --workload push-pop --threads 1,two
one_line_error 2 'thread counts must be between' -- fb --structure vector-pmdk --workload push-pop --threads 0
one_line_error 2 'ablation' -- fb --structure vector-pmdk --workload push-pop --ablation sideways
one_line_error 2 "--structure stack-pmdk:sideways: the ablation must be" -- fb --structure stack-pmdk:sideways --workload push-pop
one_line_error 2 "no bench structure 'no-such'" -- fb --structure no-such:no-nt --workload push-pop
one_line_error 2 'name a structure' -- fb --workload push-pop
expect 0 'vs vector-pmdk' -- fb --structure vector-pmdk,stack-pmdk --workload push-pop --threads 1 --reps 1 --ops 200

json=$(fb --structure vector-pmdk --workload push-pop --threads 1,2 --reps 2 --ops 2000 --json)
if python3 - "$json" <<'PY'
import json, sys
recs = json.loads(sys.argv[1])
assert isinstance(recs, list) and len(recs) == 2, recs
for r, t in zip(recs, (1, 2)):
    for k in ("schema", "structure", "workload", "threads", "ops_per_sec", "ops_per_sec_min", "ops_per_sec_max",
              "pwb_per_op", "pfence_per_op", "batch_size", "reps", "ops", "machine", "oversubscribed",
              "baseline", "vs_baseline"):
        assert k in r, k
    assert r["schema"] == "ferrite.bench/1"
    assert r["structure"] == "vector-pmdk" and r["workload"] == "push-pop" and r["threads"] == t
    assert r["reps"] == 2 and r["ops"] == 2000 * t and r["ops_per_thread"] == 2000
    assert 0 < r["ops_per_sec_min"] <= r["ops_per_sec"] <= r["ops_per_sec_max"]
    assert r["pwb_per_op"] is None and r["pfence_per_op"] is None  # PMDK flushes are not ferrite's
    assert r["baseline"] == "vector-pmdk" and r["vs_baseline"] == 1.0
    cores = r["machine"]["hardware_concurrency"]
    assert isinstance(cores, int) and cores > 0 and r["machine"]["backend"]
    assert r["oversubscribed"] == (t > cores)
PY
then ok; else bad "bench --json schema: $json"; fi

# A structure with its own ablation runs beside the same structure with the run's, and its
# records say which ablation each ran with.
json=$(fb --structure stack-pmdk,stack-pmdk:no-futex --workload push-pop --threads 1 --reps 1 --ops 200 --json)
if python3 - "$json" <<'PY'
import json, sys
recs = json.loads(sys.argv[1])
assert [(r["structure"], r["ablation"], r["baseline"]) for r in recs] == [
    ("stack-pmdk", "none", "stack-pmdk"), ("stack-pmdk:no-futex", "no-futex", "stack-pmdk")], recs
PY
then ok; else bad "bench NAME:ABLATION: $json"; fi

# --csv writes a header and one row per point; --json keeps stdout pure JSON.
out=$(fb --structure stack-pmdk --workload rand-op --threads 1,3 --reps 1 --ops 500 --json --csv "$dir/b.csv" 2>/dev/null)
if python3 -c 'import json,sys; json.loads(sys.argv[1])' "$out" && [ "$(wc -l < "$dir/b.csv")" -eq 3 ] &&
   head -1 "$dir/b.csv" | grep -q '^structure,workload,threads,reps,ops,' &&
   grep -q '^stack-pmdk,rand-op,3,1,1500,500,' "$dir/b.csv"; then ok
else bad "bench --csv: $(cat "$dir/b.csv" 2>&1)"; fi

# Every pool the runs created is gone.
if [ -z "$(find "$dir" -name 'ferrite-bench-*')" ]; then ok; else bad "pool files left: $(ls "$dir")"; fi

finish bench
