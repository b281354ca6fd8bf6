#!/usr/bin/env bash
# Fails if a persistence instruction appears outside the pmem layer: every pwb/pfence must go
# through ferrite/pmem so that counters and the crash simulator see it. ferrite-flow (flow/)
# and its corpus (tests/flow/corpus/) are left out: the checker names these instructions to
# recognise them, and the corpus is checker input, compiled to IR only, never linked.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='_mm_clwb|_mm_clflushopt|_mm_clflush|_mm_sfence|_mm_stream_si|__builtin_ia32_(clwb|clflush|sfence|movnti)|asm[^;]*(clwb|clflush|sfence|movnti|mfence)|pmem_(persist|flush|drain|memcpy)|pmem2_get_(persist|flush|drain)_fn'
hits=$(git grep -n -I -E "$pattern" -- ':!include/ferrite/pmem' ':!src/pmem' ':!docs' ':!*.md' \
       ':!scripts/check-chokepoint.sh' ':!bench/baselines' ':!flow' ':!tests/flow/corpus' || true)
if [ -n "$hits" ]; then
  echo "persistence instructions outside ferrite/pmem (route them through ferrite/pmem/primitives.hpp):"
  echo "$hits"
  exit 1
fi
echo "chokepoint: no persistence instruction outside ferrite/pmem"
