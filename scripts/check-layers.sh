#!/usr/bin/env bash
# The layer check (docs/design.md, "Layers"): includes in the library point only downward,
# sync/ touches nothing persistent, no persistence instruction appears outside pmem/
# (check-chokepoint.sh), and no comment, doc or script points outside the repository
# (check-references.sh). Prints every offending line and exits 1; exit 0 when clean.
#
#   bash scripts/check-layers.sh [ROOT]     ROOT: a source tree (default: this repository)
#
# What each layer of include/ferrite and src/ may include (its own files always):
#   pmem        -
#   sim         pmem                  (the crash simulator: above pmem, beside the rest)
#   alloc       pmem
#   sync        pmem/observer.hpp, pmem/primitives.hpp (wait hints only: volatile layer)
#   combining   pmem alloc sync
#   sets        pmem alloc sync
#   checkpoint  pmem alloc sync       (CpNvm)
#   index       pmem alloc sync       (the Masstree-style ordered index; InCLL)
#   containers  pmem alloc sync combining sets checkpoint index
# error.hpp is below every layer. Nothing in the library includes sim/, crash/, bench/,
# tools/, flow/ or tests/: those sit above it (flow/, the static checker, includes nothing of
# ferrite; ferrite's code includes only its annotation macros, pmem/flow.hpp).
set -euo pipefail
scripts=$(cd "$(dirname "$0")" && pwd)
root=${1:-"$scripts/.."}
cd "$root"

declare -A allowed=(
  [pmem]=""
  [sim]="pmem"
  [alloc]="pmem"
  [sync]="pmem/observer.hpp pmem/primitives.hpp"
  [combining]="pmem alloc sync"
  [sets]="pmem alloc sync"
  [checkpoint]="pmem alloc sync"
  [index]="pmem alloc sync"
  [containers]="pmem alloc sync combining sets checkpoint index"
)
problems=()

for layer in "${!allowed[@]}"; do
  for dir in "include/ferrite/$layer" "src/$layer"; do
    [ -d "$dir" ] || continue
    while IFS= read -r hit; do
      [ -n "$hit" ] || continue
      file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}
      [[ ${rest#*:} =~ \#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]] || continue
      target=${BASH_REMATCH[1]}
      case "$target" in
        ferrite/error.hpp) continue ;;
        ferrite/"$layer"/*) continue ;;
        ferrite/*)
          path=${target#ferrite/}
          ok=0
          for a in ${allowed[$layer]}; do
            case "$path" in "$a" | "$a"/*) ok=1 ;; esac
          done
          [ $ok -eq 1 ] && continue
          problems+=("$file:$line: layer '$layer' includes \"$target\": only ${allowed[$layer]:-nothing of ferrite but error.hpp} may be included from $layer/")
          ;;
        *) ;;  # system and third-party headers
      esac
    done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$dir" || true)
  done
done

# sync/ is volatile: no persistence primitive, no pool, no offset pointer.
if [ -d include/ferrite/sync ] || [ -d src/sync ]; then
  while IFS= read -r hit; do
    [ -n "$hit" ] && problems+=("$hit: sync/ must touch nothing persistent (no pwb/pfence/psync/NT store, pool or offset_ptr)")
  done < <(grep -rnE 'pmem::(pwb|pfence|psync|nt_store|nt_memcpy|pool|offset_ptr)' include/ferrite/sync src/sync 2>/dev/null || true)
fi

if [ ${#problems[@]} -ne 0 ]; then
  echo "layer check: ${#problems[@]} include(s) or use(s) against the layer order (docs/design.md):"
  printf '  %s\n' "${problems[@]}"
  exit 1
fi
echo "layers: every include points downward; sync/ touches nothing persistent"
bash "$scripts/check-references.sh" "$root"           # the tree under check, as given
[ $# -eq 0 ] && bash "$scripts/check-chokepoint.sh"  # a git grep over this repository
exit 0
