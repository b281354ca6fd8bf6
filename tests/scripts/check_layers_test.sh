#!/usr/bin/env bash
# scripts/check-layers.sh passes on the repository's own tree and fails, naming the line, on
# a copy with an upward include, a forbidden include into sync/, or a persistence call in sync/.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
check="$repo/scripts/check-layers.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

fresh() { rm -rf "$work/tree"; mkdir -p "$work/tree"; cp -r "$repo/include" "$repo/src" "$work/tree/"; }

fresh
out=$(bash "$check" "$work/tree" 2>&1) || fail "a clean copy of the tree fails: $out"

fresh  # alloc (below containers) includes the catalog: upward
echo '#include "ferrite/containers/catalog.hpp"' >> "$work/tree/include/ferrite/alloc/buddy_heap.hpp"
out=$(bash "$check" "$work/tree" 2>&1) && fail "an upward include passed"
grep -q 'include/ferrite/alloc/buddy_heap.hpp:[0-9]*: layer .alloc. includes "ferrite/containers/catalog.hpp"' <<<"$out" \
  || fail "the upward include is not named: $out"

fresh  # sync includes the pool
echo '#include "ferrite/pmem/pool.hpp"' >> "$work/tree/include/ferrite/sync/futex.hpp"
out=$(bash "$check" "$work/tree" 2>&1) && fail "sync including the pool passed"
grep -q 'sync/futex.hpp:[0-9]*: layer .sync. includes "ferrite/pmem/pool.hpp"' <<<"$out" || fail "not named: $out"

fresh  # sync persists something
echo 'inline void bad(int* p) { ferrite::pmem::pwb(p); }' >> "$work/tree/include/ferrite/sync/futex.hpp"
out=$(bash "$check" "$work/tree" 2>&1) && fail "a pwb in sync passed"
grep -q 'sync/futex.hpp:[0-9]*:.*must touch nothing persistent' <<<"$out" || fail "not named: $out"

fresh  # the library includes the simulator
echo '#include "ferrite/sim/session.hpp"' >> "$work/tree/src/containers/catalog.cpp"
out=$(bash "$check" "$work/tree" 2>&1) && fail "containers including sim passed"

[ $failures -eq 0 ] && echo "check_layers: 5 passed, 0 failed" || { echo "check_layers: $failures failed"; exit 1; }
