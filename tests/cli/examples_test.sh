#!/usr/bin/env bash
# The README's catalog example (examples/named_vectors.cpp) run as a user would: named objects
# survive a restart and grow; `pool info` lists them; `pool check` reads the catalog; a
# damaged catalog is reported with one line and the file is left unchanged.
# The exactly-once example (examples/exactly_once.cpp) is killed with SIGKILL at random
# moments and restarted until it finishes; then every job must be in its DFC queue once.
# Usage: examples_test.sh FERRITE NAMED_VECTORS EXACTLY_ONCE
set -u
ferrite=$1; named_vectors=$2; exactly_once=$3
source "$(dirname "$0")/cli_test_lib.sh"

pool="$dir/names"
expect 0 'ids 400, ticks 400, jobs 400' -- "$named_vectors" "$pool"
expect 0 'ticks: vector of 24-byte elements' -- "$named_vectors" "$pool"
expect 0 'ids 1600, ticks 1600, jobs 1600' -- "$named_vectors" "$pool" 2
expect 0 'named objects +3' -- "$ferrite" pool info "$pool"
expect 0 'ids +vector of 8-byte elements' -- "$ferrite" pool info "$pool"
expect 0 'jobs +dfc_queue of 8-byte elements' -- "$ferrite" pool info "$pool"
expect 0 '3 named object\(s\) valid' -- "$ferrite" pool check "$pool"
json=$("$ferrite" pool info "$pool" --json)
if python3 -c '
import json, sys
o = json.loads(sys.argv[1])["objects"]
assert [x["name"] for x in o] == ["ids", "ticks", "jobs"], o
assert o[1] == {"name": "ticks", "kind": "vector", "element_size": 24, "element_align": 8, "created": True,
                "detail": "1600 elements, capacity 2048"}, o
assert o[2]["kind"] == "dfc_queue" and o[2]["element_size"] == 8 and o[2]["created"], o
assert o[2]["detail"].startswith("4 thread ids"), o
' "$json"; then ok; else bad "pool info --json objects: $json"; fi

# Damage the catalog's first block (its magic word): every reader must refuse it, in one
# line, without writing.
off=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["heap"]["offset"])' "$json")
cat_off=$(python3 - "$pool" <<'PY'
import struct, sys
with open(sys.argv[1], "rb") as f:
    f.seek(320)                  # the header's roots table: 8 words, id << 48 | offset
    roots = {w >> 48: w & (2**48 - 1) for w in struct.unpack("<8Q", f.read(64)) if w}
    print(roots[2])              # root id 2: the catalog
PY
)
[ "$cat_off" -gt "$off" ] && ok || bad "catalog offset $cat_off should lie inside the heap at $off"
printf '\xff' | dd of="$pool" bs=1 seek="$cat_off" conv=notrunc status=none
before=$(sha256sum "$pool")
one_line_error 1 'catalog: damaged .*not a ferrite catalog block' -- "$ferrite" pool check "$pool"
one_line_error 1 'damaged' -- "$named_vectors" "$pool"
[ "$(sha256sum "$pool")" = "$before" ] && ok || bad "a refused open changed the pool file"
# Exactly once under SIGKILL: the first run only creates the pool, its heap and the queue
# (a kill during pool creation would leave a file that is no pool: not what this tests).
once="$dir/once"
jobs=200000
expect 0 'exactly once: 0 jobs' -- "$exactly_once" "$once" 0
killed=0
for i in 1 2 3 4 5 6 7 8; do
  "$exactly_once" "$once" "$jobs" > /dev/null 2>&1 &
  pid=$!
  sleep "0.0$((RANDOM % 9 + 1))"
  kill -9 "$pid" 2>/dev/null && killed=$((killed + 1))
  wait "$pid" 2>/dev/null
done
[ "$killed" -gt 0 ] && ok || bad "exactly_once finished before any kill: raise its job count"
expect 0 'done|exactly once' -- "$exactly_once" "$once" "$jobs"
expect 0 "exactly once: $((2 * jobs)) jobs" -- "$exactly_once" "$once" "$jobs"
echo "exactly_once: $killed of 8 runs killed before they finished"

finish examples
