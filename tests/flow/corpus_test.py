#!/usr/bin/env python3
"""The ferrite-flow corpus test (docs/flow.md, "Corpus").

Every program in corpus/ is a known persistence bug (NAME_bug.cpp) or its corrected twin
(NAME_ok.cpp). A bug program marks each line where a report is due with a trailing comment
`// flow-expect: PATTERN`. The test runs the driver on every program (JSON output) and fails
unless each bug program gets exactly its expected (line, pattern) reports and each twin gets
none; it also checks the text format on one program. Prints one line per program.

    corpus_test.py DRIVER CORPUS_DIR
"""
import json
import pathlib
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

FLAGS = ["-mclwb", "-mclflushopt"]
EXPECT = re.compile(r"//\s*flow-expect:\s*([a-z-]+)")


def expected(path):
    out = set()
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        for m in EXPECT.finditer(text):
            out.add((number, m.group(1)))
    return out


def analyse(driver, path):
    run = subprocess.run([driver, "--json", str(path), "--", *FLAGS], capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr
    return {(r["line"], r["pattern"]) for r in json.loads(run.stdout)}, run.stdout


def main():
    driver, corpus = sys.argv[1], pathlib.Path(sys.argv[2])
    programs = sorted(corpus.glob("*_bug.cpp")) + sorted(corpus.glob("*_ok.cpp"))
    failures = []
    bugs = sorted(p.name[:-len("_bug.cpp")] for p in corpus.glob("*_bug.cpp"))
    twins = sorted(p.name[:-len("_ok.cpp")] for p in corpus.glob("*_ok.cpp"))
    if bugs != twins:
        failures.append(f"bug programs and twins do not pair up: {sorted(set(bugs) ^ set(twins))}")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda p: analyse(driver, p), programs))
    for path, (got, raw) in zip(programs, results):
        want = expected(path)
        if got is None:
            failures.append(f"{path.name}: the driver failed: {raw}")
            continue
        if path.name.endswith("_bug.cpp") and not want:
            failures.append(f"{path.name}: a bug program without a flow-expect line")
        ok = got == want
        print(f"{'ok  ' if ok else 'FAIL'} {path.name:40} expected {sorted(want)} reported {sorted(got)}")
        if not ok:
            failures.append(f"{path.name}: expected {sorted(want)}, reported {sorted(got)}\n{raw}")
    # The text format: file:line:col: warning: message [flow-pattern]
    sample = corpus / "missing_flush_bug.cpp"
    text = subprocess.run([driver, str(sample), "--", *FLAGS], capture_output=True, text=True).stdout
    if not re.fullmatch(r"\S*missing_flush_bug\.cpp:\d+:\d+: warning: .+ \[flow-durability\]\n", text):
        failures.append(f"text format: {text!r}")
    print(f"{len(bugs)} bug programs, {len(twins)} twins, {len(failures)} failure(s)")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
