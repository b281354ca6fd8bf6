#!/usr/bin/env bash
# Packs the release `ferrite` binary with the shared libraries it links (PMDK, its ndctl and
# daxctl helpers, libstdc++...) into DIR, so that benchmarks and crash campaigns can run on
# another x86-64 Linux machine, one with more cores say, that has neither the build tools
# nor PMDK installed. glibc itself (libc, libm, the loader) is not packed: the other machine
# must have glibc 2.36 or newer (Debian 12, Ubuntu 23.04 on).
#
#   bash scripts/bench-bundle.sh DIR [BINARY]   # default build/release/tools/ferrite, built if needed
#   DIR/ferrite bench --structure dfc-stack,stack-pfc,stack-pmdk --workload push-pop --threads 1,16,64,128
#   DIR/ferrite crashtest dfc-stack --crashes 10000 --threads 16
#
# DIR/ferrite is a wrapper that points the loader at DIR/lib.
# `bench --plot` needs python3 with matplotlib there ($FERRITE_BENCH_PYTHON picks one).
set -euo pipefail
[ $# -eq 1 ] || [ $# -eq 2 ] || { echo "usage: $0 DIR [FERRITE_BINARY]" >&2; exit 2; }
out=$(realpath -m "$1")
cd "$(dirname "$0")/.."
bin=${2:-build/release/tools/ferrite}
if [ $# -eq 1 ] && [ ! -x "$bin" ]; then
  bash scripts/install-deps.sh
  cmake --preset release >/dev/null
  cmake --build --preset release -j"$(nproc)" --target ferrite_cli
fi
[ -x "$bin" ] || { echo "bench-bundle: no ferrite binary at $bin" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/lib"
cp "$bin" "$out/lib/ferrite.bin"
# glibc's own libraries stay out: they must match the other machine's loader.
is_glibc() {
  case $(basename "$1") in libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;; *) return 1 ;; esac
}
# "NAME PATH" for every library the loader resolves for a binary.
resolved() { ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'; }
resolved "$bin" | while read -r _ lib; do is_glibc "$lib" || cp -L "$lib" "$out/lib/"; done
cat >"$out/ferrite" <<'EOF'
#!/bin/sh
# ferrite with the libraries packed beside it (scripts/bench-bundle.sh).
here=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/lib/ferrite.bin" "$@"
EOF
chmod +x "$out/ferrite"
# The packed binary must find every library it needs in the bundle (glibc aside).
outside=$(LD_LIBRARY_PATH="$out/lib" resolved "$out/lib/ferrite.bin" |
          while read -r name lib; do is_glibc "$lib" || [ "$lib" = "$out/lib/$name" ] || echo "$lib"; done)
[ -z "$outside" ] || { echo "bench-bundle: resolved outside $out/lib: $outside" >&2; exit 1; }
if LD_LIBRARY_PATH="$out/lib" ldd "$out/lib/ferrite.bin" | grep -q 'not found'; then
  echo "bench-bundle: a library is missing from $out/lib" >&2
  exit 1
fi
"$out/ferrite" --help >/dev/null  # it starts
echo "bundle in $out ($(du -sh "$out" | cut -f1)): run $out/ferrite"
