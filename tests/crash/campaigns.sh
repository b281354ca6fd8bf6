#!/usr/bin/env bash
# A crash campaign for every registered target (`ferrite crashtest --list`), run as a user
# would: correct targets must finish with no violation (exit 0) and kill every persistence
# site under flush mutation testing; buggy-* targets must be caught (exit 3).
# Usage: campaigns.sh FERRITE [CRASHES] [MUTATION_CRASHES]   (MUTATION_CRASHES 0: no mutation)
set -u
ferrite=$1
crashes=${2:-${FERRITE_CAMPAIGN_CRASHES:-10000}}
mutation_crashes=${3:-${FERRITE_MUTATION_CRASHES:-4000}}
dir=$(mktemp -d /dev/shm/ferrite-campaigns.XXXXXX)
trap 'rm -rf "$dir"' EXIT
failures=0; passed=0
# Crash points of a target's campaign: CRASHES, or a share of it for targets whose runs hold
# few persistence sites and whose recovery is short (their flush mutation keeps the full
# per-site budget, which is what kills every site).
campaign_points() {
  local n=$crashes
  case $1 in
    node-store) n=$(( crashes * 15 / 100 )); [ "$n" -ge 100 ] || n=$(( crashes < 100 ? crashes : 100 )) ;;
    # The durable sets share one family budget (docs/crash-testing.md, "CI budget"): the six
    # algorithm targets (SOFT's four, link-free's two) take 12% each.
    soft-* | linkfree-*) n=$(( crashes * 12 / 100 )); [ "$n" -ge 50 ] || n=$(( crashes < 50 ? crashes : 50 )) ;;
    # CpNvm's share (docs/crash-testing.md, "CI budget"): cpnvm-map's and kv-cpnvm's crash
    # points each recover and compare a whole program image (about 2.5 and 0.7 ms apiece in
    # release), so they run 20%; cpnvm-counter (0.1 ms apiece) runs them all.
    cpnvm-map | kv-cpnvm) n=$(( crashes * 20 / 100 )); [ "$n" -ge 50 ] || n=$(( crashes < 50 ? crashes : 50 )) ;;
    # ferrite-kv's share: kv-soft's points recover a SOFT index and an item heap (0.6-1 ms
    # apiece in release, 12 under ASan): 30% (3,000 in release: 0 violations in 10,000 and in
    # 3,000 random moments when it landed); its mutation budget stays whole.
    kv-soft) n=$(( crashes * 30 / 100 )); [ "$n" -ge 50 ] || n=$(( crashes < 50 ? crashes : 50 )) ;;
    # tree-undo's engine (issue 21's baseline): incll-tree's workload and checker over the
    # external-log-only path, which incll-tree's campaign runs too (splits, inserts after
    # removes, wide values): 30%.
    undo-tree) n=$(( crashes * 30 / 100 )); [ "$n" -ge 50 ] || n=$(( crashes < 50 ? crashes : 50 )) ;;
  esac
  echo "$n"
}
# Crash points per switched-off site: MUTATION_CRASHES, or a share for targets whose every
# site dies within a few hundred points (SOFT's die within 300, kv-cpnvm's within 60 and
# undo-tree's within 146: a quarter keeps a margin; link-free's within 1,700 with the exchange-fenced epoch pins, 2,266
# with the asymmetric fence, whose reclamation timing changes the schedules: three quarters).
mutation_points() {
  local n=$mutation_crashes
  case $1 in
    soft-* | kv-cpnvm | undo-tree) n=$(( mutation_crashes / 4 )) ;;
    linkfree-*) n=$(( mutation_crashes * 3 / 4 )) ;;
  esac
  echo "$n"
}
# What a failing campaign prints: its summary and its violations (each with the `repro`
# command that replays it), not the site list that comes first in the JSON; output with no
# violation list (a crash, an error) is printed whole.
failure_report() {
  if grep -q '"violation_list"' <<<"$1"; then
    grep -E '"(crash_points|events|recovery_crashes|seed|threads|violations)"' <<<"$1"
    sed -n '/"violation_list"/,$p' <<<"$1" | head -200
  else
    echo "$1"
  fi
}
targets=$("$ferrite" crashtest --list) || { echo "FAIL: crashtest --list"; exit 1; }
[ -n "$targets" ] || { echo "FAIL: no targets listed"; exit 1; }
for t in $targets; do
  start=$(date +%s%N)
  out=$("$ferrite" --pool-dir "$dir" crashtest "$t" --crashes "$(campaign_points "$t")" --json 2>&1); rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  summary=$(grep -E '"(crash_points|violations|recovery_crashes)"' <<<"$out" | tr -d ' \n')
  case $t in
    buggy-*) want=3 ;;
    *) want=0 ;;
  esac
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: crashtest $t -> exit $rc, wanted $want"; failure_report "$out"; failures=$((failures + 1))
  else
    echo "ok: crashtest $t ($summary ${ms} ms)"; passed=$((passed + 1))
  fi
  case $t in buggy-*) continue ;; esac
  [ "$mutation_crashes" -gt 0 ] || continue
  out=$("$ferrite" --pool-dir "$dir" crashtest "$t" --mutate all --crashes "$(mutation_points "$t")" 2>&1); rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: crashtest $t --mutate all -> exit $rc"; echo "$out"; failures=$((failures + 1))
  else
    echo "ok: mutation $t: $(tail -n 1 <<<"$out")"; passed=$((passed + 1))
  fi
done
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
