#!/usr/bin/python3
"""ferrite-kv-load end to end, in about two seconds:

* against ferrite-kv --engine volatile with --prefill: exit 0, requests measured, no errors,
  every get a hit, the counts adding up and the percentiles in order;
* against a port nobody listens on: exit 2 and a message that says so;
* against a fake server that answers every request with SERVER_ERROR: exit 1, the errors
  counted and described in the JSON.

    load_test.py path/to/ferrite-kv-load path/to/ferrite-kv
"""
import json
import socket
import subprocess
import sys
import threading
import unittest

LOAD = None
SERVER = None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_load(port, *extra):
    return subprocess.run([LOAD, "-p", str(port), *extra], capture_output=True, text=True, timeout=60)


class EndToEnd(unittest.TestCase):
    def test_volatile_engine_after_prefill(self):
        server = subprocess.Popen([SERVER, "--engine", "volatile", "-p", "0", "-t", "2"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            line = server.stdout.readline()
            self.assertIn("listening on", line)
            port = int(line.split("listening on ")[1].split()[0].rsplit(":", 1)[1])
            done = run_load(port, "-T", "2", "-c", "4", "--depth", "2", "--keys", "2000", "--value-bytes", "300",
                            "--get-ratio", "0.8", "--prefill", "--warmup-seconds", "0.2", "--seconds", "1")
        finally:
            server.terminate()
            server.wait(timeout=10)
        self.assertEqual(done.returncode, 0, done.stderr)
        report = json.loads(done.stdout)
        self.assertEqual(report["errors"], 0, report["error_samples"])
        self.assertEqual(report["connections_lost"], 0)
        self.assertEqual(report["prefill_sets"], 2000)
        self.assertGreater(report["ops"], 0)
        self.assertEqual(report["ops"], report["gets"] + report["sets"])
        self.assertGreater(report["gets"], report["sets"])
        self.assertGreater(report["hits"], 0)
        self.assertEqual(report["misses"], 0)  # every key was set, and 2000 x 300 B evicts nothing
        self.assertEqual(report["hits"], report["gets"])
        self.assertAlmostEqual(report["ops_per_second"], report["ops"] / report["seconds"], delta=1)
        latency = report["latency_us"]
        self.assertGreater(latency["p50"], 0)
        self.assertLessEqual(latency["p50"], latency["p90"])
        self.assertLessEqual(latency["p90"], latency["p99"])
        self.assertLessEqual(latency["p99"], latency["p999"])
        self.assertLessEqual(latency["p999"], latency["max"])

    def test_refused_connection_is_a_clear_error(self):
        done = run_load(free_port(), "--seconds", "0.1")
        self.assertEqual(done.returncode, 2)
        self.assertIn("cannot connect", done.stderr)
        self.assertEqual(done.stdout, "")

    def test_wrong_replies_are_counted_errors(self):
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]

        def answer(conn):
            with conn:
                while True:
                    data = conn.recv(65536)
                    if not data:
                        return
                    conn.sendall(b"SERVER_ERROR nope\r\n")

        def serve():
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                threading.Thread(target=answer, args=(conn,), daemon=True).start()

        threading.Thread(target=serve, daemon=True).start()
        try:
            done = run_load(port, "-T", "1", "-c", "2", "--warmup-seconds", "0", "--seconds", "0.3")
        finally:
            listener.close()
        self.assertEqual(done.returncode, 1, done.stderr)
        report = json.loads(done.stdout)
        self.assertEqual(report["errors"], 2)  # one per connection, which is then dropped
        self.assertEqual(report["connections_lost"], 2)
        self.assertIn("error reply", report["error_samples"][0])
        self.assertIn("SERVER_ERROR nope", report["error_samples"][0])


if __name__ == "__main__":
    LOAD, SERVER = sys.argv[1], sys.argv[2]
    unittest.main(argv=[sys.argv[0], "-v"])
