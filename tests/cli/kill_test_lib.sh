# Shared by the tests that kill programs at random moments (sourced after cli_test_lib.sh,
# which makes $dir): sleeps and clocks without a fork, so that a delay of microseconds is one.
#   nap_us US       sleep US microseconds (a read that times out on a FIFO nobody writes)
#   tick            $now: microseconds since the epoch
#   await_name      poll every millisecond (at most 10 s) until $pool exists or process $pid ended
mkfifo "$dir/nap.fifo"
exec {nap_fd}<>"$dir/nap.fifo"
nap_us() { local s; printf -v s '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000)); read -r -t "$s" -u "$nap_fd" _ || true; }
tick() { now=${EPOCHREALTIME/./}; now=$((10#$now)); }
await_name() {
  local i st
  for ((i = 0; i < 10000; i++)); do
    [ -e "$pool" ] && return
    { read -r st < "/proc/$pid/stat"; } 2>/dev/null || return
    [[ $st == *") Z "* ]] && return
    nap_us 1000
  done
}
