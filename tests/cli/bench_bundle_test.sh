#!/usr/bin/env bash
# scripts/bench-bundle.sh: the packed ferrite finds every library it links in its bundle
# (glibc aside) and runs a benchmark with an empty environment.
set -u
ferrite=$1
source "$(dirname "$0")/cli_test_lib.sh"
bundle_script="$(dirname "$0")/../../scripts/bench-bundle.sh"

expect 0 'bundle in' -- bash "$bundle_script" "$dir/bundle" "$ferrite"
outside=$(LD_LIBRARY_PATH="$dir/bundle/lib" ldd "$dir/bundle/lib/ferrite.bin" |
          awk '$2 == "=>" {print $1, $3}' | grep -v " $dir/bundle/lib/" |
          grep -Ev '^(libc|libm|libpthread|libdl|librt)\.so')
if [ -z "$outside" ]; then ok; else bad "libraries resolved outside the bundle: $outside"; fi
expect 0 '^dfc-stack +1 ' -- env -i PATH=/usr/bin:/bin "$dir/bundle/ferrite" --pool-dir "$dir" bench \
  --structure dfc-stack --workload push-pop --threads 1 --reps 1 --ops 100
expect 2 'usage' -- bash "$bundle_script"
expect 2 'no ferrite binary' -- bash "$bundle_script" "$dir/b2" "$dir/no-such-binary"

finish bench-bundle
