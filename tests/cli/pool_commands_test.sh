#!/usr/bin/env bash
# End-to-end test of `ferrite pool create|info|check` and `ferrite demo`: exit codes, the
# one-line error contract, --pool-dir / FERRITE_POOL_DIR, and the pool-info JSON schema.
set -u
ferrite=$1
source "$(dirname "$0")/cli_test_lib.sh"

expect 0 'Usage|usage' -- "$ferrite" --help
for sub in "pool" "pool create" "pool info" "pool check" "demo"; do
  # shellcheck disable=SC2086
  expect 0 'Usage|usage' -- "$ferrite" $sub --help
done

expect 0 'created .*/p1 \(1048576 bytes, layout orders\)' -- "$ferrite" --pool-dir "$dir" pool create p1 --size 1M --layout orders
expect 0 'created' -- env FERRITE_POOL_DIR="$dir" "$ferrite" pool create p2 --size 64K
[ -f "$dir/p2" ] && ok || bad "FERRITE_POOL_DIR not honoured"
expect 0 'created' -- "$ferrite" pool create "$dir/p3" --size 100000
expect 0 'size +100 KiB \(102400 bytes\)' -- "$ferrite" pool info "$dir/p3"
expect 0 'layout +orders' -- "$ferrite" --pool-dir "$dir" pool info p1
expect 0 'consistent' -- "$ferrite" pool check "$dir/p1"

# JSON schema of pool info (docs/cli.md)
json=$("$ferrite" pool info "$dir/p1" --json)
if python3 - "$json" <<'PY'
import json, sys
j = json.loads(sys.argv[1])
assert j["schema"] == "ferrite.pool-info/1"
for k, t in [("path", str), ("layout", str), ("uuid", str), ("format_version", int), ("size", int),
             ("used", int), ("free", int), ("granularity", str), ("dax", bool), ("clean_shutdown", bool),
             ("created_unix_ns", int)]:
    assert isinstance(j[k], t), k
assert j["size"] == 1048576 and j["used"] + j["free"] == j["size"]
assert j["granularity"] in ("byte", "cache_line", "page")
assert j["clean_shutdown"] is True and j["root"] is None
assert j["format_version"] == 2 and j["roots"] == []
c = j["persistence"]["counters"]
assert set(c) == {"pwb_lines", "pfences", "psyncs", "nt_stores"}
assert j["persistence"]["backend"] in ("clwb", "clflushopt", "clflush", "none", "emulated")
PY
then ok; else bad "pool info --json schema: $json"; fi

# Bad input: one line, non-zero, file untouched.
before=$(sha256sum "$dir/p1")
one_line_error 1 'already exists' -- "$ferrite" pool create "$dir/p1" --size 1M
[ "$(sha256sum "$dir/p1")" = "$before" ] && ok || bad "create over existing pool changed it"
one_line_error 1 'no such file' -- "$ferrite" pool info "$dir/missing"
one_line_error 1 'below the minimum' -- "$ferrite" pool create "$dir/tiny" --size 4K
one_line_error 1 'above the maximum' -- "$ferrite" pool create "$dir/huge" --size 2T
one_line_error 1 'does not fit' -- "$ferrite" pool create "$dir/huge" --size 1000G
one_line_error 2 'not a size' -- "$ferrite" pool create "$dir/x" --size 12Q
one_line_error 1 'layout name' -- "$ferrite" pool create "$dir/x" --size 1M --layout ""
: > "$dir/empty"
one_line_error 1 'empty' -- "$ferrite" pool check "$dir/empty"
head -c 65536 /dev/urandom > "$dir/foreign"
one_line_error 1 'not a ferrite pool' -- "$ferrite" pool info "$dir/foreign"
head -c 8192 "$dir/p1" > "$dir/truncated"
one_line_error 1 'truncated' -- "$ferrite" pool check "$dir/truncated"
cp "$dir/p1" "$dir/corrupt"; printf 'X' | dd of="$dir/corrupt" bs=1 seek=60 conv=notrunc status=none
sum=$(sha256sum < "$dir/corrupt")
one_line_error 1 'corrupted' -- "$ferrite" pool check "$dir/corrupt"
[ "$(sha256sum < "$dir/corrupt")" = "$sum" ] && ok || bad "check modified a corrupted pool"
[ -z "$(ls "$dir" | grep creating)" ] && ok || bad "temporary files left behind"
one_line_error 2 'unknown backend' -- "$ferrite" --backend bogus pool info "$dir/p1"

# A pool with a heap: info shows usage per order and fragmentation, check validates it.
expect 0 'heap of 2M as its root' -- "$ferrite" pool create "$dir/heap" --size 4M --heap 2M
expect 0 'heap +4 KiB used of [0-9]+ KiB, largest free block 1024 KiB, fragmentation' -- "$ferrite" pool info "$dir/heap"
expect 0 'order 20 \(1048576 B\) +free 1 +live 0' -- "$ferrite" pool info "$dir/heap"
expect 0 'heap consistent' -- "$ferrite" pool check "$dir/heap"
json=$("$ferrite" pool info "$dir/heap" --json)
if python3 - "$json" <<'PY'
import json, sys
h = json.loads(sys.argv[1])["heap"]
assert h["offset"] == 4096 and h["bytes_used"] == 4096  # the empty catalog's block
assert h["bytes_free"] == h["arena_bytes"] - 4096 > 0
assert json.loads(sys.argv[1])["objects"] == []
roots = json.loads(sys.argv[1])["roots"]
assert [(r["id"], r["name"]) for r in roots] == [(1, "heap"), (2, "catalog")], roots
assert roots[0]["offset"] == 4096 and roots[1]["offset"] > 4096, roots
assert 0 <= h["fragmentation"] < 1 and h["largest_free"] == 1 << 20
assert all(set(o) == {"order", "block_bytes", "free", "live"} for o in h["orders"])
PY
then ok; else bad "pool info --json heap: $json"; fi
one_line_error 1 'does not fit' -- "$ferrite" pool create "$dir/small" --size 1M --heap 2M
[ ! -e "$dir/small" ] && ok || bad "a failed --heap create left its pool behind"
cp "$dir/heap" "$dir/heap-bad"; printf 'XXXXXXXX' | dd of="$dir/heap-bad" bs=1 seek=4104 conv=notrunc status=none
sum=$(sha256sum < "$dir/heap-bad")
expect 1 'heap' -- "$ferrite" pool check "$dir/heap-bad"
[ "$(sha256sum < "$dir/heap-bad")" = "$sum" ] && ok || bad "check modified a damaged heap"

# A pool of format version 1 (before the roots table): every command refuses it in one line
# naming both versions, and leaves it byte-identical.
python3 - "$dir/heap" "$dir/v1" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
b[8:12] = struct.pack("<I", 1)          # identity.version
h = 0xcbf29ce484222325                  # FNV-1a 64 of the identity before its checksum
for x in b[:248]:
    h = ((h ^ x) * 0x100000001b3) % 2**64
b[248:256] = struct.pack("<Q", h)
open(sys.argv[2], "wb").write(b)
PY
sum=$(sha256sum < "$dir/v1")
one_line_error 1 'format version 1, this ferrite reads version 2' -- "$ferrite" pool info "$dir/v1"
one_line_error 1 'format version 1, this ferrite reads version 2' -- "$ferrite" pool check "$dir/v1"
[ "$(sha256sum < "$dir/v1")" = "$sum" ] && ok || bad "a refused version-1 pool was changed"

# The demo: create, write, reopen, verify, print info, clean up.
expect 0 'record intact' -- "$ferrite" --pool-dir "$dir" demo
expect 0 'record intact' -- "$ferrite" --backend none --pool-dir "$dir" demo
expect 0 'record intact' -- "$ferrite" --backend emulated --pool-dir "$dir" demo
[ -z "$(ls "$dir" | grep ferrite-demo)" ] && ok || bad "demo left its pool behind"

finish cli
