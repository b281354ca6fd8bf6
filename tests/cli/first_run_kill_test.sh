#!/usr/bin/env bash
# Killed first runs (issue 16): a program killed at any moment of its first run, while it
# creates its pool, must leave no file or one that opens with its heap and catalog, and no
# temporary file may outlive the next create or open. This kills, at random moments,
#   readme   the README's first-run pattern (readme_first_run, compiled from README.md),
#   nv       examples/named_vectors.cpp,
#   eo       examples/exactly_once.cpp,
#   cli      `ferrite pool create NAME --size 16M --heap 8M`,
# each with O_TMPFILE (mode tmp) and with FERRITE_NO_TMPFILE=1 (mode hid: the hidden
# .ferrite-creating-* file), round robin. A cycle starts the program in a fresh directory,
# stops it (SIGSTOP) after a random delay, looks at what it holds, kills it (SIGKILL) and
# checks:
#   - the pool's name is absent, or `ferrite pool check --json` finds it consistent, with a
#     heap and a catalog and no unfinished setup;
#   - the program run again succeeds: it opens the heap, the catalog and its named objects
#     (a killed `pool create` is run again if it left no file, then named_vectors opens the
#     pool); exactly_once runs once more and finds every job once; `pool check` then lists
#     the named objects as valid;
#   - after that create or open the directory holds the pool and nothing else (`ls -A`).
# The delays: one cycle in five 0-5 ms; two in five anywhere from 0 to when the program names
# its pool (measured first, then updated from the cycles that watch for the name, and cut
# when such a delay outlived the run: a shared machine's load varies); two in five a random time after the name appears (polled), up to
# 1.25x the time from there to the end of a complete run (measured), so that the window
# between naming the pool and closing it is hit and some runs complete. Every third cycle of
# nv, eo and cli uses a name of 255 bytes (NAME_MAX). Before the cycles, planted orphans (an
# unlocked .ferrite-creating-* file of a dead pid, a legacy <name>.creating.<pid> of a dead pid) are removed
# by the next create and a locked one is kept.
#
# Where a kill landed, from what the stopped process held and what it left:
#   before     no pool file, no new file held: the program had not started building it
#   building   it held its unnamed (O_TMPFILE) or hidden file and the name did not exist yet
#   in-use     the name existed and the pool was not shut down cleanly (killed after the link)
#   closed     the name existed, shut down cleanly, the process not yet exited
#   completed  the program exited (0) before the kill: not a kill
# The cycles go on (up to twice the kills wanted) until building and in-use were both hit;
# the test fails if they never were, or if no kill left an orphan for the next create to
# remove: it cannot pass without having tested something.
#
# Before the cycles, named_vectors is also killed once at each step of the create (strace).
#
# FERRITE_KILLS: random kills wanted (default 50: with the 10 step kills, the CI tier's 60;
# docs/crash-testing.md, "Killed first runs", has the full run); FERRITE_KILL_SEED: the seed
# of the delays (printed; timings still vary).
# Usage: first_run_kill_test.sh FERRITE README_FIRST_RUN NAMED_VECTORS EXACTLY_ONCE
set -u
ferrite=$1; readme_first_run=$2; named_vectors=$3; exactly_once=$4
source "$(dirname "$0")/cli_test_lib.sh"
source "$(dirname "$0")/kill_test_lib.sh"   # nap_us, tick, await_name

kills_wanted=${FERRITE_KILLS:-50}
seed=${FERRITE_KILL_SEED:-$((($$ ^ ${EPOCHREALTIME/./}) % 32768))}
RANDOM=$seed
eo_jobs=20000  # per thread of exactly_once: its jobs take some 100 ms after the pool is named
printf -v long_name '%255s' ''; long_name=${long_name// /n}
targets=(readme nv eo cli)
modes=(tmp hid)

shopt -s dotglob nullglob   # entries=("$d"/*) is `ls -A` without a fork

# cmd_for TARGET DIR NAME: the program's command line in the array `cmd`, its pool in `pool`.
cmd_for() {
  local target=$1 d=$2 name=$3
  case $target in
    readme) cmd=(env "FERRITE_POOL_DIR=$d" "$readme_first_run"); pool="$d/orders" ;;
    nv)     cmd=("$named_vectors" "$d/$name"); pool="$d/$name" ;;
    eo)     cmd=("$exactly_once" "$d/$name" "$eo_jobs"); pool="$d/$name" ;;
    cli)    cmd=("$ferrite" pool create "$d/$name" --size 16M --heap 8M --layout named-vectors); pool="$d/$name" ;;
  esac
}
# in_mode MODE command...: run it with the create path MODE picks.
in_mode() {
  local mode=$1; shift
  if [ "$mode" = hid ]; then FERRITE_NO_TMPFILE=1 "$@"; else "$@"; fi
}
# start MODE: $cmd in the background, its output in $dir/out, its pid in $pid.
start() {
  if [ "$1" = hid ]; then (export FERRITE_NO_TMPFILE=1; exec "${cmd[@]}" > "$dir/out" 2>&1) &
  else (exec "${cmd[@]}" > "$dir/out" 2>&1) & fi
  pid=$!
}
# check_left WHAT: after a kill, the pool's name is absent or a complete store. Sets $clean
# ("" no file, 0 not shut down cleanly, 1 clean) and $orphans (the other entries of $d).
check_left() {
  local json e entries
  clean=""
  if [ -e "$pool" ]; then
    json=$("$ferrite" pool check "$pool" --json 2>&1)
    if [[ $json == *'"consistent": true'* && $json == *'"heap": true'* && $json == *'"catalog": true'* &&
          $json == *'"unfinished": false'* ]]; then ok
    else bad "$1: the file left behind is not a complete store: $json"; fi
    [[ $json == *'"clean_shutdown": true'* ]] && clean=1 || clean=0
  fi
  entries=("$d"/*); orphans=""
  for e in "${entries[@]}"; do [ "$e" != "$pool" ] && orphans+="${e##*/} "; done
}
# run_again TARGET MODE WHAT: the program run again opens (or creates) the pool with its heap,
# catalog and named objects; then the directory holds the pool and nothing else.
run_again() {
  local t=$1 m=$2 objects entries
  case $t in
    readme) expect 0 'jobs: dfc_queue' -- in_mode "$m" "${cmd[@]}"; objects=4 ;;  # prices, ticks, jobs, ages
    nv)     expect 0 'ids [0-9]+, ticks [0-9]+, jobs [0-9]+' -- in_mode "$m" "${cmd[@]}"; objects=3 ;;
    eo)     expect 0 'done|exactly once' -- in_mode "$m" "${cmd[@]}"
            expect 0 "exactly once: $((2 * eo_jobs)) jobs" -- in_mode "$m" "${cmd[@]}"; objects=1 ;;
    cli)    [ -e "$pool" ] || expect 0 'created' -- in_mode "$m" "${cmd[@]}"
            expect 0 'ids 400, ticks 400, jobs 400' -- in_mode "$m" "$named_vectors" "$pool"; objects=3 ;;
  esac
  expect 0 "heap consistent, $objects named object\\(s\\) valid" -- "$ferrite" pool check "$pool"
  entries=("$d"/*)
  [ "${#entries[@]}" -eq 1 ] && [ "${entries[0]}" = "$pool" ] && ok ||
    bad "$3: after the next create/open the directory holds more than the pool: ${entries[*]##*/} (right after the kill: $orphans)"
}

# ---- planted orphans: the next fallback create removes what no live create holds ----------
p="$dir/planted"; mkdir "$p"
true & dead_pid=$!; wait "$dead_pid"
: > "$p/.ferrite-creating-$dead_pid-0123456789ab"        # a dead create's, unlocked: removed
: > "$p/x.creating.$dead_pid"                              # an older version's, dead pid: removed
: > "$p/.ferrite-creating-$dead_pid-ba9876543210"        # locked: kept
: > "$p/.ferrite-creating-$$-00aa00aa00aa"                # a live pid's, between its open and its flock: kept
locked=".ferrite-creating-$dead_pid-ba9876543210"
# A live create's file: locked by a process that is the sleep itself (killing it frees the lock).
(exec 9< "$p/$locked"; flock -x 9; exec sleep 30) > /dev/null 2>&1 & holder=$!
for _ in $(seq 100); do flock -n "$p/$locked" true || break; nap_us 10000; done
expect 0 'created' -- in_mode hid "$ferrite" pool create "$p/$long_name" --size 1M --heap 512K
left=$(ls -A "$p" | sort | tr '\n' ' ')
want=$(printf '%s\n' "$locked" ".ferrite-creating-$$-00aa00aa00aa" "$long_name" | sort | tr '\n' ' ')
[ "$left" = "$want" ] && ok ||
  bad "planted orphans: after a create, left '$left', want '$want' (the dead pids' unlocked files gone, the locked one and the live pid's kept)"
kill "$holder"; wait "$holder" 2>/dev/null
expect 0 'heap consistent, 0 named object' -- "$ferrite" pool check "$p/$long_name"
rm -rf "$p"

# ---- a kill at each step of the create: strace injects SIGKILL at a system call ------------
# Random kills seldom land in a window of microseconds (between naming the new file and
# removing its hidden name, say), so each step of pool::create is also hit on purpose, in
# named_vectors (the create is the library's, the same for every program): it is killed at
# the first call of the system call that starts the step (locking the new file, allocating
# it, writing the header, syncing, naming it: linkat with O_TMPFILE; renameat2, or link and
# unlink without), then checked as after a random kill. A step a mode does not take (link
# where renameat2 works) is listed as not reached. Skipped where strace cannot trace (a
# container without ptrace).
declare -A count   # outcome -> n, TARGET/MODE/OUTCOME -> n, orphans: kills that left one
for o in before building in-use closed completed orphans; do count[$o]=0; done
step_kills=0; steps_not_reached=""
if strace -f -o /dev/null -e trace=none true 2>/dev/null; then
  for m in "${modes[@]}"; do
    calls="flock fallocate pwrite64 fsync linkat"
    [ "$m" = hid ] && calls="flock fallocate pwrite64 fsync renameat2 link unlink"
    for sc in $calls; do
      d="$dir/step"; mkdir "$d"; cmd_for nv "$d" p
      # LeakSanitizer cannot run under ptrace: a sanitizer build checks leaks everywhere else.
      ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
        in_mode "$m" strace -f -o /dev/null -e trace="$sc" -e inject="$sc:signal=KILL:when=1" \
        "${cmd[@]}" > "$dir/out" 2>&1
      status=$?
      what="nv/$m killed at its first $sc"
      if [ "$status" -eq 0 ]; then steps_not_reached+=" $m/$sc"
      elif [ "$status" -ne 137 ]; then bad "$what: exited $status: $(cat "$dir/out")"
      else step_kills=$((step_kills + 1)); fi
      check_left "$what"
      [ -n "$orphans" ] && count[orphans]=$((count[orphans] + 1))
      run_again nv "$m" "$what"
      rm -rf "$d"
    done
  done
  echo "first_run_kill: $step_kills kills at a step of the create; not reached:${steps_not_reached:- none}"
  [ "$step_kills" -ge 10 ] && ok || bad "only $step_kills kills at a step of the create"
else
  echo "first_run_kill: strace cannot trace here: the kills at each step of the create are skipped"
fi

# ---- when a first run names its pool and when it ends, per target and mode -----------------
declare -A name_us after_us   # from its start to the name's appearance; from there to its end
for t in "${targets[@]}"; do
  for m in "${modes[@]}"; do
    d="$dir/measure"; mkdir "$d"; cmd_for "$t" "$d" p
    tick; t0=$now
    start "$m"; await_name; tick; tl=$now
    wait "$pid" || bad "$t/$m: a complete first run failed: $(cat "$dir/out")"
    tick; name_us[$t/$m]=$((tl - t0)); after_us[$t/$m]=$((now - tl))
    rm -rf "$d"
  done
done

# ---- the kill cycles -----------------------------------------------------------------------
kills=0; cycle=0
# Until the kills wanted are done and both windows were hit (a few more cycles if not).
while { [ "$kills" -lt "$kills_wanted" ] || [ "${count[building]}" -eq 0 ] || [ "${count[in-use]}" -eq 0 ]; } &&
      [ "$cycle" -lt $((2 * kills_wanted + 16)) ]; do
  t=${targets[cycle % 4]}; m=${modes[cycle / 4 % 2]}
  name=p; [ "$t" != readme ] && [ $((cycle / 8 % 3)) -eq 2 ] && name=$long_name
  cycle=$((cycle + 1))
  d="$dir/c$cycle"; mkdir "$d"; cmd_for "$t" "$d" "$name"
  r=$((((RANDOM << 15) | RANDOM))); pick=$((RANDOM % 5))
  tick; t0=$now
  start "$m"
  if [ "$pick" -eq 0 ]; then delay=$((r % 5001)); how=early
  elif [ "$pick" -le 2 ]; then delay=$((r % (name_us[$t/$m] + 1))); how="before the name"
  else
    await_name; tick; name_us[$t/$m]=$(((3 * name_us[$t/$m] + now - t0) / 4))
    span=$((after_us[$t/$m] * 5 / 4)); [ "$span" -lt 2000 ] && span=2000
    delay=$((r % span)); how="after the name"
  fi
  nap_us "$delay"
  held=0
  if kill -STOP "$pid" 2>/dev/null; then
    # Its new file: "DIR/#inode (deleted)" with O_TMPFILE, DIR/.ferrite-creating-* without.
    fds=$(ls -l "/proc/$pid/fd/" 2>/dev/null)
    [[ $fds == *" -> $d/#"*" (deleted)"* || $fds == *" -> $d/.ferrite-creating-"* ]] && held=1
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null; status=$?
  what="$t/$m cycle $cycle (delay ${delay} us $how, name of ${#name} bytes)"
  check_left "$what"
  if [ "$status" -eq 0 ]; then outcome=completed
  elif [ "$status" -ne 137 ]; then bad "$what: exited $status by itself: $(cat "$dir/out")"; outcome=failed
  elif [ -z "$clean" ] && [ "$held" -eq 1 ]; then outcome=building
  elif [ -z "$clean" ]; then outcome=before
  elif [ "$clean" -eq 0 ]; then outcome=in-use
  else outcome=closed; fi
  [ "$status" -eq 137 ] && kills=$((kills + 1))
  # A run that ended before a delay meant to fall before its name: the machine got faster.
  [ "$how" = "before the name" ] && [ "$outcome" = completed ] && name_us[$t/$m]=$((name_us[$t/$m] * 3 / 4))
  [ -n "$orphans" ] && count[orphans]=$((count[orphans] + 1))
  count[$outcome]=$((${count[$outcome]:-0} + 1))
  count[$t/$m/$outcome]=$((${count[$t/$m/$outcome]:-0} + 1))
  run_again "$t" "$m" "$what"
  rm -rf "$d"
done

# ---- summary -------------------------------------------------------------------------------
for t in "${targets[@]}"; do
  for m in "${modes[@]}"; do
    line="  $t/$m (named after $((name_us[$t/$m] / 1000)) ms, then $((after_us[$t/$m] / 1000)) ms to its end):"
    for o in before building in-use closed completed; do line+=" $o ${count[$t/$m/$o]:-0}"; done
    echo "$line"
  done
done
echo "first_run_kill: $kills random kills in $cycle cycles (seed $seed): before ${count[before]}," \
     "building ${count[building]}, in-use ${count[in-use]}, closed ${count[closed]}," \
     "completed ${count[completed]}; $((kills + step_kills)) kills in all, ${count[orphans]} left an orphan"
[ "$kills" -ge "$kills_wanted" ] && ok || bad "only $kills kills in $cycle cycles: the delays end too late"
[ "${count[building]}" -gt 0 ] && ok || bad "no kill landed while a pool was being built: the test proved nothing"
[ "${count[in-use]}" -gt 0 ] && ok || bad "no kill landed while a new pool was named and in use"
[ "${count[orphans]}" -gt 0 ] && ok ||
  bad "no fallback create was killed with its hidden file: the orphan sweep went untested"
finish first_run_kill
