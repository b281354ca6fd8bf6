#!/usr/bin/env bash
# The full test suite: the layer and persistence-chokepoint checks, then the tests in a release build
# and in an AddressSanitizer+UndefinedBehaviorSanitizer build, then ThreadSanitizer.
# Set FERRITE_TEST_PRESETS="release asan" (say) to run a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/check-layers.sh   # layers point downward; includes the persistence-chokepoint check
presets=${FERRITE_TEST_PRESETS:-release asan tsan}
for preset in $presets; do
  echo "=== $preset ==="
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j"$(nproc)"
  ctest --preset "$preset"
done
