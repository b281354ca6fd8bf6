#!/usr/bin/env bash
# End-to-end test of `ferrite crashtest`: --list, exit codes (0 clean, 3 violation or
# survivor, 2 usage), the JSON schemas of docs/cli.md, and that a violation's `reproduce:`
# line rebuilds it.
set -u
ferrite=$1
source "$(dirname "$0")/cli_test_lib.sh"
ft() { "$ferrite" --pool-dir "$dir" crashtest "$@"; }

expect 0 'Usage|usage' -- "$ferrite" crashtest --help
expect 0 '^log$' -- ft --list
expect 0 '0 violation' -- ft log --crashes 500
expect 3 'reproduce: ferrite crashtest buggy-log-no-fence --threads 2 --ops 40 --seed [0-9]+ --crash-at [0-9]+' -- ft buggy-log-no-fence --crashes 500
expect 0 '4/4 sites killed' -- ft log --mutate all --crashes 300
one_line_error 2 'no crash target' -- ft no-such-target
one_line_error 2 'name a target' -- ft
one_line_error 2 'moments' -- ft log --moments sometimes
one_line_error 2 'crash-at' -- ft log --moments random --crash-at 3
one_line_error 2 'not reached' -- ft log --mutate nowhere.cpp:1:1 --crashes 100

# A violation's reproduce line, run as printed, finds the same violation at one crash point.
out=$(ft buggy-transfer-recovery --crashes 3000 --threads 3)
line=$(grep -m1 'reproduce:' <<<"$out" | sed 's/.*reproduce: ferrite crashtest //')
what=$(grep -m1 '^VIOLATION' <<<"$out" | sed 's/^VIOLATION at crash point [0-9]*//')
# shellcheck disable=SC2086
again=$(ft $line)
if [ -n "$line" ] && grep -q '^crashtest .*: 1 crash points' <<<"$again" &&
   [ "$(grep -m1 '^VIOLATION' <<<"$again" | sed 's/^VIOLATION at crash point [0-9]*//')" = "$what" ]; then ok
else bad "reproduce line '$line' did not rebuild '$what': $again"; fi

# JSON schemas
json=$(ft transfer --crashes 300 --json)
if python3 - "$json" <<'PY'
import json, sys
j = json.loads(sys.argv[1])
assert j["schema"] == "ferrite.crashtest/1"
for k in ("target", "threads", "ops_per_thread", "moments", "seed", "crash_points", "recovery_crashes",
          "runs", "events", "violations", "violation_list", "sites", "site_list", "seconds"):
    assert k in j, k
assert j["target"] == "transfer" and j["crash_points"] == 300 and j["violations"] == 0
assert j["sites"] == len(j["site_list"]) > 0
for s in j["site_list"]:
    assert set(s) == {"id", "kind", "function", "calls", "double_flushes", "empty_fences"}, s
PY
then ok; else bad "crashtest --json schema: $json"; fi
json=$(ft buggy-log-no-fence --mutate all --crashes 200 --json)
if python3 - "$json" <<'PY'
import json, sys
j = json.loads(sys.argv[1])
assert j["schema"] == "ferrite.crashtest-mutation/1"
assert j["sites"] == len(j["verdicts"]) and j["killed"] + len(j["survivors"]) == j["sites"]
assert all(("repro" in v and "killed" in v) for v in j["verdicts"])
PY
then ok; else bad "crashtest --mutate --json schema: $json"; fi

finish crashtest
