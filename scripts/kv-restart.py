#!/usr/bin/python3
"""How fast ferrite-kv's durable engines serve again after kill -9: load N items (pipelined
sets, 100-byte values), kill the server with SIGKILL, restart it on the pool, and time from
the restart to the first reply to a get (which must find its item). Repeats the kill and
restart --reps times and prints each time, the median, and the server's own recovery line.

    scripts/kv-restart.py build/release/apps/kv/ferrite-kv [--items 1000000] [--reps 5]
        [--engine soft [--size 2g] | --engine cpnvm [--durability epoch|sync] [-m 512]]
"""
import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time


def start(binary, pool, args, port):
    engine = ["--size", args.size] if args.engine == "soft" else ["--durability", args.durability, "-m", str(args.m)]
    return subprocess.Popen([binary, "-p", str(port), "-t", "2", "--engine", args.engine, "--pool", pool, *engine],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_listening(server):
    for line in server.stdout:
        if "listening on" in line:
            return
    raise RuntimeError("ferrite-kv exited without listening")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_reply(port, key, deadline):
    """Seconds until a get of `key` is answered with its value, polling the port."""
    while True:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(b"get " + key + b"\r\n")
            data = b""
            while not data.endswith(b"END\r\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
            sock.close()
            if data.startswith(b"VALUE "):
                return
            raise RuntimeError("the restarted server does not have %r: %r" % (key, data[:80]))
        except ConnectionRefusedError:
            if time.time() > deadline:
                raise
            time.sleep(0.001)


def load(port, items):
    sock = socket.create_connection(("127.0.0.1", port))
    value = b"v" * 100
    batch = 2000
    for first in range(0, items, batch):
        last = min(items, first + batch)
        sock.sendall(b"".join(b"set key:%d 0 0 100 noreply\r\n%s\r\n" % (i, value) for i in range(first, last)))
    sock.sendall(b"get key:%d\r\n" % (items - 1))
    data = b""
    while not data.endswith(b"END\r\n"):
        data += sock.recv(65536)
    sock.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--items", type=int, default=1000000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--engine", default="soft", choices=["soft", "cpnvm"])
    parser.add_argument("--size", default="2g", help="soft: the pool's size")
    parser.add_argument("--durability", default="epoch", choices=["epoch", "sync"], help="cpnvm's")
    parser.add_argument("-m", type=int, default=512, help="cpnvm: the image's megabytes")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="ferrite-kv-restart-", dir="/dev/shm")
    pool = os.path.join(work, "pool")
    port = free_port()
    try:
        server = start(args.binary, pool, args, port)
        wait_listening(server)
        began = time.time()
        load(port, args.items)
        print("loaded %d items in %.1f s" % (args.items, time.time() - began))
        times = []
        for rep in range(args.reps):
            server.send_signal(signal.SIGKILL)
            server.wait()
            began = time.time()
            server = start(args.binary, pool, args, port)
            first_reply(port, b"key:%d" % (rep * 7919 % args.items), began + 60)
            times.append(time.time() - began)
            recovered = server.stdout.readline().strip()
            print("restart %d: first reply after %.0f ms (%s)" % (rep + 1, times[-1] * 1000, recovered))
        print("median time to the first reply after kill -9 with %d items: %.0f ms [%.0f - %.0f]"
              % (args.items, statistics.median(times) * 1000, min(times) * 1000, max(times) * 1000))
        server.send_signal(signal.SIGTERM)
        server.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
