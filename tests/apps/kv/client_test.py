#!/usr/bin/python3
"""ferrite-kv against real clients: pymemcache (Debian's python3-pymemcache) for every command it
has, and a raw socket for those it lacks (gat, gats, verbosity and the meta commands mg, ms,
md, ma, mn). Starts the server on a free port and stops it with SIGTERM, which must close it
cleanly.

    client_test.py path/to/ferrite-kv [soft | cpnvm | cpnvm-sync | extra server options...]

"soft", "cpnvm" (--durability epoch) and "cpnvm-sync" run that engine on a new pool in a
temporary directory of /dev/shm.
"""
import os
import signal
import socket
import subprocess
import sys
import time
import unittest

from pymemcache.client.base import Client
from pymemcache.exceptions import MemcacheClientError, MemcacheServerError

SERVER = None
PORT = None


def start_server(binary, extra):
    process = subprocess.Popen([binary, "-p", "0", "-t", "2", "-c", "16", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = ""
    line = process.stdout.readline()
    while line and "listening on" not in line:  # durable engines first report their recovery
        seen += line
        line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise RuntimeError("ferrite-kv did not start: " + seen + process.stdout.read())
    return process, int(line.split("listening on ")[1].split()[0].rsplit(":", 1)[1])


class Raw:
    """A plain connection for the commands pymemcache does not speak."""

    def __init__(self):
        self.sock = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        self.buffer = b""

    def send(self, data):
        self.sock.sendall(data)

    def read_until(self, end):
        while end not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection; got " + repr(self.buffer))
            self.buffer += chunk
        at = self.buffer.index(end) + len(end)
        reply, self.buffer = self.buffer[:at], self.buffer[at:]
        return reply

    def ask(self, request, end=b"\r\n"):
        self.send(request)
        return self.read_until(end)

    def close(self):
        self.sock.close()


class Commands(unittest.TestCase):
    def setUp(self):
        self.client = Client(("127.0.0.1", PORT), default_noreply=False, connect_timeout=5, timeout=5)
        self.client.flush_all()

    def tearDown(self):
        self.client.close()

    def test_set_get_with_flags(self):
        self.assertTrue(self.client.set("k", b"value", flags=7))
        self.assertEqual(self.client.get("k"), b"value")
        raw = Raw()
        self.assertEqual(raw.ask(b"get k\r\n", b"END\r\n"), b"VALUE k 7 5\r\nvalue\r\nEND\r\n")
        raw.close()

    def test_get_many_and_gets_many(self):
        self.client.set_many({"a": b"1", "b": b"2"})
        self.assertEqual(self.client.get_many(["a", "b", "c"]), {"a": b"1", "b": b"2"})
        got = self.client.gets_many(["a", "b"])
        self.assertEqual(got["a"][0], b"1")
        self.assertNotEqual(got["a"][1], got["b"][1])

    def test_add_replace_append_prepend(self):
        self.assertTrue(self.client.add("k", b"a"))
        self.assertFalse(self.client.add("k", b"b"))
        self.assertFalse(self.client.replace("missing", b"x"))
        self.assertTrue(self.client.replace("k", b"b"))
        self.assertTrue(self.client.append("k", b">"))
        self.assertTrue(self.client.prepend("k", b"<"))
        self.assertEqual(self.client.get("k"), b"<b>")

    def test_cas(self):
        self.assertIsNone(self.client.cas("missing", b"x", b"1"))
        self.client.set("k", b"a")
        value, cas = self.client.gets("k")
        self.assertTrue(self.client.cas("k", b"b", cas))
        self.assertFalse(self.client.cas("k", b"c", cas))
        self.assertEqual(self.client.get("k"), b"b")

    def test_delete(self):
        self.client.set("k", b"a")
        self.assertTrue(self.client.delete("k", noreply=False))
        self.assertFalse(self.client.delete("k", noreply=False))

    def test_incr_decr(self):
        self.assertIsNone(self.client.incr("n", 1))
        self.client.set("n", b"10")
        self.assertEqual(self.client.incr("n", 5), 15)
        self.assertEqual(self.client.decr("n", 100), 0)
        self.client.set("s", b"abc")
        with self.assertRaises(MemcacheClientError):
            self.client.incr("s", 1)

    def test_touch_and_expiry(self):
        self.client.set("k", b"a", expire=1)
        self.assertTrue(self.client.touch("k", expire=100))
        self.assertFalse(self.client.touch("missing", expire=100))
        self.client.set("short", b"a", expire=1)
        time.sleep(2.1)
        self.assertEqual(self.client.get("k"), b"a")
        self.assertIsNone(self.client.get("short"))

    def test_gat_gats(self):
        self.client.set("k", b"abc", flags=3)
        raw = Raw()
        self.assertEqual(raw.ask(b"gat 100 k\r\n", b"END\r\n"), b"VALUE k 3 3\r\nabc\r\nEND\r\n")
        reply = raw.ask(b"gats 0 k missing\r\n", b"END\r\n")
        self.assertTrue(reply.startswith(b"VALUE k 3 3 "), reply)
        self.assertEqual(raw.ask(b"mg k t\r\n"), b"HD t-1\r\n")
        raw.close()

    def test_flush_all_with_delay(self):
        self.client.set("k", b"a")
        self.assertTrue(self.client.flush_all(delay=2))
        self.assertEqual(self.client.get("k"), b"a")
        time.sleep(3.1)
        self.assertIsNone(self.client.get("k"))

    def test_noreply(self):
        quiet = Client(("127.0.0.1", PORT), default_noreply=True)
        quiet.set("k", b"a")
        quiet.add("k", b"b")
        quiet.delete("missing")
        self.assertEqual(quiet.get("k"), b"a")
        quiet.close()

    def test_version_verbosity_stats(self):
        self.assertTrue(self.client.version().startswith(b"ferrite-kv"))
        raw = Raw()
        self.assertEqual(raw.ask(b"verbosity 1\r\n"), b"OK\r\n")
        raw.close()
        self.client.set("k", b"a")
        self.client.get("k")
        stats = self.client.stats()
        self.assertGreaterEqual(stats[b"get_hits"], 1)
        self.assertGreaterEqual(stats[b"curr_items"], 1)  # flushed items go lazily, as in memcached
        settings = self.client.stats("settings")
        self.assertEqual(settings[b"item_size_max"], 1 << 20)
        self.assertGreaterEqual(self.client.stats("items")[b"items:1:number"], 1)

    def test_meta_commands(self):
        raw = Raw()
        self.assertEqual(raw.ask(b"ms m 3 F5 T0 c\r\nabc\r\n")[:4], b"HD c")
        self.assertEqual(raw.ask(b"mg m v f s k\r\n", b"abc\r\n"), b"VA 3 f5 s3 km\r\nabc\r\n")
        self.assertEqual(raw.ask(b"mg nothere v\r\n"), b"EN\r\n")
        self.assertEqual(raw.ask(b"ma c N0 J1 D1 v\r\n", b"\r\n1\r\n"), b"VA 1\r\n1\r\n")
        self.assertEqual(raw.ask(b"ma c v\r\n", b"\r\n2\r\n"), b"VA 1\r\n2\r\n")
        self.assertEqual(raw.ask(b"md m q\r\nmn\r\n"), b"MN\r\n")
        self.assertEqual(raw.ask(b"md m\r\n"), b"NF\r\n")
        raw.close()

    def test_large_value_and_limit(self):
        big = os.urandom((1 << 20) - 10)
        self.assertTrue(self.client.set("big", big))
        self.assertEqual(self.client.get("big"), big)
        with self.assertRaises(MemcacheServerError):
            self.client.set("toobig", b"x" * ((1 << 20) + 1))
        self.assertEqual(self.client.get("big"), big)  # the connection is still in step

    def test_pipelined_requests(self):
        raw = Raw()
        raw.send(b"".join(b"set p%d 0 0 2\r\n%02d\r\n" % (i, i % 100) for i in range(500)))
        for _ in range(500):
            self.assertEqual(raw.read_until(b"\r\n"), b"STORED\r\n")
        keys = b" ".join(b"p%d" % i for i in range(500))
        reply = raw.ask(b"get " + keys + b"\r\n", b"END\r\n")
        self.assertEqual(reply.count(b"VALUE "), 500)
        raw.close()

    def test_garbage_gets_errors_not_a_crash(self):
        raw = Raw()
        self.assertEqual(raw.ask(b"\x80\x01\x00\x00 binary?\r\n"), b"ERROR\r\n")
        self.assertEqual(raw.ask(b"set k 0 0 -5\r\n"), b"CLIENT_ERROR bad command line format\r\n")
        raw.send(b"x" * 5000)
        self.assertEqual(raw.read_until(b"\r\n"), b"CLIENT_ERROR line too long\r\n")
        raw.close()
        self.assertTrue(self.client.set("alive", b"yes"))

    def test_quit_and_connection_limit(self):
        raw = Raw()
        raw.send(b"quit\r\n")
        self.assertEqual(raw.sock.recv(10), b"")
        raw.close()
        held = [Raw() for _ in range(20)]
        time.sleep(0.2)
        refused = 0
        for conn in held:
            try:
                reply = conn.ask(b"version\r\n")
                if reply.startswith(b"ERROR Too many open connections"):
                    refused += 1
            except ConnectionError:
                refused += 1
        for conn in held:
            conn.close()
        self.assertGreater(refused, 0)
        # The server sees the closes when its loops get to them (slowly under a sanitizer):
        # the next test's connection must not be refused meanwhile.
        deadline = time.time() + 10
        while True:
            probe = Raw()
            try:
                reply = probe.ask(b"version\r\n")
            except ConnectionError:
                reply = b""
            probe.close()
            if reply.startswith(b"VERSION"):
                break
            self.assertLess(time.time(), deadline, "still refused after the held connections closed")
            time.sleep(0.05)


def main():
    global SERVER, PORT
    binary, extra = sys.argv[1], sys.argv[2:]
    scratch = None
    durable = {"soft": ["--engine", "soft", "--size", "128m"],
               "cpnvm": ["--engine", "cpnvm", "--durability", "epoch"],
               "cpnvm-sync": ["--engine", "cpnvm", "--durability", "sync"]}
    if len(extra) == 1 and extra[0] in durable:
        import tempfile
        scratch = tempfile.mkdtemp(prefix="ferrite-kv-client-", dir="/dev/shm")
        extra = durable[extra[0]] + ["--pool", os.path.join(scratch, "pool")]
    try:
        run(binary, extra)
    finally:
        if scratch:
            import shutil
            shutil.rmtree(scratch, ignore_errors=True)


def run(binary, extra):
    global SERVER, PORT
    SERVER, PORT = start_server(binary, extra)
    try:
        result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    finally:
        SERVER.send_signal(signal.SIGTERM)
        output, _ = SERVER.communicate(timeout=10)
    if SERVER.returncode != 0 or "stopped" not in output:
        print("ferrite-kv did not stop cleanly on SIGTERM: exit", SERVER.returncode, output)
        sys.exit(1)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
