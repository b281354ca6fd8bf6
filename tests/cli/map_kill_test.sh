#!/usr/bin/env bash
# Killed map programs (issue 18): a multi-threaded program updating a durable SOFT map,
# killed with SIGKILL at any moment, loses no acknowledged insert, erase or upsert.
# tests/cli/map_kill_worker.cpp is the program: `run` starts 2-4 threads on their own key
# ranges and journals each operation's intent before it and its acknowledgement (the bool
# it returned) after it, with write(2), which a kill does not undo; `check` reopens the
# pool (recovery), replays the journals against a model and requires every key to hold the
# model's value, but for the one key of each thread's unacknowledged last operation, which
# may show it done or not done (the check journals which, so the next model is exact).
#
# A cycle starts `run` on the epoch's pool, kills it (SIGKILL) after a random delay and
# runs `check`. An epoch is 8 cycles on one pool and journal directory; each epoch starts
# from nothing, and its first delay falls before the pool is named (0 to the time a first
# run takes to name its pool, measured first and cut by a quarter whenever such a kill
# found the pool named: a shared machine's load varies), the others anywhere in a run
# on the existing pool (0 to 1.25 times a complete run, measured first and cut by an
# eighth whenever a run completed before its delay), so that most kills land while
# operations run and some runs complete. Each run's threads (2-4) share
# FERRITE_MAP_KILL_OPS operations (default 40000).
#
# Where a kill landed, from the pool and the acknowledgements `check` counts:
#   before     no pool file: the program had not named its pool
#   opening    the pool existed and the killed run acknowledged nothing (start, recovery)
#   running    the run acknowledged some of its operations, not all
#   closing    every operation was acknowledged, the process had not exited
#   completed  the program exited (0) before the kill: not a kill
# The cycles go on (up to twice the kills wanted) until a kill landed *running* and one
# *before*; the test fails if no kill landed *running*: it cannot pass without having
# killed operations in flight. At the end a complete run and check must succeed, and a copy
# of the pool taken before a complete run must fail the check after it (an older pool has
# lost acknowledged operations: the check can fail).
#
# FERRITE_MAP_KILLS: kills wanted (default 20; docs/crash-testing.md, "Killed map
# programs", has the full run); FERRITE_MAP_KILL_SEED: the seed of the delays (printed;
# timings still vary); VERBOSE=1 prints every cycle's outcome.
# Usage: map_kill_test.sh MAP_KILL_WORKER
set -u
worker=$1
source "$(dirname "$0")/cli_test_lib.sh"
source "$(dirname "$0")/kill_test_lib.sh"   # nap_us, tick, await_name

kills_wanted=${FERRITE_MAP_KILLS:-20}
seed=${FERRITE_MAP_KILL_SEED:-$((($$ ^ ${EPOCHREALTIME/./}) % 32768))}
RANDOM=$seed
ops_total=${FERRITE_MAP_KILL_OPS:-40000}
epoch_cycles=8

# new_epoch NAME: a fresh directory for the pool and its journals.
new_epoch() { d="$dir/$1"; mkdir "$d"; pool="$d/pool"; journals="$d/journals"; acks_before=0; }
# start THREADS: `run` in the background, its output in $dir/out, its pid in $pid.
start() {
  local threads=$1 run_seed=$RANDOM
  (exec "$worker" run "$pool" "$journals" --threads "$threads" --ops $((ops_total / threads)) \
        --seed "$run_seed" > "$dir/out" 2>&1) &
  pid=$!
}
# check WHAT: `check` must pass (returns 1 if not); sets $acks (the acknowledged operations
# in the journals) and adds the unacknowledged ones it settled to $settled_(not_)done.
check() {
  local out status
  out=$("$worker" check "$pool" "$journals" 2>&1); status=$?
  acks=$acks_before
  if [ "$status" -ne 0 ]; then bad "$1: check exited $status: $out"; return 1; fi
  if [[ $out =~ acks\ ([0-9]+) ]]; then acks=${BASH_REMATCH[1]}; ok
  else bad "$1: check printed no ack count: $out"; return 1; fi
  if [[ $out =~ \(done\ ([0-9]+),\ not\ done\ ([0-9]+)\) ]]; then
    settled_done=$((settled_done + BASH_REMATCH[1])); settled_not_done=$((settled_not_done + BASH_REMATCH[2]))
  fi
}
settled_done=0; settled_not_done=0

# ---- how long a first run takes to name its pool, and a run on an existing pool ----------
new_epoch measure
tick; t0=$now
start 4; await_name; tick; name_us=$((now - t0))
wait "$pid" || bad "a complete first run failed: $(cat "$dir/out")"
check "the first complete run"
run_us=0
for threads in 2 3 4; do
  tick; t0=$now
  start "$threads"; wait "$pid" || bad "a complete run ($threads threads) failed: $(cat "$dir/out")"
  tick; run_us=$((run_us + (now - t0) / 3))
  check "a complete run of $threads threads"
done
[ "$acks" -eq $((4 * (ops_total / 4) + 2 * (ops_total / 2) + 3 * (ops_total / 3) + 4 * (ops_total / 4))) ] && ok ||
  bad "the complete runs acknowledged $acks operations in all"
rm -rf "$d"

# ---- the kill cycles ------------------------------------------------------------------------
declare -A count
for o in before opening running closing completed; do count[$o]=0; done
kills=0; cycle=0
while { [ "$kills" -lt "$kills_wanted" ] || [ "${count[running]}" -eq 0 ] || [ "${count[before]}" -eq 0 ]; } &&
      [ "$cycle" -lt $((2 * kills_wanted + 16)) ]; do
  if [ $((cycle % epoch_cycles)) -eq 0 ]; then
    [ "$cycle" -gt 0 ] && rm -rf "$d"
    new_epoch "e$cycle"
  fi
  threads=$((2 + RANDOM % 3)); r=$((((RANDOM << 15) | RANDOM)))
  if [ $((cycle % epoch_cycles)) -eq 0 ]; then delay=$((r % (name_us + 1))); how="a new pool"
  else delay=$((r % (run_us * 5 / 4 + 1))); how="the pool of $((cycle % epoch_cycles)) runs"; fi
  cycle=$((cycle + 1))
  start "$threads"
  nap_us "$delay"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null; status=$?
  what="cycle $cycle ($threads threads on $how, killed after ${delay} us)"
  check "$what" || break   # the journals no longer match the pool: later cycles would only repeat it
  new=$((acks - acks_before)); acks_before=$acks
  if [ "$status" -eq 0 ]; then
    outcome=completed
    [ "$how" != "a new pool" ] && run_us=$((run_us * 7 / 8))   # the machine got faster: aim earlier
  elif [ "$status" -ne 137 ]; then bad "$what: exited $status by itself: $(cat "$dir/out")"; outcome=failed
  elif [ ! -e "$pool" ]; then outcome=before
  elif [ "$new" -eq 0 ]; then outcome=opening
  elif [ "$new" -ge $((threads * (ops_total / threads))) ]; then outcome=closing
  else outcome=running; fi
  [ "$status" -eq 137 ] && kills=$((kills + 1))
  [ "$how" = "a new pool" ] && [ "$outcome" != before ] && name_us=$((name_us * 3 / 4))
  count[$outcome]=$((${count[$outcome]:-0} + 1))
  [ "${VERBOSE:-0}" = 1 ] && echo "$what: $outcome, $new acknowledged"
done

# ---- a complete run still works, and the check can fail --------------------------------
if [ "$failures" -eq 0 ]; then   # after a failed check, the journals no longer match the pool
  expect 0 'run: done' -- "$worker" run "$pool" "$journals" --threads 3 --ops 1000 --seed "$seed"
  expect 0 'unacknowledged 0 .*; ok' -- "$worker" check "$pool" "$journals"
  cp "$pool" "$dir/older"
  expect 0 'run: done' -- "$worker" run "$pool" "$journals" --threads 2 --ops 1000 --seed "$((seed + 1))"
  cp "$dir/older" "$pool"
  expect 1 'key [0-9]+: expected [0-9a-z]+, found [0-9a-z]+ \((get|for_each)\)' -- "$worker" check "$pool" "$journals"
  rm -rf "$d"
fi

# ---- summary ---------------------------------------------------------------------------------
echo "map_kill: first run names its pool after $((name_us / 1000)) ms;" \
     "a run of $ops_total operations takes $((run_us / 1000)) ms"
echo "map_kill: $kills kills in $cycle cycles (seed $seed): before ${count[before]}, opening ${count[opening]}," \
     "running ${count[running]}, closing ${count[closing]}, completed ${count[completed]};" \
     "unacknowledged operations found done $settled_done, not done $settled_not_done"
[ "$kills" -ge "$kills_wanted" ] && ok || bad "only $kills kills in $cycle cycles: the runs end before the delays"
[ "${count[running]}" -gt 0 ] && ok || bad "no kill landed while operations ran: the test proved nothing"
finish map_kill
