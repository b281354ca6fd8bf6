#!/usr/bin/python3
"""ferrite-flow against flush mutation testing: the agreement table of docs/flow.md (issue 22).

    scripts/flow-agreement.py [-B build/release] [--targets a,b,...] [--crashes 2000]
        [--jobs 2] [--max-units 3] [--json out.json] [--markdown out.md] [--ground-truth earlier.json]
        [--sites REGEX]

Ground truth: for every persistence site (pwb, pfence, psync, NT store) that
`ferrite crashtest TARGET --mutate all` switches off, the crash simulator says whether the
site is necessary (the campaign with the site off finds a violation: "killed") or redundant.
A site killed by any target is necessary.

Static side: for every such site, the script removes the call from the source (in a copy:
clang's -ivfsoverlay puts the copy in place of the file, so the tree is never touched), runs
ferrite-flow on the translation units that contain the site (the .cpp itself, or the units
of the CLI's build whose dependencies name the header and that hold the function around
the site, as the plugin lists them with FERRITE_FLOW_FUNCTIONS; at most --max-units of
them, library units first) and compares the reports with the unmutated run's: a report that was not there
before is ferrite-flow finding the removal. Removing a pwb / pfence / psync replaces the call
by nothing; removing an NT store keeps the data as a plain store (nt_store: `*p = v`,
nt_memcpy and nt_copy_lines: memcpy), as the simulator does. A site in a call to a helper that hands its
caller's location to its pwb (linkfree's flush_insert / flush_delete) is removed by keeping
the helper's fence only (the simulator switches off that caller's write-back alone).

Table: necessary sites found (recall), redundant sites called double flushes, and every
report of the unmutated runs, each contradicted by the simulator (the campaigns with no site
switched off pass: ferrite has no known persistence bug), so the false-positive rate is
contradicted / (contradicted + confirmed), a confirmed report being the first new report of
a killed site. Needs the CLI (target ferrite_cli) and ferrite-flow built in the build
folder; the tree's line numbers must match the CLI's (build it first).
"""
import argparse
import collections
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REMOVED = "static_cast<void>(0)"
PRIMITIVES = {"pwb", "pwb_range", "pwb_range_pair", "pfence", "psync", "nt_store", "nt_memcpy", "nt_copy_lines"}
# Helpers that pass their caller's location on to a pwb (the site is the caller's): the
# mutant keeps the rest of the helper inline, its fence and (flush_delete) its declaration of
# the mark stored elsewhere (FERRITE_FLOW_STORED_ELSEWHERE of the node, OBJ), and drops its
# write-back (linkfree_node.hpp).
FORWARDING = {"flush_insert": "ferrite::pmem::pfence()",
              "flush_delete": "(FERRITE_FLOW_STORED_ELSEWHERE(OBJ, sizeof *(OBJ)), ferrite::pmem::pfence())"}


def crashtest(cli, target, crashes):
    t0 = time.monotonic()
    run = subprocess.run([cli, "crashtest", target, "--mutate", "all", "--crashes", str(crashes), "--json"],
                         capture_output=True, text=True, cwd=ROOT)
    try:
        out = json.loads(run.stdout)
    except json.JSONDecodeError:
        sys.exit(f"crashtest {target} failed (status {run.returncode}): {run.stderr[-2000:]}")
    return out, time.monotonic() - t0


def ground_truth(cli, targets, crashes, jobs):
    sites, timings = {}, {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda t: (t, *crashtest(cli, t, crashes)), targets))
    for target, out, seconds in results:
        timings[target] = round(seconds, 1)
        for v in out["verdicts"]:
            s = sites.setdefault(v["id"], {"id": v["id"], "kind": v["kind"], "function": v["function"],
                                           "killed": False, "targets": [], "double_flushes": 0})
            s["killed"] |= v["killed"]
            s["targets"].append(target)
            s["double_flushes"] += v.get("double_flushes", 0)
    return sites, timings


def seeded_bugs(cli, crashes):
    """The seeded buggy-* targets, each run once unmutated: target -> violations found."""
    listed = subprocess.run([cli, "crashtest", "--list"], capture_output=True, text=True).stdout.split()
    out = {}
    for t in (t for t in listed if t.startswith("buggy-")):
        run = subprocess.run([cli, "crashtest", t, "--crashes", str(crashes), "--json"], capture_output=True, text=True,
                             cwd=ROOT)
        try:
            out[t] = json.loads(run.stdout)["violations"]
        except (json.JSONDecodeError, KeyError):
            sys.exit(f"crashtest {t} failed (status {run.returncode}): {run.stderr[-2000:]}")
    return out


def seeded_target(rel, line, buggy):
    """The buggy-* target whose seeded bug a report at rel:line is: the line carries a `// BUG:`
    comment, and the nearest `case` / `if (` line above it (12 lines at most) names the target's
    flavour (buggy-log-no-flush: `case flavour::no_flush:` in log_target.cpp; buggy-transfer-recovery:
    `if (buggy_recovery_)` in transfer_target.cpp). None for any other report."""
    try:
        with open(os.path.join(ROOT, rel)) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    if not 0 < line <= len(lines) or "// BUG:" not in lines[line - 1]:
        return None
    stem = os.path.basename(rel).split("_")[0]
    guard = next((lines[i] for i in range(line - 1, max(line - 13, -1), -1)
                  if re.search(r"\bcase\b|\bif \(", lines[i])), "")
    for t in sorted(buggy):
        rest = t[len("buggy-"):]
        if rest.startswith(stem + "-") and rest[len(stem) + 1:].replace("-", "_") in guard:
            return t
    return None


def units_by_header(build):
    """Each header's translation units, from ninja's dependency log (the built objects)."""
    deps = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True).stdout
    with open(os.path.join(build, "compile_commands.json")) as f:
        db = json.load(f)
    by_object = {}
    for e in db:
        out = e.get("output")
        if out is None:
            m = re.search(r"-o (\S+)", e.get("command", ""))
            out = m.group(1) if m else None
        if out:
            by_object[os.path.normpath(out)] = os.path.realpath(os.path.join(e["directory"], e["file"]))
    headers = collections.defaultdict(set)
    unit = None
    for line in deps.splitlines():
        if line and not line.startswith(" "):
            unit = by_object.get(os.path.normpath(line.split(":")[0]))
        elif unit and line.strip():
            headers[os.path.realpath(os.path.join(build, line.strip()))].add(unit)
    return headers


def unit_rank(path):
    rel = os.path.relpath(path, ROOT)
    order = ("src/", "crash/", "apps/")
    return (next((i for i, p in enumerate(order) if rel.startswith(p)), len(order)), rel)


def site_units(site_file, headers):
    """The units that include the site's file (the file itself for a .cpp), tests and benches left out."""
    path = os.path.realpath(os.path.join(ROOT, site_file))
    if path.endswith(".cpp"):
        return [path]
    return sorted(u for u in headers.get(path, ()) if not os.path.relpath(u, ROOT).startswith(("tests/", "bench/")))


def source_path(file, unit):
    """A debug-info file name as a path from the repository root (None outside it)."""
    for base in (ROOT, os.path.dirname(unit)):
        path = os.path.realpath(os.path.join(base, file))
        if os.path.exists(path) and path.startswith(ROOT + os.sep):
            return os.path.relpath(path, ROOT)
    return None


def split_args(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def remove_site(source, line, column):
    """The source with the call whose '(' is at line:column removed (newlines kept)."""
    lines = source.split("\n")
    at = sum(len(l) + 1 for l in lines[:line - 1]) + column - 1
    if source[at] != "(":
        raise ValueError(f"no call at {line}:{column}")
    start = at
    while start > 0 and (source[start - 1].isalnum() or source[start - 1] in "_:"):
        start -= 1
    name = source[start:at].split("::")[-1]
    if name not in PRIMITIVES and name not in FORWARDING:
        raise ValueError(f"the call at {line}:{column} is {name}(), not a persistence primitive")
    obj = "this"
    if name in FORWARDING:  # the object expression goes too: `curr->flush_insert()`
        while source[start - 2:start] == "->" or source[start - 1:start] == ".":
            arrow = source[start - 2:start] == "->"
            member_at = start
            start -= 2 if arrow else 1
            while start > 0 and (source[start - 1].isalnum() or source[start - 1] in "_"):
                start -= 1
            obj = source[start:member_at - (2 if arrow else 1)]
            obj = obj if arrow else f"&{obj}"
    depth, end = 0, at
    while True:
        ch = source[end]
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            break
        end += 1
    args = split_args(source[at + 1:end])
    if name in FORWARDING:
        repl = FORWARDING[name].replace("OBJ", obj)
    elif name == "nt_store":
        repl = f"static_cast<void>(*({args[0]}) = ({args[1]}))"
    elif name in ("nt_memcpy", "nt_copy_lines"):
        repl = f"static_cast<void>(__builtin_memcpy({args[0]}, {args[1]}, {args[2]}))"
    else:
        repl = REMOVED
    removed = source[start:end + 1]
    return source[:start] + repl + "\n" * removed.count("\n") + source[end + 1:], name


def flow(driver, build, units, extra, jobs=1):
    run = subprocess.run([driver, "--json", "-j", str(jobs), "-p", build, *units, "--", *extra],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-3000:])
    return json.loads(run.stdout)


def key(r):
    return (os.path.relpath(os.path.realpath(r["file"]), ROOT), r["line"], r["pattern"])


def named_lines(r):
    """The lines of the stores a report's message names (a pair report's pending store)."""
    return tuple(sorted({int(m) for m in re.findall(r"\bat (\d+):\d+", r["message"])}))


def full_key(r):
    """A report and the stores it names: a mutant's pair report at the sentinel of an unmutated
    one, about another store, is a new report (the seeded bug of log_target.cpp names 109 at
    the count's store; removing the correct flavour's pfence names 100 there)."""
    return (*key(r), named_lines(r))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-B", "--build", default=os.path.join(ROOT, "build/release"))
    ap.add_argument("--targets", help="comma-separated crashtest targets (default: all but the seeded buggy-*)")
    ap.add_argument("--crashes", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-units", type=int, default=3)
    ap.add_argument("--ground-truth", help="take the simulator's verdicts from an earlier --json output "
                    "instead of running the mutation campaigns (the tree must not have moved since)")
    ap.add_argument("--sites", help="only the sites whose id (FILE:LINE:COL) matches this regular expression, "
                    "and only their units' unmutated reports (fast iteration; the table is then not the full one)")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    cli = os.path.join(build, "tools/ferrite")
    driver = os.path.join(build, "flow/ferrite-flow")
    targets = a.targets.split(",") if a.targets else [
        t for t in subprocess.run([cli, "crashtest", "--list"], capture_output=True, text=True).stdout.split()
        if not t.startswith("buggy-")]

    t0 = time.monotonic()
    if a.ground_truth:
        with open(a.ground_truth) as f:
            earlier = json.load(f)
        fields = ("id", "kind", "function", "killed", "targets", "double_flushes")
        sites = {r["id"]: {k: r[k] for k in fields} for r in earlier.get("ground_truth", earlier["sites"])}
        timings, targets = earlier["summary"]["per_target_s"], earlier["summary"]["targets"]
        a.crashes = earlier["summary"]["crashes"]
        t_mutation = earlier["summary"]["timings_s"]["mutation"]
    else:
        sites, timings = ground_truth(cli, targets, a.crashes, a.jobs)
        t_mutation = time.monotonic() - t0
    print(f"mutation testing: {len(targets)} targets, {len(sites)} sites, {t_mutation:.0f} s", file=sys.stderr)
    every_site = list(sites.values())  # the whole ground truth, kept in --json for a later --ground-truth
    if a.sites:
        sites = {k: v for k, v in sites.items() if re.search(a.sites, k)}
        print(f"--sites {a.sites}: {len(sites)} sites", file=sys.stderr)

    headers = units_by_header(build)
    candidates = {sid: site_units(sid.rsplit(":", 2)[0], headers) for sid in sites}
    all_units = sorted({u for us in candidates.values() for u in us})
    t1 = time.monotonic()
    # The unmutated reports of each unit, and the functions each unit holds (the plugin lists
    # them): a site is checked on the units that hold the function around it.
    listing = os.path.join(tempfile.mkdtemp(prefix="flow-agreement-"), "functions.txt")
    os.environ["FERRITE_FLOW_FUNCTIONS"] = listing
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        runs = list(pool.map(lambda u: flow(driver, build, [u], []), all_units))
    del os.environ["FERRITE_FLOW_FUNCTIONS"]
    per_unit = {u: collections.Counter(key(r) for r in reports) for u, reports in zip(all_units, runs)}
    per_unit_full = {u: collections.Counter(full_key(r) for r in reports) for u, reports in zip(all_units, runs)}
    named = collections.defaultdict(set)  # report -> the lines of the stores its message names
    for reports in runs:
        for r in reports:
            named[key(r)].update(named_lines(r))
    held = collections.defaultdict(set)  # (file, first line of a function) -> units
    starts = collections.defaultdict(set)  # file -> first lines of its functions
    with open(listing, "a+") as f:  # a+: an empty subset runs no unit and leaves no listing
        f.seek(0)
        for row in f:
            unit, file, line = row.rstrip("\n").split("\t")
            rel = source_path(file, unit)
            if rel is not None:
                held[(rel, int(line))].add(os.path.realpath(unit))
                starts[rel].add(int(line))
    plan = {}
    for sid in sites:
        rel, line, _ = sid.rsplit(":", 2)
        first = max((l for l in starts.get(rel, ()) if l <= int(line)), default=None)
        units = [u for u in candidates[sid] if first is not None and u in held[(rel, first)]]
        plan[sid] = sorted(units, key=unit_rank)[:a.max_units]
    baseline = collections.Counter()
    for counter in per_unit.values():  # each report once, however many units show it
        for k in counter:
            baseline[k] = 1
    print(f"unmutated: {len(all_units)} units, {len(baseline)} distinct reports, {time.monotonic() - t1:.0f} s",
          file=sys.stderr)

    tmp = tempfile.mkdtemp(prefix="flow-agreement-")

    def judge(item):
        i, sid = item
        rel, line, col = sid.rsplit(":", 2)
        units = plan[sid]
        row = {**sites[sid], "units": [os.path.relpath(u, ROOT) for u in units], "reported": False, "new": []}
        if not units:
            row["note"] = "no translation unit of the build contains it"
            return row
        path = os.path.join(ROOT, rel)
        with open(path) as f:
            source = f.read()
        try:
            mutated, name = remove_site(source, int(line), int(col))
        except (ValueError, IndexError) as e:
            row["note"] = f"not removed: {e}"
            return row
        copy = os.path.join(tmp, f"{i}-{os.path.basename(rel)}")
        with open(copy, "w") as f:
            f.write(mutated)
        overlay = os.path.join(tmp, f"{i}.yaml")
        with open(overlay, "w") as f:
            json.dump({"version": 0, "use-external-names": False,
                       "roots": [{"name": path, "type": "file", "external-contents": copy}]}, f)
        try:
            reports = flow(driver, build, units, [f"-ivfsoverlay{overlay}"])
        except RuntimeError as e:
            row["note"] = "the mutant does not compile: " + next(
                (l for l in str(e).splitlines() if "error:" in l), str(e)[:200])
            return row
        before = sum((per_unit_full[u] for u in units), collections.Counter())
        new = collections.Counter(full_key(r) for r in reports) - before
        row["removed"] = name
        row["new"] = sorted({f"{k[0]}:{k[1]} [{k[2]}]" for k in new})
        row["reported"] = bool(new)
        row["double_flush"] = any(k[2] == "double-flush" for k in new)
        return row

    t2 = time.monotonic()
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        rows = list(pool.map(judge, enumerate(sorted(sites))))
    t_static = time.monotonic() - t2

    # Reports about a store on a seeded bug's line (crash/*: `// BUG:`): a durability report on
    # it, a pair or log report naming it; confirmed when its buggy-* target's unmutated campaign finds a
    # violation, contradicted otherwise (docs/flow.md).
    buggy = seeded_bugs(cli, a.crashes)
    seeded = {}
    for k in baseline:
        lines = sorted(named[k]) if k[2] in ("pair", "log") else [k[1]]  # the store the report is about
        t = next((t for t in (seeded_target(k[0], line, buggy) for line in lines) if t), None)
        if t is not None and buggy[t] > 0:
            seeded[f"{k[0]}:{k[1]} [{k[2]}]"] = t
    necessary = [r for r in rows if r["killed"]]
    redundant = [r for r in rows if not r["killed"]]
    found = [r for r in necessary if r["reported"]]
    unknown = [r for r in redundant if r["reported"]]  # reported, but the simulator says redundant
    contradicted = len(baseline) - len(seeded) + len(unknown)
    confirmed = len(found) + len(seeded)
    summary = {
        "targets": targets, "crashes": a.crashes, "timings_s": {"mutation": round(t_mutation), "flow_baseline":
                                                                round(t2 - t1), "flow_mutants": round(t_static)},
        "per_target_s": timings, "sites": len(rows), "necessary": len(necessary), "redundant": len(redundant),
        "found": len(found), "confirmed": confirmed, "recall": len(found) / len(necessary) if necessary else None,
        "baseline_reports": sorted(f"{k[0]}:{k[1]} [{k[2]}]" for k in baseline),
        "contradicted": contradicted, "seeded_confirmed": seeded, "buggy_targets": buggy, "false_positive_rate": contradicted / (contradicted + confirmed)
        if contradicted + confirmed else None,
        "redundant_called_double_flush": sum(r.get("double_flush", False) for r in redundant),
        "subset": a.sites,
    }
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"summary": summary, "sites": rows, "ground_truth": every_site}, f, indent=1)
    md = markdown(summary, rows)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(md)
    print(md)
    return 0


def markdown(s, rows):
    out = [f"Sites: {s['sites']} ({s['necessary']} necessary, {s['redundant']} redundant), "
           f"targets: {len(s['targets'])}, {s['crashes']} crash points per site.", "",
           "| site | kind | necessary | ferrite-flow reports its removal | new report(s) |", "|---|---|---|---|---|"]
    if s.get("subset"):
        out.insert(0, f"Subset: only the sites matching `{s['subset']}` (--sites), not the full table.\n")
    for r in sorted(rows, key=lambda r: r["id"]):
        note = r.get("note") or ", ".join(r["new"][:2]) + (" ..." if len(r["new"]) > 2 else "")
        out.append(f"| `{r['id']}` | {r['kind']} | {'yes' if r['killed'] else 'no'} | "
                   f"{'yes' if r['reported'] else 'no'} | {note} |")
    by_dir = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        if r["killed"]:
            d = r["id"].split("/")[0]
            by_dir[d][0] += 1
            by_dir[d][1] += r["reported"]
    out += ["", "| sites in | necessary | found | recall |", "|---|---|---|---|"]
    for d, (n, f) in sorted(by_dir.items()):
        out.append(f"| `{d}/` | {n} | {f} | {100 * f / n:.0f}% |")
    rec = s["recall"]
    fpr = s["false_positive_rate"]
    out += ["", f"Recall on necessary sites: {s['found']} / {s['necessary']}"
                f" = {100 * rec:.0f}%." if rec is not None else "Recall: no necessary site.",
            f"Reports contradicted by the simulator: {s['contradicted']} ({len(s['baseline_reports']) - len(s['seeded_confirmed'])} "
            f"of the {len(s['baseline_reports'])} on the unmutated code, the rest on redundant sites' removal); confirmed: "
            f"{s['found'] + len(s['seeded_confirmed'])} ({s['found']} killed sites' removal, {len(s['seeded_confirmed'])} "
            f"seeded bugs their buggy-* target fails on: {', '.join(f'{k} ({v})' for k, v in sorted(s['seeded_confirmed'].items())) or 'none'}); "
            f"false-positive rate {100 * fpr:.0f}%." if fpr is not None else "No report.",
            f"Redundant sites ferrite-flow calls a double flush: {s['redundant_called_double_flush']} / {s['redundant']}.",
            f"Time: mutation testing {s['timings_s']['mutation']} s, ferrite-flow unmutated "
            f"{s['timings_s']['flow_baseline']} s, on the mutants {s['timings_s']['flow_mutants']} s."]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
