#!/usr/bin/env python3
"""The ferrite-flow corpus test (docs/flow.md, "Corpus").

Every program in corpus/ is a known persistence bug (NAME_bug.cpp) or its corrected twin
(NAME_ok.cpp). A bug program marks each line where a report is due with a trailing comment
`// flow-expect: PATTERN`. The test runs the driver on every program (JSON output) and fails
unless each bug program gets exactly its expected (line, pattern) reports and each twin gets
none; it also checks the text format on one program, and that -p (flags from a
compile_commands.json) with -j 2 reports the same as the files given one by one. Prints one
line per program. Last, with the build's own compiler: the annotation macros expand to
nothing without FERRITE_FLOW, and to clang annotate attributes with it.

    corpus_test.py DRIVER CORPUS_DIR CXX INCLUDE_DIR
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile
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
    driver, corpus, cxx, include = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3], sys.argv[4]
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
    # -p: the same programs through a compilation database, two at a time.
    some = [corpus / "missing_fence_bug.cpp", corpus / "helper_publish_bug.cpp", corpus / "double_flush_ok.cpp"]
    with tempfile.TemporaryDirectory() as build:
        db = [{"directory": str(corpus), "file": str(p),
               "command": f"c++ -std=c++20 {' '.join(FLAGS)} -DUNUSED=1 -c {p.name} -o {p.stem}.o"} for p in some]
        pathlib.Path(build, "compile_commands.json").write_text(json.dumps(db))
        run = subprocess.run([driver, "--json", "-j", "2", "-p", build, "--", *FLAGS], capture_output=True, text=True)
        got = {(pathlib.Path(r["file"]).name, r["line"], r["pattern"]) for r in json.loads(run.stdout or "[]")}
        want = {(p.name, line, pattern) for p in some for line, pattern in expected(p)}
        if run.returncode != 0 or got != want:
            failures.append(f"-p: expected {sorted(want)}, reported {sorted(got)} {run.stderr}")
    # The macros: nothing in an ordinary build.
    use = '#include "ferrite/pmem/flow.hpp"\nstruct s { int f FERRITE_FLOW_SENTINEL; int g FERRITE_FLOW_DURABLE; ' \
          'int h FERRITE_FLOW_SKIP; };\nFERRITE_FLOW_ROOT void r();\n'
    for defines, want_annotate in (([], False), (["-DFERRITE_FLOW"], True)):
        pre = subprocess.run([cxx, "-E", "-P", "-x", "c++", f"-I{include}", *defines, "-"], input=use,
                             capture_output=True, text=True)
        if pre.returncode != 0 or ("annotate" in pre.stdout) != want_annotate:
            failures.append(f"macros with {defines or 'no defines'}: {pre.stdout!r} {pre.stderr}")
    print(f"{len(bugs)} bug programs, {len(twins)} twins, {len(failures)} failure(s)")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
