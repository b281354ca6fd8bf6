#!/usr/bin/env bash
# The self-containment check (docs/references.md): no comment, doc or script of the repository
# may point at a file outside it. Papers are cited by their ids in docs/references.md, the
# defects of their pseudocode by number there ("DFC defect #3"), the persistence model as
# "axiom n" there, and design rules in docs/design.md. Prints file:line of every reference
# that leads out of the repository and exits 1; exit 0 when clean.
#
#   bash scripts/check-references.sh [ROOT]     ROOT: a source tree (default: this repository)
#
# What counts as leading outside (each pattern written so that this file does not match it):
#   a papers folder or a notes folder ("<dir>/papers/<name>.txt", "notes/<name>.md"), a path
#   that climbs into a sibling folder named "shared" (dot-dot, slash, shared), an absolute
#   path under the machine's work area (slash, work, slash), and a design file in upper case
#   that is not under docs/ (the repository's design document is docs/design.md: allowed).
set -euo pipefail
scripts=$(cd "$(dirname "$0")" && pwd)
root=${1:-"$scripts/.."}
cd "$root"

pattern='[s]hared/(papers|notes)|[.][.]/[s]hared|(^|[^[:alnum:]_./-])[n]otes/[[:alnum:]_-]+[.]md|(^|[^[:alnum:]_.-])[p]apers/[[:alnum:]_-]+[.]txt|(^|[^[:alnum:]_.~-])/[w]ork/|(^|[^/[:alnum:]_.-])[D]ESIGN[.]md'
dirs=()
for d in include src crash tests tools bench examples docs scripts cmake flow; do
  [ -d "$d" ] && dirs+=("$d")
done
files=()
for f in README.md CMakeLists.txt CMakePresets.json; do
  [ -f "$f" ] && files+=("$f")
done
[ ${#dirs[@]} -eq 0 ] && [ ${#files[@]} -eq 0 ] && { echo "references: nothing to check in $root"; exit 0; }

hits=$(grep -rnIE "$pattern" \
         --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.md' --include='*.sh' \
         --include='*.txt' --include='*.py' --include='*.cmake' --include='*.json' \
         --exclude-dir=build \
         "${dirs[@]}" "${files[@]}" || true)
if [ -n "$hits" ]; then
  echo "references outside the repository (cite docs/references.md or docs/design.md instead):"
  while IFS= read -r hit; do
    file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}
    echo "  $file:$line: ${rest#*:}"
  done <<<"$hits"
  exit 1
fi
echo "references: every comment, doc and script points inside the repository"
