#!/usr/bin/env bash
# find_package(ferrite) from a downstream project (downstream/) against this build installed
# into a scratch prefix. With libpmem2 visible: found, links, creates and reopens a pool.
# With libpmem2 hidden from pkg-config (an empty PKG_CONFIG_LIBDIR: pkg-config then searches
# nothing else, and CMake adds only CMAKE_PREFIX_PATH, ferrite's prefix here) or with no
# pkg-config program at all: ferrite_FOUND false with a reason in ferrite_NOT_FOUND_MESSAGE,
# silent with QUIET, a warning without it, a configure error with REQUIRED. In every case
# the call leaves no PMEM2_* or pkg-config result variable (normal or cache) to the caller.
set -u
cmake=$1 build=$2 generator=$3 make_program=$4 cxx=$5 cxx_flags=$6 linker_flags=$7
source "$(dirname "$0")/../cli/cli_test_lib.sh"
downstream="$(cd "$(dirname "$0")/downstream" && pwd)"

if ! "$cmake" --install "$build" --prefix "$dir/prefix" >/dev/null; then
  echo "FAIL: cmake --install $build"; exit 1
fi
mkdir "$dir/empty"

# configure CASE [ENV...] -- [CMAKE-ARGS...]: configures downstream/ in $dir/b; sets out
# (stdout+stderr) and rc. One build tree for all cases, so that only the first detects the
# compiler; the later ones also check that no earlier result sticks in the cache.
configure() {
  case=$1; shift
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  out=$(env "${envs[@]}" "$cmake" -S "$downstream" -B "$dir/b" -G "$generator" \
          -DCMAKE_MAKE_PROGRAM="$make_program" -DCMAKE_CXX_COMPILER="$cxx" \
          -DCMAKE_CXX_FLAGS="$cxx_flags" -DCMAKE_EXE_LINKER_FLAGS="$linker_flags" \
          -DCMAKE_PREFIX_PATH="$dir/prefix" "$@" 2>&1)
  rc=$?
  flat=$(tr -s ' \n' '  ' <<<"$out")   # CMake wraps the reason at word boundaries
}
has()    { if grep -Eq -- "$1" <<<"$flat"; then ok; else bad "$case: output lacks /$1/: $out"; fi; }
hasnt()  { if grep -Eq -- "$1" <<<"$flat"; then bad "$case: output has /$1/: $out"; else ok; fi; }
status() { if [ "$rc" -eq "$1" ]; then ok; else bad "$case: configure exit $rc, wanted $1: $out"; fi; }

hidden=(-u PKG_CONFIG_PATH -u PKG_CONFIG PKG_CONFIG_LIBDIR="$dir/empty")
no_pc_reason='pkg-config cannot find libpmem2\.pc: install libpmem2-dev'
clean='added variables=\[\]'

configure quiet "${hidden[@]}" -- -DFERRITE_FIND_ARGS=QUIET
status 0; has 'ferrite_FOUND=\[(0|FALSE)\]'; has "ferrite_NOT_FOUND_MESSAGE=\[ferrite needs libpmem2 \(PMDK\), and $no_pc_reason"
has "$clean"; hasnt 'CMake (Warning|Error)'
if grep -v 'ferrite_NOT_FOUND_MESSAGE=' <<<"$out" | grep -q libpmem2; then bad "quiet: says something: $out"; else ok; fi

configure default "${hidden[@]}" -- -DFERRITE_FIND_ARGS=
status 0; has 'CMake Warning'; has 'Reason given by package:'; has "$no_pc_reason"
has 'ferrite_FOUND=\[(0|FALSE)\]'; has "$clean"

configure required "${hidden[@]}" -- -DFERRITE_FIND_ARGS=REQUIRED
if [ "$rc" -ne 0 ]; then ok; else bad "required: configure succeeded: $out"; fi
has 'CMake Error'; has 'Reason given by package:'; has "$no_pc_reason"

# No pkg-config program: every directory it could be found in ignored (the compiler and
# ninja are given by path, so they need no search).
configure no_pkg_config -u PKG_CONFIG -- -DFERRITE_FIND_ARGS=QUIET -UPKG_CONFIG_EXECUTABLE \
  "-DCMAKE_IGNORE_PATH=/usr/bin;/bin;/usr/local/bin;/usr/sbin;/sbin;/usr/local/sbin"
status 0; has 'ferrite_FOUND=\[(0|FALSE)\]'
has 'ferrite_NOT_FOUND_MESSAGE=\[ferrite needs libpmem2 \(PMDK\), found through pkg-config, and pkg-config was not found'
has "$clean"

configure visible -- -DFERRITE_FIND_ARGS=REQUIRED -UPKG_CONFIG_EXECUTABLE -UCMAKE_IGNORE_PATH
status 0; has 'ferrite_FOUND=\[(1|TRUE)\]'; has 'ferrite_NOT_FOUND_MESSAGE=\[\]'; has "$clean"
configure visible_again -- -DFERRITE_FIND_ARGS=REQUIRED
status 0; has 'ferrite_FOUND=\[(1|TRUE)\]'; has "$clean"
case=build
out=$("$cmake" --build "$dir/b" 2>&1) && ok || bad "build: $out"
expect 0 '^root value 42$' -- "$dir/b/pool_roundtrip" "$dir/pool"

finish packaging.find_package
