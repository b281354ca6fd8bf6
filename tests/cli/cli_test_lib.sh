# Shared by the CLI tests (sourced): a scratch pool directory, pass/fail counting, and the
# two assertions every command test uses. Expects $ferrite to be set.
dir=$(mktemp -d /dev/shm/ferrite-cli-test.XXXXXX)
trap 'rm -rf "$dir"' EXIT
failures=0; passed=0
ok()   { passed=$((passed + 1)); }
bad()  { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect STATUS PATTERN -- command...: exit status and a regex on stdout+stderr
expect() {
  local want=$1 pattern=$2; shift 3
  local out; out=$("$@" 2>&1); local got=$?
  if [ "$got" -ne "$want" ]; then bad "$* -> exit $got, wanted $want: $out"; return; fi
  if ! grep -Eq -- "$pattern" <<<"$out"; then bad "$* -> output lacks /$pattern/: $out"; return; fi
  ok
}
# one_line_error STATUS PATTERN -- command...: fails with exactly one line on stderr
one_line_error() {
  local want=$1 pattern=$2; shift 3
  local err; err=$("$@" 2>&1 >/dev/null); local got=$?
  local lines; lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$got" -ne "$want" ] || [ "$lines" -ne 1 ] || ! grep -Eq -- "$pattern" <<<"$err"; then
    bad "$* -> exit $got (wanted $want), $lines stderr lines: $err"; return; fi
  ok
}

finish() {
  echo "$1: $passed passed, $failures failed"
  [ "$failures" -eq 0 ]
}
