#!/usr/bin/env python3
"""ferrite-flow on ferrite's own library (docs/flow.md, "On ferrite itself").

Runs the driver with -j 2 on every library source of the build's compile_commands.json
(the files under src/) and matches each report against the suppression list
(flow/suppressions.txt): a report is explained when an entry names its file, its pattern,
a part of its function's name and a part of the reported source line. Fails on any report
no entry explains, and on any entry that explains nothing (a stale entry hides the next
report on its line). Prints the reports, which entry took each, and the time.

    library_test.py DRIVER BUILD_DIR SOURCE_DIR SUPPRESSIONS
"""
import json
import os
import subprocess
import sys
import time


def load_suppressions(path):
    out = []
    with open(path) as f:
        for number, text in enumerate(f, start=1):
            text = text.strip()
            if not text or text.startswith("#"):
                continue
            fields = [x.strip() for x in text.split("|")]
            if len(fields) != 5 or not all(fields):
                sys.exit(f"{path}:{number}: want FILE | FUNCTION | PATTERN | CODE | REASON, got: {text}")
            out.append({"line": number, "file": fields[0], "function": fields[1], "pattern": fields[2],
                        "code": fields[3], "reason": fields[4], "used": 0})
    return out


def main(driver, build, source, suppressions_path):
    with open(os.path.join(build, "compile_commands.json")) as f:
        db = json.load(f)
    src = os.path.join(os.path.realpath(source), "src") + os.sep
    files = sorted({os.path.realpath(os.path.join(e["directory"], e["file"])) for e in db
                    if os.path.realpath(os.path.join(e["directory"], e["file"])).startswith(src)})
    if not files:
        print(f"no library source in {build}/compile_commands.json")
        return 1
    t0 = time.monotonic()
    run = subprocess.run([driver, "--json", "-j", "2", "-p", build, *files], capture_output=True, text=True,
                         cwd=source)
    seconds = time.monotonic() - t0
    if run.returncode != 0:
        print(run.stderr)
        return 1
    reports = json.loads(run.stdout)
    entries = load_suppressions(suppressions_path)
    lines_of = {}
    failed = 0
    for r in reports:
        path = os.path.realpath(os.path.join(source, r["file"]))
        rel = os.path.relpath(path, source)
        if path not in lines_of:
            with open(path) as f:
                lines_of[path] = f.read().splitlines()
        code = lines_of[path][r["line"] - 1] if r["line"] <= len(lines_of[path]) else ""
        match = next((e for e in entries if e["file"] == rel and e["pattern"] == r["pattern"] and
                      e["function"] in r["function"] and e["code"] in code), None)
        where = f"{rel}:{r['line']}:{r['column']}: [flow-{r['pattern']}] in {r['function']}"
        if match is None:
            failed += 1
            print(f"UNEXPLAINED {where}: {r['message']}\n    {code.strip()}")
        else:
            match["used"] += 1
            print(f"explained   {where} (suppressions line {match['line']})")
    for e in entries:
        if e["used"] == 0:
            failed += 1
            print(f"STALE       suppressions line {e['line']}: {e['file']} | {e['function']} | {e['pattern']} | "
                  f"{e['code']}: explains no report")
    print(f"{len(files)} library sources, {len(reports)} reports, {sum(e['used'] > 0 for e in entries)} of "
          f"{len(entries)} suppressions used, {failed} failure(s), {seconds:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
