#!/usr/bin/env bash
# scripts/check-layers.sh passes on the repository's own tree and fails, naming the line, on
# a copy with an upward include, a forbidden include into sync/, a persistence call in sync/,
# or a comment or doc that points outside the repository (check-references.sh).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
check="$repo/scripts/check-layers.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

fresh() { rm -rf "$work/tree"; mkdir -p "$work/tree"; cp -r "$repo/include" "$repo/src" "$repo/docs" "$work/tree/"; }

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

# References outside the repository (each one assembled below, so that this file itself
# passes the check): the old notes and papers folders, a sibling folder, the upper-case design
# file; docs/design.md is the repository's own and passes (the clean copy above holds it).
sh=shared; up=..
outside=("($sh/notes/dfc.md #3)" "($up/$sh/notes/nvm-support.md)" "($sh/pa""pers/dfc.txt)"
         "(notes""/nvm-support.md, axiom 1)" "never a base (DESIGN"".md)")
for ref in "${outside[@]}"; do
  fresh
  echo "// see $ref" >> "$work/tree/include/ferrite/combining/dfc.hpp"
  out=$(bash "$check" "$work/tree" 2>&1) && fail "a reference outside the repository passed: $ref"
  grep -qF "include/ferrite/combining/dfc.hpp:$(wc -l < "$work/tree/include/ferrite/combining/dfc.hpp"): // see $ref" <<<"$out" \
    || fail "the outside reference is not named with its file:line: $ref: $out"
done
fresh  # in a doc too; docs/design.md (lower case, under docs/) stays allowed
echo 'See docs/design.md and DESIGN''.md.' >> "$work/tree/docs/dfc.md"
out=$(bash "$check" "$work/tree" 2>&1) && fail "an outside reference in docs/ passed"
grep -q '^  docs/dfc.md:[0-9]*: See docs/design.md and DESIGN' <<<"$out" || fail "not named: $out"
fresh
echo '// layers and style: docs/design.md; papers: docs/references.md' >> "$work/tree/include/ferrite/error.hpp"
out=$(bash "$check" "$work/tree" 2>&1) || fail "a reference to docs/design.md failed: $out"

[ $failures -eq 0 ] && echo "check_layers: 12 passed, 0 failed" || { echo "check_layers: $failures failed"; exit 1; }
