#!/usr/bin/python3
"""kill -9 against ferrite-kv's durable engines: several client threads store, append, increment
and delete their own keys, remembering every acknowledged reply; the server is killed with
SIGKILL at a random moment (sometimes while it is still creating or recovering its pool),
restarted on the same pool, and every key must hold what its last acknowledged write left, or,
for the one write in flight when the server died, the value before or after it.

    kill_test.py path/to/ferrite-kv [--engine soft | cpnvm [--durability sync | epoch]]
                 [--kills N] [--threads T] [--seed S]

With `--engine cpnvm --durability epoch` a reply does not wait for durability, so a kill may
lose the writes of the epoch that had not committed. Then each client's keys must hold the
state after some prefix of its acknowledged writes (nothing torn, nothing reordered), and
the writes beyond that prefix are the loss: the script reports how many, and how long before
the kill the first of them was acknowledged, which must stay within --loss-bound-ms (the
epoch interval plus the time a checkpoint takes to commit).

FERRITE_KV_KILLS overrides --kills (the documented full run is 200; CI runs fewer).
"""
import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

KEYS_PER_THREAD = 40
MISSING = None


class Connection:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buffer = b""

    def line(self):
        while b"\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buffer += chunk
        at = self.buffer.index(b"\r\n")
        out, self.buffer = self.buffer[:at], self.buffer[at + 2:]
        return out

    def exactly(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buffer += chunk
        out, self.buffer = self.buffer[:count], self.buffer[count:]
        return out

    def get(self, key):
        self.sock.sendall(b"get " + key + b"\r\n")
        header = self.line()
        if header == b"END":
            return MISSING
        size = int(header.split()[3])
        value = self.exactly(size + 2)[:-2]
        if self.line() != b"END":
            raise AssertionError("no END after a value")
        return value


class Worker(threading.Thread):
    """Owns keys t<id>-k<i>; model[key] is the value its last acknowledged write left, and
    `log` lists (key, value after, time acknowledged) of every acknowledged write in order."""

    def __init__(self, ident, port, model, rng):
        super().__init__(daemon=True)
        self.number, self.port, self.model, self.rng = ident, port, model, rng
        self.in_flight = None  # (key, value_before, value_after) of the unacknowledged write
        self.acked = 0
        self.log = []

    def key(self, i):
        return b"t%d-k%d" % (self.number, i)

    def run(self):
        try:
            conn = Connection(self.port)
            while True:
                self.step(conn)
        except (OSError, ConnectionError):
            return  # the server was killed

    def step(self, conn):
        key = self.key(self.rng.randrange(KEYS_PER_THREAD))
        before = self.model.get(key, MISSING)
        kind = self.rng.choice(["set", "set", "append", "incr", "delete"])
        if kind == "set":
            value = b"%d-%d" % (self.number, self.rng.randrange(10**9))
            if self.rng.random() < 0.1:
                value = value * self.rng.randrange(1, 400)  # some larger items
            self.in_flight = (key, before, value)
            conn.sock.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value))
            reply, after = conn.line(), value
            ok = reply == b"STORED"
        elif kind == "append":
            tail = b"+%d" % self.rng.randrange(100)
            after = MISSING if before is MISSING else before + tail
            self.in_flight = (key, before, after)
            conn.sock.sendall(b"append %s 0 0 %d\r\n%s\r\n" % (key, len(tail), tail))
            reply = conn.line()
            ok = reply in (b"STORED", b"NOT_STORED")
        elif kind == "incr":
            number = before is not MISSING and before.isdigit() and len(before) <= 19
            if not number:
                value = b"%d" % self.rng.randrange(1000)
                self.in_flight = (key, before, value)
                conn.sock.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value))
                reply, after = conn.line(), value
                ok = reply == b"STORED"
            else:
                after = b"%d" % (int(before) + 7)
                self.in_flight = (key, before, after)
                conn.sock.sendall(b"incr %s 7\r\n" % key)
                reply = conn.line()
                ok = reply == after
        else:
            after = MISSING
            self.in_flight = (key, before, after)
            conn.sock.sendall(b"delete %s\r\n" % key)
            reply = conn.line()
            ok = reply in (b"DELETED", b"NOT_FOUND")
        if not ok:
            raise AssertionError("unexpected reply %r to %s of %r (model %r)" % (reply, kind, key, before))
        self.model[key] = after
        self.log.append((key, after, time.monotonic()))
        self.in_flight = None
        self.acked += 1


def start(binary, pool, args):
    durable = ["--pool", pool, "--size", args.size] if args.engine != "volatile" else []
    if args.engine == "cpnvm":
        durable += ["--durability", args.durability, "--epoch-ms", str(args.epoch_ms)]
    process = subprocess.Popen([binary, "-p", "0", "-t", "2", "--engine", args.engine, *durable],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return process


def recovered_prefix(start_state, log, in_flight, recovered):
    """The longest prefix of `log` (applied to start_state) that leaves exactly `recovered`,
    the in-flight write counted as one more step; None when no prefix does."""
    state = dict(start_state)
    steps = list(log) + ([(in_flight[0], in_flight[2], None)] if in_flight else [])
    best = 0 if state == recovered else None
    for n, (key, after, _) in enumerate(steps, 1):
        state[key] = after
        if state == recovered:
            best = n
    return best


def wait_listening(process):
    lines = []
    for line in process.stdout:
        lines.append(line)
        if "listening on" in line:
            return int(line.split("listening on ")[1].split()[0].rsplit(":", 1)[1]), lines
    raise RuntimeError("ferrite-kv exited without listening:\n" + "".join(lines))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--size", default=None, help="pool size (default: 128m for soft, 512m for cpnvm)")
    parser.add_argument("--engine", default="soft", help="volatile shows that the check catches losses")
    parser.add_argument("--durability", default="sync", choices=["sync", "epoch"], help="cpnvm's")
    parser.add_argument("--epoch-ms", type=int, default=64, help="cpnvm's epoch interval")
    parser.add_argument("--loss-bound-ms", type=float, default=None,
                        help="epoch: the oldest lost write acknowledged at most this long before the kill "
                             "(default: 2 intervals + 100 ms for a commit on a loaded 2-core machine)")
    args = parser.parse_args()
    if args.size is None:
        args.size = "512m" if args.engine == "cpnvm" else "128m"
    buffered = args.engine == "cpnvm" and args.durability == "epoch"
    bound_ms = args.loss_bound_ms if args.loss_bound_ms is not None else 2 * args.epoch_ms + 100
    kills = int(os.environ.get("FERRITE_KV_KILLS", args.kills))
    rng = random.Random(args.seed)
    directory = tempfile.mkdtemp(prefix="ferrite-kv-kill-", dir="/dev/shm")
    pool = os.path.join(directory, "pool")
    models = [dict() for _ in range(args.threads)]
    acked = early_kills = freed = lost = 0
    worst_window_ms = 0.0
    last_round = None  # (workers, states at the round's start, kill time) for the buffered check
    process = None
    try:
        for round_number in range(kills):
            process = start(args.binary, pool, args)
            if rng.random() < 0.1:  # now and then, while it creates or recovers the pool
                time.sleep(rng.uniform(0.0, 0.15))
                process.kill()
                process.wait()
                early_kills += 1
                continue
            port, lines = wait_listening(process)
            freed += sum(int(l.split("freed ")[1].split()[0]) for l in lines if "freed " in l)
            # Everything acknowledged before the last kill is there.
            check = Connection(port)
            if buffered and last_round is not None:
                workers, starts, killed_at = last_round
                for w in workers:
                    keys = [b"t%d-k%d" % (w.number, i) for i in range(KEYS_PER_THREAD)]
                    recovered = {k: check.get(k) for k in keys}
                    start_state = {k: starts[w.number].get(k, MISSING) for k in keys}
                    n = recovered_prefix(start_state, w.log, w.in_flight, recovered)
                    if n is None:
                        print("round %d: client %d's keys hold no prefix of its writes (a torn or reordered "
                              "epoch): %r" % (round_number, w.number, recovered))
                        sys.exit(1)
                    if n < len(w.log):
                        lost += len(w.log) - n
                        window = (killed_at - w.log[n][2]) * 1000
                        worst_window_ms = max(worst_window_ms, window)
                        if window > bound_ms:
                            print("round %d: client %d lost %d writes, the first acknowledged %.0f ms before the "
                                  "kill: more than one epoch (%.0f ms)" % (round_number, w.number,
                                                                           len(w.log) - n, window, bound_ms))
                            sys.exit(1)
                    models[w.number].clear()
                    models[w.number].update({k: v for k, v in recovered.items() if v is not MISSING})
                main.in_flight = {}
                last_round = None
            for ident, model in enumerate(models):
                for i in range(KEYS_PER_THREAD):
                    key = b"t%d-k%d" % (ident, i)
                    value = check.get(key)
                    expected = model.get(key, MISSING)
                    if value != expected:
                        pending = getattr(main, "in_flight", {}).get(ident)
                        if pending and pending[0] == key and value in (pending[1], pending[2]):
                            model[key] = value  # the write in flight took effect, or did not
                            continue
                        print("round %d: key %r holds %r, expected %r (in flight: %r)"
                              % (round_number, key, value, expected, pending))
                        sys.exit(1)
            check.sock.close()
            starts = [dict(m) for m in models]
            workers = [Worker(i, port, models[i], random.Random(rng.random())) for i in range(args.threads)]
            for w in workers:
                w.start()
            time.sleep(rng.uniform(0.05, 0.6))
            killed_at = time.monotonic()
            process.kill()
            process.wait()
            last_round = (workers, starts, killed_at)
            for w in workers:
                w.join(timeout=10)
            main.in_flight = {w.number: w.in_flight for w in workers}
            acked += sum(w.acked for w in workers)
        if buffered:
            print("%d kills (%d during pool creation or recovery), %d acknowledged writes, %d lost (%.2f%%), "
                  "every loss a suffix of one client's writes; the oldest lost write was acknowledged %.0f ms "
                  "before its kill (bound %.0f ms)" % (kills, early_kills, acked, lost,
                                                       100.0 * lost / max(acked, 1), worst_window_ms, bound_ms))
        else:
            print("%d kills (%d during pool creation or recovery), %d acknowledged writes, 0 lost; "
                  "%d blocks of interrupted writes freed at restarts" % (kills, early_kills, acked, freed))
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        for name in os.listdir(directory):
            os.unlink(os.path.join(directory, name))
        os.rmdir(directory)


if __name__ == "__main__":
    main()
