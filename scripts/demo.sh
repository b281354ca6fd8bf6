#!/usr/bin/env bash
# ferrite's main job: build (release), run the pool demo (create a pool, write through the
# persistence primitives, reopen it, print `pool info`), then a short headline comparison:
# ferrite::vector on PFC and FPFC against a mutex around the same persistent vector, the
# same engine on DRAM without persistence, and PMDK's transactional vector, on push-pop over
# a thread sweep (this machine has few cores: counts beyond them are oversubscribed).
# Arguments replace the sweep's defaults (e.g. --threads 1,2,4,8,16,32,64 --reps 5 --ops 200000).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
./build/release/tools/ferrite demo
echo
sweep=(--threads 1,2,4,8 --reps 3 --ops 50000)
[ $# -eq 0 ] || sweep=("$@")
./build/release/tools/ferrite bench --structure vector-pfc,vector-fpfc,vector-mutex,vector-volatile,vector-pmdk \
  --workload push-pop "${sweep[@]}"
