#!/usr/bin/env bash
# The library and each public header on its own, built with clang++-15 and ferrite's
# warnings as errors (clang/CMakeLists.txt). The build tree is kept in WORK_DIR, so a rerun
# rebuilds only what changed. Exit 77 (skipped) where clang++-15 is not installed.
set -euo pipefail
cmake=$1 source_dir=$2 work_dir=$3 make_program=$4
if ! clang=$(command -v clang++-15); then
  echo "SKIP: clang++-15 not found (Debian package clang-15; scripts/install-deps.sh installs it)"
  exit 77
fi
"$cmake" -S "$source_dir/tests/packaging/clang" -B "$work_dir" -G Ninja \
  -DCMAKE_MAKE_PROGRAM="$make_program" -DCMAKE_CXX_COMPILER="$clang" \
  -DCMAKE_BUILD_TYPE= -DFERRITE_SOURCE_DIR="$source_dir" >/dev/null
"$cmake" --build "$work_dir" --target ferrite ferrite_header_check -j2
echo "clang++-15: library and $(find "$work_dir/headers" -name '*.cpp' | wc -l) headers compiled"
