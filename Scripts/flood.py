#!/usr/bin/env python3
"""Floods one `hp-sync serve` and measures whether trusted peers still get through.

    Scripts/flood.py BINARY [--scenarios idle,slowloris,nohello,crowd] [--peers 20]
                            [--crowd 200] [--seconds 20]

Scenarios (all attack traffic from 127.0.0.2, which Linux routes to lo like 127.0.0.1; the
trusted peers connect from 127.0.0.1, so the flood is "another host"):

  idle       500 plain TCP connections that never send a byte (reopened 1 s after the server
             closes one)
  slowloris  100 TCP connections that send one byte per second (reopened the same way)
  nohello    200 TLS 1.3 connections with a (not listed) certificate that never send Hello
  crowd      no attacker: CROWD trusted peers pull at the same instant with --retries 8

During each flood: one trusted peer runs `pull --retries 3`, then PEERS peers pull at once
(also --retries 3). Printed: success rate, p50/p99 pull time, exit codes, the server's peak RSS
(VmHWM, reset between scenarios through /proc/PID/clear_refs) and peak thread count.
`Scripts/torture --flood` runs it with the defaults. Needs Linux (127/8 on lo, /proc).
"""
import argparse
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ATTACKER = "127.0.0.2"


def run(binary, store, *args, check=True):
    result = subprocess.run([binary, *args, "--store", store], capture_output=True, text=True)
    if check and result.returncode != 0:
        sys.exit(f"hp-sync {' '.join(args)} failed ({result.returncode}): {result.stderr}")
    return result


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, store, port, extra):
        self.log = open(os.path.join(os.path.dirname(store), "serve.log"), "w")
        self.process = subprocess.Popen(
            [binary, "serve", "--listen", f"127.0.0.1:{port}", "--store", store, *extra],
            stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        sys.exit("serve did not start")

    def status(self):
        fields = {}
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields[key] = value.split()
        return int(fields["VmHWM"][0]), int(fields["Threads"][0])

    def reset_peak(self):
        try:
            with open(f"/proc/{self.process.pid}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=60)


class Sampler(threading.Thread):
    """Samples the server's peak RSS and thread count while a scenario runs."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server, self.stop_event, self.peak_kb, self.peak_threads = server, threading.Event(), 0, 0

    def run(self):
        while not self.stop_event.is_set():
            rss, threads = self.server.status()
            self.peak_kb, self.peak_threads = max(self.peak_kb, rss), max(self.peak_threads, threads)
            time.sleep(0.1)


def attacker_socket(port):
    s = socket.socket()
    s.bind((ATTACKER, 0))
    s.settimeout(30)
    s.connect(("127.0.0.1", port))
    return s


class Flood:
    """COUNT attacker slots, each reconnecting 1 s after the server closes it."""

    def __init__(self, kind, count, port, cert=None):
        self.kind, self.count, self.port, self.cert = kind, count, port, cert
        self.stop_event = threading.Event()
        self.opened = 0
        self.lock = threading.Lock()
        threading.stack_size(256 << 10)
        self.threads = [threading.Thread(target=self.slot, daemon=True) for _ in range(count)]

    def start(self):
        for thread in self.threads:
            thread.start()

    def stop(self):
        self.stop_event.set()
        for thread in self.threads:
            thread.join(timeout=5)

    def slot(self):
        context = None
        if self.kind == "nohello":
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            context.minimum_version = ssl.TLSVersion.TLSv1_3
            context.load_cert_chain(*self.cert)
        while not self.stop_event.is_set():
            try:
                s = attacker_socket(self.port)
                with self.lock:
                    self.opened += 1
                if context is not None:
                    s = context.wrap_socket(s, do_handshake_on_connect=True)
                if self.kind == "slowloris":
                    s.settimeout(1)
                    while not self.stop_event.is_set():
                        s.send(b"\x16")
                        try:
                            if s.recv(1) == b"":
                                break
                        except socket.timeout:
                            pass
                else:
                    s.settimeout(1)
                    while not self.stop_event.is_set():
                        try:
                            if s.recv(4096) == b"":
                                break
                        except socket.timeout:
                            pass
                s.close()
            except (OSError, ssl.SSLError):
                pass
            self.stop_event.wait(1)


def pull(binary, store, retries):
    started = time.monotonic()
    result = run(binary, store, "pull", "primary", "--quiet", "--retries", str(retries), check=False)
    return result.returncode, time.monotonic() - started, result.stderr.strip()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))] if ordered else float("nan")


def summarize(name, results, sampler, note=""):
    codes = {}
    for code, _, _ in results:
        codes[code] = codes.get(code, 0) + 1
    times = [seconds for _, seconds, _ in results]
    ok = codes.get(0, 0)
    line = (f"| {name} | {ok}/{len(results)} | {percentile(times, 0.5):.2f} s | {percentile(times, 0.99):.2f} s | "
            f"{max(times):.2f} s | {dict(sorted(codes.items()))} | {sampler.peak_kb // 1024} MB | "
            f"{sampler.peak_threads} | {note} |")
    print(line, flush=True)
    for code, _, stderr in results:
        if code != 0:
            print(f"    exit {code}: {stderr[:300]}", file=sys.stderr)
    return line


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--scenarios", default="idle,slowloris,nohello,crowd")
    parser.add_argument("--peers", type=int, default=20)
    parser.add_argument("--crowd", type=int, default=200)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--serve-args", default="", help="extra `serve` options, space-separated")
    args = parser.parse_args()
    scenarios = args.scenarios.split(",")
    binary = os.path.abspath(args.binary)
    root = tempfile.mkdtemp(prefix="hp-sync-flood-")
    try:
        primary = os.path.join(root, "primary")
        run(binary, primary, "init")
        primary_id = run(binary, primary, "id").stdout.strip()
        for i in range(args.items):
            run(binary, primary, "add", "--name", f"item {i}", "--value", str(i))
        peer_count = max(args.peers + 1, args.crowd if "crowd" in scenarios else 0)
        peers = [os.path.join(root, f"peer{i}") for i in range(peer_count)]

        def make_peer(store):
            run(binary, store, "init")
            return run(binary, store, "id").stdout.strip()

        with ThreadPoolExecutor(4) as pool:
            ids = list(pool.map(make_peer, peers))
        for i, node_id in enumerate(ids):
            run(binary, primary, "peer", "add", f"p{i}", node_id)
        port = free_port()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda store: run(binary, store, "peer", "add", "primary", primary_id, "--address",
                                            f"127.0.0.1:{port}"), peers))
        stranger = os.path.join(root, "stranger")
        run(binary, stranger, "init")
        cert = (os.path.join(stranger, "identity", "cert.pem"), os.path.join(stranger, "identity", "key.pem"))

        server = Server(binary, primary, port, args.serve_args.split())
        print(f"server pid {server.process.pid}, {args.items} items, {peer_count} peers, "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
        print("| scenario | pulls ok | p50 | p99 | slowest | exit codes | server peak RSS | peak threads | notes |")
        print("|---|---|---|---|---|---|---|---|---|")
        floods = {"idle": 500, "slowloris": 100, "nohello": 200}
        for name in scenarios:
            server.reset_peak()
            sampler = Sampler(server)
            sampler.start()
            if name == "crowd":
                barrier = threading.Barrier(args.crowd)

                def crowd_pull(store):
                    barrier.wait()
                    return pull(binary, store, 8)

                started = time.monotonic()
                with ThreadPoolExecutor(args.crowd) as pool:
                    results = list(pool.map(crowd_pull, peers[:args.crowd]))
                total = time.monotonic() - started
                sampler.stop_event.set()
                summarize(f"{args.crowd} concurrent pulls, --retries 8", results, sampler,
                          f"last finished after {total:.1f} s; load average {os.getloadavg()[0]:.1f}")
                continue
            flood = Flood(name, floods[name], port, cert)
            flood.start()
            time.sleep(3)  # let the flood reach the server's caps
            single = [pull(binary, peers[0], 3)]
            with ThreadPoolExecutor(args.peers) as pool:
                results = list(pool.map(lambda store: pull(binary, store, 3), peers[1:args.peers + 1]))
            sampler.stop_event.set()
            opened = flood.opened
            flood.stop()
            summarize(f"{name} x{floods[name]}: one peer", single, sampler)
            summarize(f"{name} x{floods[name]}: {args.peers} peers at once", results, sampler,
                      f"{opened} attacker connections opened; load average {os.getloadavg()[0]:.1f}")
            time.sleep(2)
        server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
