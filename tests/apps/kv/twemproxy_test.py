#!/usr/bin/python3
"""Three ferrite-kv servers (soft engine) behind twemproxy (nutcracker, ketama hashing): the
client writes through the proxy, one server is killed with SIGKILL and restarted on its pool,
and every key, its keys included, is served through the proxy again.

    twemproxy_test.py path/to/ferrite-kv
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from pymemcache.client.base import Client


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nothing listens on port %d" % port)


def start_server(binary, port, pool):
    process = subprocess.Popen([binary, "-p", str(port), "-t", "2", "--engine", "soft", "--pool", pool,
                                "--size", "64m"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_port(port)
    return process


def main():
    binary = sys.argv[1]
    work = tempfile.mkdtemp(prefix="ferrite-kv-proxy-", dir="/dev/shm")
    ports = [free_port() for _ in range(3)]
    proxy_port, stats_port = free_port(), free_port()
    servers, proxy = {}, None
    try:
        for i, port in enumerate(ports):
            servers[i] = start_server(binary, port, os.path.join(work, "pool%d" % i))
        config = os.path.join(work, "nutcracker.yml")
        with open(config, "w") as f:
            f.write("kv:\n  listen: 127.0.0.1:%d\n  hash: fnv1a_64\n  distribution: ketama\n"
                    "  timeout: 2000\n  auto_eject_hosts: false\n  servers:\n" % proxy_port)
            for i, port in enumerate(ports):
                f.write("   - 127.0.0.1:%d:1 kv%d\n" % (port, i))
        proxy = subprocess.Popen(["nutcracker", "-c", config, "-s", str(stats_port), "-o",
                                  os.path.join(work, "nutcracker.log")])
        wait_port(proxy_port)

        client = Client(("127.0.0.1", proxy_port), connect_timeout=5, timeout=5)
        keys = ["user:%d" % i for i in range(300)]
        for k in keys:
            assert client.set(k, ("value of " + k).encode()), k
        assert client.get_many(keys[:50]) == {k: ("value of " + k).encode() for k in keys[:50]}

        # Which server holds what (asked directly).
        holders = {}
        for i, port in enumerate(ports):
            direct = Client(("127.0.0.1", port))
            for k in keys:
                if direct.get(k) is not None:
                    holders.setdefault(i, []).append(k)
            direct.close()
        print("keys per server:", {i: len(v) for i, v in sorted(holders.items())})
        assert sum(len(v) for v in holders.values()) == len(keys), "a key on no server, or on two"
        assert len(holders) >= 2, "ketama put every key on one server"

        victim = max(holders, key=lambda i: len(holders[i]))
        servers[victim].send_signal(signal.SIGKILL)
        servers[victim].wait()
        client.close()
        client = Client(("127.0.0.1", proxy_port), connect_timeout=5, timeout=5)
        failed = 0
        for k in holders[victim][:5]:
            try:
                client.get(k)
            except Exception:
                failed += 1
        print("while server %d is down: %d of 5 of its keys failed through the proxy" % (victim, failed))

        servers[victim] = start_server(binary, ports[victim], os.path.join(work, "pool%d" % victim))
        time.sleep(0.3)
        client.close()
        client = Client(("127.0.0.1", proxy_port), connect_timeout=5, timeout=5)
        deadline = time.time() + 10
        while True:  # the proxy reconnects to the restarted server
            try:
                got = client.get_many(keys)
                break
            except Exception:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
                client.close()
                client = Client(("127.0.0.1", proxy_port), connect_timeout=5, timeout=5)
        missing = [k for k in keys if got.get(k) != ("value of " + k).encode()]
        print("after the restart: %d of %d keys served through the proxy, %d of them from the killed server"
              % (len(keys) - len(missing), len(keys), len(holders[victim])))
        if missing:
            print("missing:", missing[:10])
            sys.exit(1)
        client.close()
    finally:
        if proxy:
            proxy.terminate()
            proxy.wait()
        for p in servers.values():
            p.terminate()
            p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
