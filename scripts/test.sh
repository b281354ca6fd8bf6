#!/usr/bin/env bash
# The full test suite: the layer and persistence-chokepoint checks, then the tests in a release build
# and in an AddressSanitizer+UndefinedBehaviorSanitizer build, then ThreadSanitizer on the tests
# that run threads. Each preset's build and test time is printed at the end: CI must stay under
# 30 minutes on 2 cores (docs/crash-testing.md, "CI budget").
# Set FERRITE_TEST_PRESETS="release asan" (say) to run a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/check-layers.sh   # layers point downward; includes the persistence-chokepoint check
presets=${FERRITE_TEST_PRESETS:-release asan tsan}
times=()
for preset in $presets; do
  echo "=== $preset ==="
  start=$SECONDS
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j"$(nproc)"
  built=$SECONDS
  ctest --preset "$preset"
  times+=("$preset: build $((built - start)) s, tests $((SECONDS - built)) s")
done
echo "=== times (total ${SECONDS} s) ==="
printf '%s\n' "${times[@]}"
