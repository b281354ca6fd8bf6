#!/usr/bin/env bash
# ferrite's main job: build (release) and run the demo: create a pool, write through the
# persistence primitives, reopen it and print `pool info`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
./build/release/tools/ferrite demo "$@"
