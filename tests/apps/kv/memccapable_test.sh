#!/usr/bin/env bash
# libmemcached's protocol checker (memccapable -a, Debian's libmemcached-tools) against
# ferrite-kv: every ASCII-protocol test it has must pass.
#   memccapable_test.sh path/to/ferrite-kv [server options, e.g. --engine cpnvm --pool P]
set -euo pipefail
server=$1
shift
log=$(mktemp)
"$server" -p 0 -t 2 "$@" > "$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 50); do grep -q "listening on" "$log" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on [^ ]*:\([0-9]*\) .*/\1/p' "$log")
[ -n "$port" ] || { echo "ferrite-kv did not start:"; cat "$log"; exit 1; }
report=$(memccapable -a -h 127.0.0.1 -p "$port" 2>&1) || { echo "$report"; exit 1; }
echo "$report"
grep -q "All tests passed" <<< "$report"
