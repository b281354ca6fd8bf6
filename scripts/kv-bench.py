#!/usr/bin/python3
"""ferrite-kv against memcached 1.6 under one load generator (memcaslap, Debian's
libmemcached-tools), in one run: get-heavy (90/10) and set-heavy (50/50) mixes, 100 B and
4 KiB values, 1 and 2 server threads. Repetitions are interleaved (each repetition runs every
server once, in rotating order) and the table gives medians, ratios against memcached from the
same repetitions, and memcaslap's mean latency.

    scripts/kv-bench.py build/release/apps/kv/ferrite-kv [--reps 5] [--seconds 5]
        [--servers memcached,volatile,soft] [--threads 1,2] [--values 100,4096]
        [--mixes get-heavy,set-heavy] [--csv out.csv]

On a 2-core machine the load generator shares the cores with the server: the figures
compare servers under the same squeeze, not absolute capacity.
"""
import argparse
import csv
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

MIXES = {"get-heavy": 0.9, "set-heavy": 0.5}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("no server on port %d" % port)


def start(server, binary, port, threads, work):
    if server == "memcached":
        command = ["memcached", "-p", str(port), "-l", "127.0.0.1", "-t", str(threads), "-m", "1024", "-U", "0"]
        if os.geteuid() == 0:
            command += ["-u", "root"]
    else:
        command = [binary, "-p", str(port), "-t", str(threads), "-m", "1024", "--engine", server]
        if server != "volatile":
            command += ["--pool", os.path.join(work, "pool-%d" % port), "--size", "2g"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return process


def load(port, seconds, get_share, value_bytes, work):
    config = os.path.join(work, "memcaslap.cfg")
    with open(config, "w") as f:
        f.write("key\n32 32 1\nvalue\n%d %d 1\ncmd\n0 %.2f\n1 %.2f\n" % (value_bytes, value_bytes, 1 - get_share,
                                                                       get_share))
    out = subprocess.run(["memcaslap", "-s", "127.0.0.1:%d" % port, "-T", "2", "-c", "32", "-t", "%ds" % seconds,
                          "-F", config], capture_output=True, text=True, timeout=seconds + 60).stdout
    tps = re.search(r"TPS:\s*(\d+)", out)
    if not tps:
        raise RuntimeError("memcaslap printed no TPS:\n" + out)
    # The "Total Statistics" block's average latency (microseconds).
    total = out.split("Total Statistics")[-1] if "Total Statistics" in out else out
    avg = re.search(r"Avg:\s*(\d+)", total)
    return int(tps.group(1)), int(avg.group(1)) if avg else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--servers", default="memcached,volatile,soft")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--values", default="100,4096")
    parser.add_argument("--mixes", default="get-heavy,set-heavy")
    parser.add_argument("--csv")
    args = parser.parse_args()
    servers = args.servers.split(",")
    work = tempfile.mkdtemp(prefix="ferrite-kv-bench-", dir="/dev/shm")
    rows = []
    try:
        for mix in args.mixes.split(","):
            for value in map(int, args.values.split(",")):
                for threads in map(int, args.threads.split(",")):
                    runs = {s: [] for s in servers}
                    for rep in range(args.reps):
                        order = servers[rep % len(servers):] + servers[:rep % len(servers)]
                        for server in order:
                            port = free_port()
                            process = start(server, args.binary, port, threads, work)
                            try:
                                runs[server].append(load(port, args.seconds, MIXES[mix], value, work))
                            finally:
                                process.terminate()
                                process.wait()
                                for name in os.listdir(work):
                                    if name.startswith("pool-"):
                                        os.unlink(os.path.join(work, name))
                    base = statistics.median(t for t, _ in runs["memcached"]) if "memcached" in runs else None
                    for server in servers:
                        tps = [t for t, _ in runs[server]]
                        lat = [a for _, a in runs[server] if a is not None]
                        rows.append({"mix": mix, "value": value, "threads": threads, "server": server,
                                     "tps_median": statistics.median(tps), "tps_min": min(tps), "tps_max": max(tps),
                                     "vs_memcached": statistics.median(tps) / base if base else None,
                                     "avg_latency_us": statistics.median(lat) if lat else None})
                        print("%-9s %5d B %d thr %-9s %8.0f ops/s [%d - %d] %s %s" % (
                            mix, value, threads, server, rows[-1]["tps_median"], min(tps), max(tps),
                            "x%.2f" % rows[-1]["vs_memcached"] if base else "",
                            "%d us" % rows[-1]["avg_latency_us"] if lat else ""), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n| mix | value | server threads | server | ops/s median [min - max] | / memcached | mean latency |")
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: |")
    for r in rows:
        print("| %s | %d B | %d | %s | %.0f [%d - %d] | %s | %s |" % (
            r["mix"], r["value"], r["threads"], r["server"], r["tps_median"], r["tps_min"], r["tps_max"],
            "%.2f" % r["vs_memcached"] if r["vs_memcached"] else "-",
            "%d us" % r["avg_latency_us"] if r["avg_latency_us"] is not None else "-"))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
