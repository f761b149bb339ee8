#!/usr/bin/env python3
"""The driver of Scripts/bench: see that script for what it measures."""
import datetime
import hashlib
import json
import os
import plistlib
import random
import re
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

SIZES = {"S": (1_000, 200), "M": (100_000, 2_000), "L": (1_000_000, 10_000)}
EPOCH_2001 = datetime.datetime(2001, 1, 1)  # plistlib wants naive UTC datetimes


def image_size(rng):
    """Phone JPEGs at quality 0.5: 50 KB to 2 MB, most around 150-250 KB (mean about 215 KB)."""
    return int(min(2_000_000, max(50_000, rng.lognormvariate(12.05, 0.7))))


def jpeg(rng, size):
    return b"\xff\xd8\xff\xe0" + rng.randbytes(size - 4)


class Inventory:
    """A deterministic inventory in the Homepwner app's own layout: items.plist + images by key."""

    def __init__(self, folder, n_items, n_images, seed=7):
        self.folder, self.rng = folder, random.Random(seed)
        os.makedirs(folder)
        self.items, self.bytes = [], 0
        with_image = set(self.rng.sample(range(n_items), n_images))
        for i in range(n_items):
            key = str(uuid.UUID(int=self.rng.getrandbits(128), version=4)).upper()
            item = {"name": f"Item {i}", "valueInDollars": self.rng.randint(0, 5000), "itemKey": key,
                    "dateCreated": EPOCH_2001 + datetime.timedelta(seconds=600_000_000 + i)}
            if i % 3 == 0:
                item["serialNumber"] = f"SN-{i:08d}"
            self.items.append(item)
            if i in with_image:
                self.write_image(key, image_size(self.rng))
        self.save()

    def write_image(self, key, size):
        data = jpeg(self.rng, size)
        with open(os.path.join(self.folder, key), "wb") as f:
            f.write(data)
        self.bytes += size

    def save(self):
        with open(os.path.join(self.folder, "items.plist"), "wb") as f:
            plistlib.dump(self.items, f, fmt=plistlib.FMT_BINARY)

    def mutate(self):
        """1% of items edited, 0.1% deleted (with their images), 10 images replaced."""
        n = len(self.items)
        picks = self.rng.sample(range(n), max(1, n // 100) + max(1, n // 1000))
        edited, deleted = picks[: max(1, n // 100)], set(picks[max(1, n // 100):])
        for i in edited:
            self.items[i]["valueInDollars"] += 1
            self.items[i]["name"] += " (edited)"
        images = [it["itemKey"] for it in self.items if os.path.exists(os.path.join(self.folder, it["itemKey"]))]
        for key in self.rng.sample(images, min(10, len(images))):
            self.write_image(key, image_size(self.rng))
        deleted_keys = [self.items[i]["itemKey"] for i in deleted]
        for key in deleted_keys:
            path = os.path.join(self.folder, key)
            if os.path.exists(path):
                os.unlink(path)
        self.items = [it for i, it in enumerate(self.items) if i not in deleted]
        self.save()
        return deleted_keys


class SSHD:
    """sshd on a loopback port with throwaway host and user keys."""

    def __init__(self, work):
        self.dir = os.path.join(work, "sshd")
        os.makedirs(self.dir)
        for name in ("host", "user"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{self.dir}/{name}"], check=True)
        shutil.copy(f"{self.dir}/user.pub", f"{self.dir}/authorized_keys")
        os.chmod(f"{self.dir}/authorized_keys", 0o600)
        self.port = free_port()
        config = f"{self.dir}/sshd_config"
        with open(config, "w") as f:
            f.write(f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {self.dir}/host\n"
                    f"AuthorizedKeysFile {self.dir}/authorized_keys\nPasswordAuthentication no\n"
                    "PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\n"
                    f"PidFile {self.dir}/sshd.pid\nSubsystem sftp internal-sftp\n")
        os.makedirs("/run/sshd", exist_ok=True)
        self.process = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", config], stderr=subprocess.DEVNULL)
        wait_for_port(self.port)
        self.ssh = (f"ssh -p {self.port} -i {self.dir}/user -o StrictHostKeyChecking=no "
                    "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR")

    def stop(self):
        self.process.terminate()
        self.process.wait()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on port {port}")


def timed(cmd):
    """Runs cmd under /usr/bin/time -v: (seconds, peak RSS MB, stdout, stderr). Dirty pages
    left by the step before are written out first, so no run pays for another's writeback."""
    os.sync()
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-3000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1)) / 1024
    return elapsed, rss, r.stdout, r.stderr


def tls_floor(total, work):
    """Moves `total` bytes once over loopback TLS 1.3 with plain OpenSSL (Python ssl), 1 MiB buffers."""
    cert, key = f"{work}/floor-cert.pem", f"{work}/floor-key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-days", "1", "-subj", "/CN=floor", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    server_ctx.load_cert_chain(cert, key)
    client_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client_ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    client_ctx.check_hostname = False
    client_ctx.verify_mode = ssl.CERT_NONE
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    received = [0]

    def receive():
        conn, _ = listener.accept()
        with server_ctx.wrap_socket(conn, server_side=True) as tls:
            buf = bytearray(1 << 20)
            while received[0] < total:
                n = tls.recv_into(buf)
                if n == 0:
                    break
                received[0] += n

    thread = threading.Thread(target=receive)
    thread.start()
    chunk = os.urandom(1 << 20)
    with client_ctx.wrap_socket(socket.create_connection(("127.0.0.1", port))) as tls:
        start = time.perf_counter()
        sent = 0
        while sent < total:
            n = min(len(chunk), total - sent)
            tls.sendall(chunk[:n])
            sent += n
        thread.join()  # the receiver has every byte
        elapsed = time.perf_counter() - start
    listener.close()
    return elapsed


class HPSync:
    def __init__(self, binary, work):
        self.bin, self.work = binary, work

    def run(self, *args):
        r = subprocess.run([self.bin, *args], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"hp-sync {' '.join(args)} failed ({r.returncode}): {r.stderr}")
        return r.stdout

    def init(self, store):
        self.run("init", "--store", store)
        return self.run("id", "--store", store).strip()


def stats(values):
    return statistics.median(values), min(values), max(values)


def bench_size(label, binary, runs, work, sshd):
    n_items, n_images = SIZES[label]
    print(f"\n== {label}: {n_items:,} items, {n_images:,} images", flush=True)
    t0 = time.perf_counter()
    inv = Inventory(f"{work}/{label}-src", n_items, n_images)
    hp = HPSync(binary, work)
    server = f"{work}/{label}-server"
    server_id = hp.init(server)
    hp.run("import-homepwner", inv.folder, "--store", server)
    image_bytes = inv.bytes
    print(f"   inventory {inv.bytes / 1e6:.0f} MB of images, generated and imported in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    port = free_port()
    serve = subprocess.Popen([binary, "serve", "--store", server, "--listen", f"127.0.0.1:{port}",
                              "--log-level", "error"])
    wait_for_port(port)
    results = {}

    def client(name):
        store = f"{work}/{label}-{name}"
        shutil.rmtree(store, ignore_errors=True)
        cid = hp.init(store)
        subprocess.run([binary, "peer", "rm", name, "--store", server], capture_output=True)
        hp.run("peer", "add", name, cid, "--store", server)
        hp.run("peer", "add", "server", server_id, "--address", f"127.0.0.1:{port}", "--store", store)
        return store

    def hp_pull(store):
        t, rss, out, _ = timed([binary, "pull", "server", "--json", "--store", store])
        report = json.loads(out)
        return t, rss, report["bytesReceived"] + report["bytesSent"]

    def rsync(dst, *extra):
        t, rss, out, _ = timed(["rsync", "-a", "--delete", "--stats", *extra, "-e", sshd.ssh,
                                inv.folder + "/", f"127.0.0.1:{dst}/"])
        sent = int(re.search(r"Total bytes sent: ([\d,]+)", out).group(1).replace(",", ""))
        recv = int(re.search(r"Total bytes received: ([\d,]+)", out).group(1).replace(",", ""))
        return t, rss, sent + recv

    full_hp, full_rs, same_hp, same_rs, full_rf = [], [], [], [], []
    for r in range(runs):
        store = client("bench")
        full_hp.append(hp_pull(store))
        same_hp.append(hp_pull(store))
        dst = f"{work}/{label}-rsync"
        shutil.rmtree(dst, ignore_errors=True)
        full_rs.append(rsync(dst))
        same_rs.append(rsync(dst))
        durable = f"{work}/{label}-rsync-fsync"
        shutil.rmtree(durable, ignore_errors=True)
        full_rf.append(rsync(durable, "--fsync"))
    results["full copy"] = (full_hp, full_rs)
    results["no change"] = (same_hp, same_rs)
    results["full, fsync"] = (full_hp, full_rf)

    # Incremental: snapshot both destinations, mutate the source once, then time each run
    # from the same starting point.
    shutil.copytree(store, f"{store}.snap", symlinks=True)
    shutil.copytree(dst, f"{dst}.snap", symlinks=True)
    shutil.copytree(durable, f"{durable}.snap", symlinks=True)
    deleted = inv.mutate()
    hp.run("import-homepwner", inv.folder, "--store", server)
    for start in range(0, len(deleted), 500):
        hp.run("rm", *deleted[start:start + 500], "--store", server)
    inc_hp, inc_rs, inc_rf = [], [], []
    for r in range(runs):
        for path in (store, dst, durable):
            shutil.rmtree(path)
            shutil.copytree(f"{path}.snap", path, symlinks=True)
        inc_hp.append(hp_pull(store))
        inc_rs.append(rsync(dst))
        inc_rf.append(rsync(durable, "--fsync"))
    results["incremental"] = (inc_hp, inc_rs)
    results["incr., fsync"] = (inc_hp, inc_rf)

    status = open(f"/proc/{serve.pid}/status").read()
    server_rss = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024
    serve.terminate()
    serve.wait()
    floor = statistics.median(tls_floor(image_bytes, work) for _ in range(3))

    print(f"   {'case':<12} {'hp-sync s (min-max)':>22} {'rsync s (min-max)':>22} {'hp/rsync':>9} "
          f"{'hp RSS MB':>10} {'hp wire MB':>11} {'rsync wire MB':>14}")
    for case, (hps, rss_) in results.items():
        h, hl, hh = stats([x[0] for x in hps])
        s, sl, sh = stats([x[0] for x in rss_])
        print(f"   {case:<12} {h:>8.3f} ({hl:.3f}-{hh:.3f}) {s:>8.3f} ({sl:.3f}-{sh:.3f}) {h / s:>9.2f} "
              f"{max(x[1] for x in hps):>10.1f} {statistics.median(x[2] for x in hps) / 1e6:>11.2f} "
              f"{statistics.median(x[2] for x in rss_) / 1e6:>14.2f}")
    full = stats([x[0] for x in full_hp])[0]
    print(f"   TLS floor for the {image_bytes / 1e6:.0f} MB of images: {floor:.3f} s; "
          f"hp-sync full copy / floor = {full / floor:.1f}")
    print(f"   serve peak RSS {server_rss:.1f} MB; hp-sync fsyncs every image and commits every 10,000 "
          "entries (protocol version 2); the ', fsync' rows compare it with rsync --fsync, the others "
          "with plain rsync")
    shutil.rmtree(f"{work}/{label}-src")


def main():
    binary = sys.argv[1]
    args = sys.argv[2:]
    runs = 3
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i:i + 2]
    labels = [a.upper() for a in args] or ["S", "M"]
    for label in labels:
        if label not in SIZES:
            sys.exit(f"unknown size {label}; use S, M or L")
    work = tempfile.mkdtemp(prefix="hp-sync-bench.")
    sshd = SSHD(work)
    try:
        print(f"machine: {os.cpu_count()} cores, {os.uname().release}; "
              f"{(subprocess.run([binary, '--version'], capture_output=True, text=True).stdout.splitlines() or ['hp-sync'])[0]}; "
              f"{subprocess.run(['rsync', '--version'], capture_output=True, text=True).stdout.splitlines()[0]}")
        for label in labels:
            bench_size(label, binary, runs, work, sshd)
    finally:
        sshd.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
