#!/usr/bin/python3
"""ferrite-kv's engines against memcached 1.6 under one load generator, in one run (issue 20):
get-heavy (90/10) and set-heavy (50/50) mixes, 100 B and 4 KiB values, 1 and 2 server threads,
throughput and p99 latency side by side.

    scripts/kv-bench.py build/release/apps/kv/ferrite-kv [--servers memcached,volatile,soft]
        [--reps 5] [--seconds 6] [--warmup 1] [--threads 1,2] [--values 100,4096]
        [--mixes get-heavy,set-heavy] [--clients 2] [--connections 8] [--depth 1] [--keys 50000]
        [--csv summary.csv] [--json runs.json] [--plot figure.png]

The load generator is ferrite-kv-load (apps/kv/load, found beside the server binary unless
--load says where): it checks every reply and reports latency percentiles, which memcaslap
(mean latency only) cannot. Every server starts fresh for each measurement (a durable engine on
a new pool in /dev/shm), the generator sets every key once (--prefill) so gets hit, warms up
for --warmup seconds and measures for --seconds.

Repetitions are interleaved: each repetition runs every server once, in an order rotated by
one each time, so a slow minute of the machine lands on every server alike. The table gives
medians over the repetitions, each server's median throughput divided by memcached's from the
same run, and its median p99 beside memcached's. A run with a wrong reply or a broken
connection is reported and makes the exit status 1.

Servers are named in SERVERS below (a name and the options that select it): memcached,
volatile, soft, cpnvm-epoch and cpnvm-sync (`--engine cpnvm --durability epoch|sync`); add a
line there for a new engine.

On a 2-core machine the load generator shares the cores with the server: the figures compare
servers under the same squeeze, not what a server does with cores of its own (ferrite-kv-load
itself takes about 0.8 s of CPU per second, nine tenths of it in the kernel: send, recv, epoll).

The default load, 2 client threads x 8 connections with one request outstanding on each (a
closed loop, as most memcached clients talk), is the knee found on that machine (100 B values,
2 server threads, 2 or 3 repetitions of 3-4 s): 2 x 4 connections left about 15-20% of both
servers' throughput unused; 2 x 32 gained memcached 14% and the volatile engine nothing while
p99 tripled to 3-4 ms, which is then queueing among the connections, not the server; 1 x 16
(one client thread) cut memcached's throughput by a quarter and put the volatile engine ahead
of it on gets. A pipelined load (--depth 4) is a different question, how well a server batches
a connection's pipelined requests, and answers it very differently: memcached 160k ops/s, the
volatile engine 294k.
"""
import argparse
import csv
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

MIXES = {"get-heavy": 0.9, "set-heavy": 0.5}

# name -> (program, options). "ferrite-kv" is the server binary given on the command line;
# a durable engine (one that takes --pool) gets a fresh pool file for every start.
SERVERS = {
    "memcached": ("memcached", []),
    "volatile": ("ferrite-kv", ["--engine", "volatile"]),
    "soft": ("ferrite-kv", ["--engine", "soft"]),
    "cpnvm-epoch": ("ferrite-kv", ["--engine", "cpnvm", "--durability", "epoch"]),
    "cpnvm-sync": ("ferrite-kv", ["--engine", "cpnvm", "--durability", "sync"]),
}
DURABLE = {"soft", "cpnvm-epoch", "cpnvm-sync"}
MEMORY_MB = 1024   # item memory of every server (-m)
POOL_SIZE = "1g"   # pool of a durable engine: 767 MiB of items, 50,000 4 KiB items take 400 (8 KiB blocks)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, process, timeout=30.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the server exited with status %d before listening" % process.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("no server on port %d after %.0f s" % (port, timeout))


class Server:
    """One server process, started fresh; stop() ends it and removes its pool."""

    def __init__(self, name, binary, threads, work):
        program, options = SERVERS[name]
        self.pool = None
        if program == "memcached":
            self.port = free_port()
            command = ["memcached", "-p", str(self.port), "-l", "127.0.0.1", "-t", str(threads),
                       "-m", str(MEMORY_MB), "-U", "0", "-c", "4096"]
            if os.geteuid() == 0:
                command += ["-u", "root"]
            self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            wait_port(self.port, self.process)
            return
        command = [binary, "-p", "0", "-t", str(threads), "-m", str(MEMORY_MB), "-c", "4096", *options]
        if name in DURABLE:
            self.pool = os.path.join(work, "pool-%s-%d" % (name, time.monotonic_ns()))
            command += ["--pool", self.pool]
            if name == "soft":  # cpnvm sizes its pool from -m and its thread logs
                command += ["--size", POOL_SIZE]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen = ""
        for line in self.process.stdout:  # a durable engine first reports its pool
            seen += line
            if "listening on" in line:
                self.port = int(line.split("listening on ")[1].split()[0].rsplit(":", 1)[1])
                return
        self.process.wait()
        raise RuntimeError("%s did not start (%s): %s" % (name, " ".join(command), seen.strip()))

    def stop(self):
        self.process.terminate()
        try:
            self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
        if self.pool and os.path.exists(self.pool):
            os.unlink(self.pool)


def measure(load, port, args, get_ratio, value_bytes):
    """One ferrite-kv-load run: its JSON report, with the exit status added."""
    command = [load, "-p", str(port), "-T", str(args.clients), "-c", str(args.connections),
               "--depth", str(args.depth), "--keys", str(args.keys), "--value-bytes", str(value_bytes),
               "--get-ratio", str(get_ratio), "--prefill", "--warmup-seconds", str(args.warmup),
               "--seconds", str(args.seconds)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.seconds + args.warmup + 120)
    if not done.stdout.strip():
        raise RuntimeError("ferrite-kv-load printed no report (exit %d): %s" % (done.returncode, done.stderr.strip()))
    report = json.loads(done.stdout)
    report["exit_status"] = done.returncode
    return report


def summarize(config, servers, runs):
    """One row per server of one (mix, value, threads) point."""
    rows = []
    base = runs.get("memcached")
    base_tps = statistics.median(r["ops_per_second"] for r in base) if base else None
    base_p99 = statistics.median(r["latency_us"]["p99"] for r in base) if base else None
    for server in servers:
        tps = [r["ops_per_second"] for r in runs[server]]
        p50 = statistics.median(r["latency_us"]["p50"] for r in runs[server])
        p99s = [r["latency_us"]["p99"] for r in runs[server]]
        p99 = statistics.median(p99s)
        rows.append({
            **config, "server": server, "reps": len(tps),
            "ops_median": statistics.median(tps), "ops_min": min(tps), "ops_max": max(tps),
            "vs_memcached": statistics.median(tps) / base_tps if base_tps else None,
            "p50_us": p50, "p99_us": p99, "p99_min_us": min(p99s), "p99_max_us": max(p99s),
            "memcached_p99_us": base_p99,
            "p99_vs_memcached": p99 / base_p99 if base_p99 else None,
            "hit_ratio": sum(r["hits"] for r in runs[server]) / max(1, sum(r["gets"] for r in runs[server])),
            "errors": sum(r["errors"] for r in runs[server]),
        })
    return rows


def markdown(rows):
    lines = ["| mix | value | server threads | server | ops/s median [min - max] | / memcached "
             "| p50 us | p99 us [min - max] | memcached p99 us | p99 / memcached's | errors |",
             "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        ratio = lambda v: "%.2f" % v if v is not None else "-"
        lines.append("| %s | %d B | %d | %s | %.0f [%.0f - %.0f] | %s | %.0f | %.0f [%.0f - %.0f] | %s | %s | %d |" % (
            r["mix"], r["value"], r["threads"], r["server"], r["ops_median"], r["ops_min"], r["ops_max"],
            ratio(r["vs_memcached"]), r["p50_us"], r["p99_us"], r["p99_min_us"], r["p99_max_us"],
            "%.0f" % r["memcached_p99_us"] if r["memcached_p99_us"] is not None else "-",
            ratio(r["p99_vs_memcached"]), r["errors"]))
    return "\n".join(lines)


def plot(rows, servers, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = sorted({(r["mix"], r["value"]) for r in rows}, key=lambda p: (p[0], p[1]))
    threads = sorted({r["threads"] for r in rows})
    figure, axes = plt.subplots(2, len(points), figsize=(4 * len(points), 7), squeeze=False)
    width = 0.8 / len(servers)
    for column, (mix, value) in enumerate(points):
        for i, server in enumerate(servers):
            mine = {r["threads"]: r for r in rows if (r["mix"], r["value"], r["server"]) == (mix, value, server)}
            xs = [t + (i - (len(servers) - 1) / 2) * width for t in range(len(threads))]
            tps = [mine[t]["ops_median"] / 1000 for t in threads]
            tps_err = [[(mine[t]["ops_median"] - mine[t]["ops_min"]) / 1000 for t in threads],
                       [(mine[t]["ops_max"] - mine[t]["ops_median"]) / 1000 for t in threads]]
            p99 = [mine[t]["p99_us"] for t in threads]
            p99_err = [[mine[t]["p99_us"] - mine[t]["p99_min_us"] for t in threads],
                       [mine[t]["p99_max_us"] - mine[t]["p99_us"] for t in threads]]
            axes[0][column].bar(xs, tps, width, yerr=tps_err, capsize=2, label=server)
            axes[1][column].bar(xs, p99, width, yerr=p99_err, capsize=2, label=server)
        axes[0][column].set_title("%s, %d B values" % (mix, value))
        for row, label in ((0, "thousand ops/s (median, min-max)"), (1, "p99 latency, us (median, min-max)")):
            axes[row][column].set_xticks(range(len(threads)), ["%d server thr." % t for t in threads])
            if column == 0:
                axes[row][column].set_ylabel(label)
    axes[0][0].legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", help="ferrite-kv")
    parser.add_argument("--load", help="ferrite-kv-load (default: beside the server binary)")
    parser.add_argument("--servers", default="memcached,volatile,soft", help="names from SERVERS: " + ", ".join(SERVERS))
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=6, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=1, help="unmeasured seconds before each measurement")
    parser.add_argument("--threads", default="1,2", help="server threads")
    parser.add_argument("--values", default="100,4096", help="value sizes in bytes")
    parser.add_argument("--mixes", default="get-heavy,set-heavy", help=", ".join(MIXES))
    parser.add_argument("--clients", type=int, default=2, help="ferrite-kv-load threads")
    parser.add_argument("--connections", type=int, default=8, help="connections per client thread")
    parser.add_argument("--depth", type=int, default=1, help="requests outstanding per connection")
    parser.add_argument("--keys", type=int, default=50000)
    parser.add_argument("--csv", help="write the table's rows here")
    parser.add_argument("--json", help="write every run's ferrite-kv-load report here")
    parser.add_argument("--plot", help="write a figure (PNG) of throughput and p99 here")
    args = parser.parse_args()

    servers = args.servers.split(",")
    unknown = [s for s in servers if s not in SERVERS]
    if unknown:
        parser.error("unknown server %s: use %s" % (", ".join(unknown), ", ".join(SERVERS)))
    if any(m not in MIXES for m in args.mixes.split(",")):
        parser.error("mixes are %s" % ", ".join(MIXES))
    load = args.load or os.path.join(os.path.dirname(os.path.abspath(args.binary)), "ferrite-kv-load")
    if not os.access(load, os.X_OK):
        parser.error("no ferrite-kv-load at %s (build the target ferrite_kv_load, or say --load PATH)" % load)
    if "memcached" in servers and not shutil.which("memcached"):
        parser.error("memcached is not installed (Debian: apt install memcached)")

    work = tempfile.mkdtemp(prefix="ferrite-kv-bench-", dir="/dev/shm")
    rows, every_run = [], []
    started = time.time()
    try:
        for mix in args.mixes.split(","):
            for value in map(int, args.values.split(",")):
                for threads in map(int, args.threads.split(",")):
                    config = {"mix": mix, "value": value, "threads": threads}
                    runs = {s: [] for s in servers}
                    for rep in range(args.reps):
                        order = servers[rep % len(servers):] + servers[:rep % len(servers)]
                        for name in order:
                            server = Server(name, args.binary, threads, work)
                            try:
                                report = measure(load, server.port, args, MIXES[mix], value)
                            finally:
                                server.stop()
                            runs[name].append(report)
                            every_run.append({**config, "server": name, "rep": rep, "report": report})
                            print("%6.0f s  %-9s %4d B  %d thr  %-11s rep %d: %8.0f ops/s  p99 %7.0f us%s" % (
                                time.time() - started, mix, value, threads, name, rep, report["ops_per_second"],
                                report["latency_us"]["p99"],
                                "  ERRORS %d: %s" % (report["errors"], report["error_samples"][:1])
                                if report["errors"] or report["exit_status"] else ""), file=sys.stderr, flush=True)
                    rows += summarize(config, servers, runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(markdown(rows))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            writer.writeheader()
            writer.writerows(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(every_run, f, indent=1)
    if args.plot:
        plot(rows, servers, args.plot)
    failed = sum(1 for r in every_run if r["report"]["errors"] or r["report"]["exit_status"])
    if failed:
        print("%d runs had errors (see the errors column and stderr)" % failed, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
