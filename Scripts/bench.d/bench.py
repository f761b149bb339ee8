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
import urllib.error
import urllib.request
import uuid

# L is 1,000,000 items with 100 images: the full form (10,000 images, about 2 GB) does not fit a
# bench run of 10 minutes on this machine; LF is that full form, for when there is time.
SIZES = {"S": (1_000, 200), "M": (100_000, 2_000), "L": (1_000_000, 100), "LF": (1_000_000, 10_000)}
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

    def images(self):
        """The image files' names, as they are now."""
        return sorted(name for name in os.listdir(self.folder) if name != "items.plist")

    def total_bytes(self):
        """Every byte of the folder: the images and items.plist."""
        return sum(os.path.getsize(os.path.join(self.folder, name)) for name in os.listdir(self.folder))

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


def timed(cmd, env=None):
    """Runs cmd under /usr/bin/time -v: (seconds, peak RSS MB, stdout, stderr, the machine's CPU
    seconds). Dirty pages left by the step before are written out first, so no run pays for
    another's writeback."""
    os.sync()
    meter = Meter().start()
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env)
    meter.stop()
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-3000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1)) / 1024
    return meter.wall, rss, r.stdout, r.stderr, meter.cpu


def machine_cpu():
    """CPU seconds every core of the machine has been busy so far (user, nice, system, IRQ,
    soft IRQ and steal time from /proc/stat; not idle, not I/O wait). A difference across a run
    counts every process of it, both sides and the kernel's work on their behalf, whatever the
    tool's process tree: sshd and the remote rsync, both Syncthing daemons."""
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class Meter:
    """Wall and whole-machine CPU seconds from `start()` to `stop()`."""

    def start(self):
        self.wall, self.cpu = time.perf_counter(), machine_cpu()
        return self

    def stop(self):
        self.wall, self.cpu = time.perf_counter() - self.wall, machine_cpu() - self.cpu
        return self


def cpu_seconds(time_output):
    """User + system CPU seconds from /usr/bin/time -v's report."""
    return sum(float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", time_output).group(1))
               for kind in ("User", "System"))


def tls_floor(total, work):
    """Moves `total` bytes once over loopback TLS 1.3 with plain OpenSSL (Python ssl), 1 MiB
    buffers. Returns a Meter."""
    cert, key = f"{work}/floor-cert.pem", f"{work}/floor-key.pem"
    if not os.path.exists(cert):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-days", "1", "-subj", "/CN=floor", "-keyout", key, "-out", cert],
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
        meter = Meter().start()
        sent = 0
        while sent < total:
            n = min(len(chunk), total - sent)
            tls.sendall(chunk[:n])
            sent += n
        thread.join()  # the receiver has every byte
        meter.stop()
    listener.close()
    return meter


def files_floor(images, folder, as_hp_sync):
    """Writes `images` (name -> bytes) as durable files in a new folder: each written, then
    fsynced and closed on a pool of 8 threads while the next ones are written (as hp-sync's image
    flusher does), then the folder fsynced once. With `as_hp_sync`, each is written as a
    temporary and renamed into place once fsynced, as hp-sync's store does. Returns a Meter; the
    folder is removed after."""
    from concurrent.futures import ThreadPoolExecutor

    def settle(fd, path):
        os.fsync(fd)
        os.close(fd)
        if as_hp_sync:
            os.rename(path, os.path.join(folder, os.path.basename(path)[len(".tmp-"):]))

    os.makedirs(folder)
    os.sync()
    meter = Meter().start()
    with ThreadPoolExecutor(max_workers=8) as pool:
        pending = []
        for name, data in images.items():
            path = os.path.join(folder, f".tmp-{name}" if as_hp_sync else name)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, data)
            pending.append(pool.submit(settle, fd, path))
        for future in pending:
            future.result()
    dfd = os.open(folder, os.O_RDONLY)
    os.fsync(dfd)
    os.close(dfd)
    meter.stop()
    shutil.rmtree(folder)
    return meter


def sqlite_floor(binary, items, images, store):
    """Inserts one row per item into the item table of a store that `binary init` made (so the
    schema is hp-sync's own, whatever its migrations are), in one transaction, WAL, synchronous =
    FULL, the writer's 20 MiB page cache, keys in the order a pull receives them. Returns a Meter
    (its CPU includes Python's handing of each row to SQLite)."""
    import sqlite3
    subprocess.run([binary, "init", "--store", store], check=True, capture_output=True)
    db = sqlite3.connect(os.path.join(store, "store.sqlite"), isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("PRAGMA cache_size = -20480")
    columns = [row[1] for row in db.execute("PRAGMA table_info(item)")]
    rng = random.Random(3)
    origin = rng.randbytes(16)
    known = {"key", "name", "serialNumber", "valueInDollars", "dateCreated", "imageDigest", "imageSize",
             "stamp", "origin", "deleted", "seq", "fields"}
    missing = [c for c in columns if c not in known]
    if missing:
        sys.exit(f"the SQLite floor does not know the item columns {missing}: teach sqlite_floor them")
    rows = []
    for seq, item in enumerate(items, start=1):
        key = item["itemKey"]
        image = images.get(key)
        ms = int((item["dateCreated"] - EPOCH_2001).total_seconds() * 1000)
        values = {"key": key, "name": item["name"], "serialNumber": item.get("serialNumber"),
                  "valueInDollars": item["valueInDollars"], "dateCreated": ms,
                  "imageDigest": hashlib.sha256(image).digest() if image is not None else None,
                  "imageSize": len(image) if image is not None else None, "stamp": (ms << 16) | 1,
                  "origin": origin, "deleted": 0, "seq": seq, "fields": None}
        rows.append(tuple(values[c] for c in columns))
    sql = f"INSERT INTO item ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    os.sync()
    meter = Meter().start()
    db.execute("BEGIN")
    db.executemany(sql, rows)
    db.execute("COMMIT")
    meter.stop()
    db.close()
    shutil.rmtree(store)
    return meter


def digest_floor(images):
    """SHA-256 of every image once, in this process (OpenSSL's, through hashlib). Not a floor of
    the copy itself: what one side's check of the images costs. Returns a Meter."""
    meter = Meter().start()
    for data in images.values():
        hashlib.sha256(data).digest()
    return meter.stop()


class Size:
    """What every tool of one size shares: the inventory, the work folder, sshd."""

    def __init__(self, label, work, sshd):
        self.label, self.work, self.sshd = label, work, sshd
        self.n_items, self.n_images = SIZES[label]
        self.inv = Inventory(f"{work}/{label}-src", self.n_items, self.n_images)

    def path(self, name):
        return f"{self.work}/{self.label}-{name}"


class Tool:
    """One tool of the rounds. A subclass gives `name`, `durable`, `kept` (the folders its
    destination is: kept after the full-copy rounds and restored for each incremental round),
    `fresh()` (an empty destination) and `sync()` ((seconds, peak RSS MB, wire bytes or None, the
    machine's CPU seconds over the run))."""
    linked = ()  # the kept folders copied as hard links: see UnisonTool
    wire_prefix = ""  # "~" where the wire bytes are the tool's own counters, read around the run

    def full(self):
        self.fresh()
        return self.sync()

    def same(self):
        return self.sync()

    def snapshot(self):
        for path in self.kept:
            self.copy(path, f"{path}.snap")

    def source_changed(self, deleted):
        pass

    def incremental(self):
        for path in self.kept:
            shutil.rmtree(path)
            self.copy(f"{path}.snap", path)
        return self.sync()

    def copy(self, source, destination):
        if source.removesuffix(".snap") in self.linked:
            subprocess.run(["cp", "-al", source, destination], check=True)
        else:
            shutil.copytree(source, destination, symlinks=True)

    def stop(self):
        pass


class HPSyncTool(Tool):
    """`hp-sync pull` from a `serve` on loopback, both of one binary, into a new store each round."""
    durable = "yes: every image fsynced, SQLite synchronous = FULL"

    def __init__(self, name, binary, size):
        self.name, self.bin, self.size = name, binary, size
        self.tag = re.sub(r"\W", "", name)
        self.server = size.path(f"{self.tag}-server")
        self.server_id = self.init(self.server)
        self.run("import-homepwner", size.inv.folder, "--store", self.server)
        self.port = free_port()
        self.serve = subprocess.Popen([binary, "serve", "--store", self.server, "--listen",
                                       f"127.0.0.1:{self.port}", "--log-level", "error"])
        wait_for_port(self.port)
        self.store = size.path(f"{self.tag}-client")
        self.kept = [self.store]

    def run(self, *args):
        r = subprocess.run([self.bin, *args], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{self.name} {' '.join(args)} failed ({r.returncode}): {r.stderr}")
        return r.stdout

    def init(self, store):
        self.run("init", "--store", store)
        return self.run("id", "--store", store).strip()

    def sync(self):
        served = self.server_cpu()
        t, rss, out, err, cpu = timed([self.bin, "pull", "server", "--json", "--store", self.store])
        report = json.loads(out)
        processes = cpu_seconds(err) + self.server_cpu() - served
        return t, rss, report["bytesReceived"] + report["bytesSent"], cpu, processes

    def server_cpu(self):
        """CPU seconds (user + system) the `serve` process has used so far."""
        fields = open(f"/proc/{self.serve.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def fresh(self):
        shutil.rmtree(self.store, ignore_errors=True)
        cid = self.init(self.store)
        subprocess.run([self.bin, "peer", "rm", "bench", "--store", self.server], capture_output=True)
        self.run("peer", "add", "bench", cid, "--store", self.server)
        self.run("peer", "add", "server", self.server_id, "--address", f"127.0.0.1:{self.port}",
                 "--store", self.store)

    def source_changed(self, deleted):
        self.run("import-homepwner", self.size.inv.folder, "--store", self.server)
        for start in range(0, len(deleted), 500):
            self.run("rm", *deleted[start:start + 500], "--store", self.server)

    def stop(self):
        if self.serve.poll() is None:
            status = open(f"/proc/{self.serve.pid}/status").read()
            self.server_rss = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024
            self.serve.terminate()
        self.serve.wait()


class RsyncTool(Tool):
    """`rsync -a --delete` over ssh on loopback, optionally with --fsync, into a new folder each round."""

    def __init__(self, size, fsync):
        self.size, self.fsync = size, fsync
        self.name = "rsync --fsync" if fsync else "rsync"
        self.durable = "yes: --fsync, each file (not the folder)" if fsync else "no"
        self.dst = size.path("rsync-fsync" if fsync else "rsync")
        self.kept = [self.dst]

    def sync(self):
        t, rss, out, _, cpu = timed(["rsync", "-a", "--delete", "--stats", *(["--fsync"] if self.fsync else []),
                                "-e", self.size.sshd.ssh, self.size.inv.folder + "/", f"127.0.0.1:{self.dst}/"])
        sent = int(re.search(r"Total bytes sent: ([\d,]+)", out).group(1).replace(",", ""))
        recv = int(re.search(r"Total bytes received: ([\d,]+)", out).group(1).replace(",", ""))
        return t, rss, sent + recv, cpu

    def fresh(self):
        shutil.rmtree(self.dst, ignore_errors=True)


class UnisonTool(Tool):
    """`unison SRC DST -batch` between two local folders, its archives in a folder of its own."""
    name = "Unison"
    durable = "no: not one fsync, fdatasync or syncfs in a full copy (strace -f of Unison 2.52.1)"

    def __init__(self, size):
        self.size = size
        self.dst, self.home = size.path("unison"), size.path("unison-home")
        self.env = dict(os.environ, UNISON=self.home)
        self.kept = [self.dst, self.home]
        # Hard links keep the inode numbers that Unison's archive recorded, so a restored copy is
        # not taken for changed; Unison replaces files by renaming temporaries, never in place.
        self.linked = [self.dst]

    def sync(self):
        t, rss, _, _, cpu = timed(["unison", self.size.inv.folder, self.dst, "-batch", "-auto", "-silent",
                              "-confirmbigdel=false", "-times", "-log=false", "-ui", "text"], env=self.env)
        return t, rss, None, cpu

    def fresh(self):
        for path in (self.dst, self.home):
            shutil.rmtree(path, ignore_errors=True)
            os.makedirs(path)


class SyncthingInstance:
    """One `syncthing serve` with a home of its own, its REST API on a loopback port."""

    def __init__(self, home, log):
        self.home, self.log = home, log
        os.makedirs(home, exist_ok=True)
        out = subprocess.run(["syncthing", "generate", f"--home={home}", "--no-default-folder"],
                             capture_output=True, text=True, check=True)
        self.id = re.search(r"Device ID: (\S+)", out.stdout + out.stderr).group(1)
        self.gui_port, self.port = free_port(), free_port()
        self.key = uuid.uuid4().hex
        self.process = None

    def configure(self, peer, folder, kind, marker, paused):
        """Loopback only: no discovery, relays, NAT, usage reporting, crash reports, upgrades or
        browser; full priority; one folder `bench` shared with `peer`, no watcher, no rescans."""
        import xml.etree.ElementTree as ET
        import copy
        path = os.path.join(self.home, "config.xml")
        tree = ET.parse(path)
        root = tree.getroot()
        options = root.find("options")
        for name, value in {"listenAddress": f"tcp://127.0.0.1:{self.port}", "globalAnnounceEnabled": "false",
                            "localAnnounceEnabled": "false", "relaysEnabled": "false", "natEnabled": "false",
                            "startBrowser": "false", "urAccepted": "-1", "crashReportingEnabled": "false",
                            "autoUpgradeIntervalH": "0", "setLowPriority": "false",
                            "progressUpdateIntervalS": "-1", "stunKeepaliveStartS": "0"}.items():
            element = options.find(name)
            if element is None:
                element = ET.SubElement(options, name)
            element.text = value
        gui = root.find("gui")
        gui.find("address").text = f"127.0.0.1:{self.gui_port}"
        gui.find("apikey").text = self.key
        device = copy.deepcopy(root.find("defaults/device"))
        device.set("id", peer.id)
        device.set("name", "peer")
        device.find("address").text = f"tcp://127.0.0.1:{peer.port}"
        root.insert(1, device)
        shared = copy.deepcopy(root.find("defaults/folder"))
        for name, value in {"id": "bench", "label": "bench", "path": folder, "type": kind, "rescanIntervalS": "0",
                            "fsWatcherEnabled": "false"}.items():
            shared.set(name, value)
        template = shared.find("device")
        for element in shared.findall("device"):
            shared.remove(element)
        for device_id in (self.id, peer.id):
            element = copy.deepcopy(template)
            element.set("id", device_id)
            shared.insert(1, element)
        shared.find("markerName").text = marker
        shared.find("paused").text = "true" if paused else "false"
        self.disable_fsync = shared.find("disableFsync").text
        root.insert(0, shared)
        tree.write(path)

    def start(self):
        env = dict(os.environ, STNODEFAULTFOLDER="1", STNOUPGRADE="1", STNORESTART="1")
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(["syncthing", "serve", f"--home={self.home}", "--no-browser",
                                             "--no-restart", "--no-upgrade"], env=env, stdout=log,
                                            stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                self.get("/rest/system/ping")
                return
            except OSError:
                if self.process.poll() is not None:
                    sys.exit(f"syncthing exited ({self.process.returncode}); see {self.log}")
                time.sleep(0.05)
        sys.exit(f"syncthing's REST API did not answer; see {self.log}")

    def stop(self):
        if self.process is None:
            return
        try:
            self.call("POST", "/rest/system/shutdown")
            self.process.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        self.process = None

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://127.0.0.1:{self.gui_port}{path}", data=data, method=method,
                                         headers={"X-API-Key": self.key, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
        return json.loads(text) if text.strip() else None

    def get(self, path):
        return self.call("GET", path)

    def status(self):
        return self.get("/rest/db/status?folder=bench")

    def wait(self, what, condition, timeout=600, interval=0.01):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if condition():
                return
            time.sleep(interval)
        sys.exit(f"syncthing: timed out waiting for {what}; see {self.log}")

    def connected(self, peer):
        return self.get("/rest/system/connections")["connections"].get(peer.id, {}).get("connected", False)

    def peak_rss(self):
        """The peak RSS of the process that syncs: `syncthing serve` runs it as a child of a
        monitor process even with --no-restart."""
        pid = self.process.pid
        children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
        return max(int(re.search(r"VmHWM:\s+(\d+) kB", open(f"/proc/{p}/status").read()).group(1)) / 1024
                   for p in [pid, *children])

    def wire_bytes(self):
        total = self.get("/rest/system/connections")["total"]
        return total["inBytesTotal"] + total["outBytesTotal"]


class SyncthingTool(Tool):
    """Two Syncthing instances on loopback: the source's folder is the inventory (send only), the
    receiver's (receive only) is shared paused; timed from unpausing it until the receiver has
    the source's latest index and reports every byte in sync."""
    name = "Syncthing"
    wire_prefix = "~"

    def __init__(self, size):
        self.size = size
        self.dst = size.path("syncthing")
        self.src = SyncthingInstance(size.path("st-src-home"), size.path("st-src.log"))
        self.rcv = SyncthingInstance(size.path("st-dst-home"), size.path("st-dst.log"))
        # The inventory's own items.plist marks the source's folder root, so no .stfolder is added
        # to the data the other tools copy.
        self.src.configure(self.rcv, size.inv.folder, "sendonly", "items.plist", paused=False)
        self.rcv.configure(self.src, self.dst, "receiveonly", ".stfolder", paused=True)
        self.durable = ("yes: file and folder fsynced" if self.rcv.disable_fsync == "false"
                        else f"disableFsync = {self.rcv.disable_fsync}")
        self.src.start()
        self.source_scanned()

    def source_scanned(self):
        files = len(os.listdir(self.size.inv.folder))
        self.src.wait("the source's scan",
                      lambda: (s := self.src.status())["state"] == "idle" and s["localFiles"] == files, interval=0.2)

    def fresh_receiver(self, snapshot=None):
        self.rcv.stop()
        for path in (self.dst, self.rcv.home):
            if snapshot:
                shutil.rmtree(path)
                shutil.copytree(f"{path}.snap", path, symlinks=True)
        if not snapshot:
            shutil.rmtree(self.dst, ignore_errors=True)
            os.makedirs(f"{self.dst}/.stfolder")
            for name in os.listdir(self.rcv.home):
                if name.startswith("index-"):
                    shutil.rmtree(os.path.join(self.rcv.home, name))
        self.rcv.start()
        self.rcv.wait("the connection", lambda: self.rcv.connected(self.src), interval=0.05)

    def unpause_until_synced(self):
        source = self.src.status()
        sequence, size = source["sequence"], source["localBytes"]
        remote = f"/rest/db/completion?folder=bench&device={self.src.id}"
        before = self.rcv.wire_bytes()
        events = self.rcv.get("/rest/events?since=0&limit=1")
        since = [events[-1]["id"] if events else 0]
        went_idle = [False]
        os.sync()
        meter = Meter().start()
        self.rcv.call("PATCH", "/rest/config/folders/bench", {"paused": False})

        def synced():
            # The folder has started again and become idle at least once (its state times
            # are in whole seconds, so the events say it)...
            if not went_idle[0]:
                for event in self.rcv.get(f"/rest/events?since={since[0]}&timeout=0"):
                    since[0] = event["id"]
                    data = event.get("data") or {}
                    if event["type"] == "StateChanged" and data.get("folder") == "bench" and data.get("to") == "idle":
                        went_idle[0] = True
                if not went_idle[0]:
                    return False
            # ...is idle now, needs nothing, holds every byte, and has the source's latest index.
            s = self.rcv.status()
            if s["state"] != "idle" or s["needTotalItems"] != 0 or not s["globalBytes"] == s["inSyncBytes"] == size:
                return False
            try:
                c = self.rcv.get(remote)
            except urllib.error.HTTPError:  # 404 while the folder is still starting
                return False
            return c.get("remoteState", "valid") == "valid" and c.get("sequence", sequence) >= sequence

        self.rcv.wait("the receiver to be in sync", synced)
        meter.stop()
        return meter.wall, self.rcv.peak_rss(), self.rcv.wire_bytes() - before, meter.cpu

    def pause(self):
        self.rcv.call("PATCH", "/rest/config/folders/bench", {"paused": True})
        self.rcv.wait("the pause", lambda: self.rcv.status()["state"] in ("", "paused"), interval=0.05)

    def full(self):
        self.fresh_receiver()
        return self.unpause_until_synced()

    def same(self):
        self.pause()
        return self.unpause_until_synced()

    def snapshot(self):
        self.pause()
        self.rcv.stop()
        for path in (self.dst, self.rcv.home):
            shutil.copytree(path, f"{path}.snap", symlinks=True)
        self.rcv.start()

    def source_changed(self, deleted):
        self.src.call("POST", "/rest/db/scan?folder=bench")
        self.source_scanned()

    def incremental(self):
        self.fresh_receiver(snapshot=True)
        return self.unpause_until_synced()

    def stop(self):
        self.rcv.stop()
        self.src.stop()


CASES = ("full copy", "incremental", "no change")

VM_NOTE = ("note: two properties of this VM skew file timings: its ext4 runs without a journal, so creating "
           "files right after many deletions is slow (each create scans the recently deleted inodes), and the "
           "page cache is paged out after about a minute idle. Every tool pays the same: each round runs every "
           "tool once on the same data, each round starting one tool further on, and each tool begins its "
           "full copy by deleting what its last one wrote.")


def stats(values):
    return statistics.median(values), min(values), max(values)


def table(rows, markdown):
    """Prints rows (the first is the header) as aligned text or as a Markdown table."""
    if markdown:
        print("| " + " | ".join(rows[0]) + " |")
        print("|" + "---|" * len(rows[0]))
        for row in rows[1:]:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("   " + "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                                for i, (cell, w) in enumerate(zip(row, widths))))


def run_rounds(size, tools, binaries, runs, skip, images, t0):
    """Sets the tools up (appending each to `tools` as it starts, so the caller can stop them
    whatever happens), then runs the rounds: (results by tool and case, floors by kind)."""
    inv, n_items, n_images, total = size.inv, size.n_items, size.n_images, size.inv.total_bytes()
    tools += [HPSyncTool(name, binary, size) for name, binary in binaries]
    tools += [RsyncTool(size, fsync=False), RsyncTool(size, fsync=True)]
    if "syncthing" not in skip:
        tools.append(SyncthingTool(size))
    if "unison" not in skip:
        tools.append(UnisonTool(size))
    print(f"\n== {size.label}: {n_items:,} items, {n_images:,} images, {total / 1e6:.0f} MB "
          f"(items.plist {os.path.getsize(os.path.join(inv.folder, 'items.plist')) / 1e6:.1f} MB); generated, "
          f"imported and scanned in {time.perf_counter() - t0:.1f} s", flush=True)

    results = {tool.name: {case: [] for case in CASES} for tool in tools}
    floors = {"tls": [], "files": [], "renamed": [], "sqlite": [], "digest": []}
    for r in range(runs):
        for tool in rotated(tools, r):
            results[tool.name]["full copy"].append(tool.full())
            results[tool.name]["no change"].append(tool.same())
        floors["tls"].append(tls_floor(total, size.work))
        # The floors that create files take turns at going first: the first pays most of the
        # scan of the inodes the tools just deleted (in session 17 the files written in place,
        # always first, took 1.3 s where the same files as temporaries, right after, took 0.7).
        writers = [("files", lambda: files_floor(images, size.path("floor-files"), as_hp_sync=False)),
                   ("renamed", lambda: files_floor(images, size.path("floor-files"), as_hp_sync=True)),
                   ("sqlite", lambda: sqlite_floor(binaries[0][1], inv.items, images, size.path("floor-store")))]
        for kind, floor in rotated(writers, r):
            floors[kind].append(floor())
        floors["digest"].append(digest_floor(images))
        print(f"   round {r + 1} of {runs}: full copy and no change done", flush=True)

    # Incremental: every destination is kept as the rounds above left it, the source is changed
    # once (the same edit set for every tool), and each round starts again from the kept state.
    for tool in tools:
        tool.snapshot()
    deleted = inv.mutate()
    for tool in tools:
        tool.source_changed(deleted)
    for r in range(runs):
        for tool in rotated(tools, r):
            results[tool.name]["incremental"].append(tool.incremental())
    return results, floors


def rotated(tools, r):
    """The tools (or floors) in round `r`'s order: each round starts one further on. The first
    tool of a round creates its files right after the floors (or the previous tool) removed
    thousands, which this ext4 makes slow: a fixed order put that cost on the same tool every
    round (in session 16 the first of two hp-sync builds read up to 20% slower on the full
    copy)."""
    k = r % len(tools)
    return tools[k:] + tools[:k]


def bench_size(label, binaries, runs, work, sshd, skip, markdown):
    n_items, n_images = SIZES[label]
    t0 = time.perf_counter()
    size = Size(label, work, sshd)
    inv = size.inv
    total = inv.total_bytes()
    images = {name: open(os.path.join(inv.folder, name), "rb").read() for name in inv.images()}
    tools = []
    try:
        results, floors = run_rounds(size, tools, binaries, runs, skip, images, t0)
    finally:
        for tool in tools:
            tool.stop()

    def median(tool, case):
        return stats([x[0] for x in results[tool.name][case]])[0]

    names = [tool.name for tool in tools]
    print(f"   seconds, median (min-max) of {runs} interleaved round{'s' if runs > 1 else ''}")
    rows = [["case", *names]]
    for case in CASES:
        cells = []
        for tool in tools:
            m, lo, hi = stats([x[0] for x in results[tool.name][case]])
            cells.append(f"{m:.3f} ({lo:.3f}-{hi:.3f})")
        rows.append([case, *cells])
    for first in tools[:len(binaries)]:
        for case in CASES:
            rows.append([f"{first.name} / tool, {case}",
                         *[f"{median(first, case) / median(tool, case):.2f}" for tool in tools]])
    rows.append(["peak RSS MB, full copy", *[f"{max(x[1] for x in results[t.name]['full copy']):.0f}"
                                             for t in tools]])

    def wire(tool, case):
        values = [x[2] for x in results[tool.name][case]]
        return "-" if None in values else f"{tool.wire_prefix}{statistics.median(values) / 1e6:.2f}"

    rows.append(["wire MB, full / incr.", *[f"{wire(t, 'full copy')} / {wire(t, 'incremental')}" for t in tools]])
    rows.append(["CPU-s of the machine, full copy", *[f"{stats([x[3] for x in results[t.name]['full copy']])[0]:.2f}"
                                                      for t in tools]])
    table(rows, markdown)

    def floor_median(kind, what):
        return statistics.median(getattr(meter, what) for meter in floors[kind])

    tls, files, renamed, sqlite, digest = (floor_median(k, "wall") for k in ("tls", "files", "renamed", "sqlite", "digest"))
    floor = tls + files + sqlite
    cpu = {k: floor_median(k, "cpu") for k in floors}
    print(f"\n   floors, measured in the same rounds (median of {runs}; CPU: the whole machine's):")
    table([["floor", "s", "CPU-s"],
           [f"TLS 1.3 over loopback, the same {total / 1e6:.1f} MB (Python ssl, 1 MiB buffers)", f"{tls:.3f}",
            f"{cpu['tls']:.2f}"],
           [f"{len(images):,} durable image files (written, fsynced on 8 threads, one folder fsync)",
            f"{files:.3f}", f"{cpu['files']:.2f}"],
           ["  the same, as temporary + fsync + rename, as hp-sync does", f"{renamed:.3f}", f"{cpu['renamed']:.2f}"],
           [f"{n_items:,} item rows, hp-sync's schema, one transaction, WAL, synchronous = FULL", f"{sqlite:.3f}",
            f"{cpu['sqlite']:.2f}"],
           ["sum: TLS + durable files + rows", f"{floor:.3f}", f"{cpu['tls'] + cpu['files'] + cpu['sqlite']:.2f}"],
           ["not in the sum: SHA-256 of every image once (one side's check)", f"{digest:.3f}",
            f"{cpu['digest']:.2f}"]], markdown)
    print("\n   full copy / sum of the floors (the sum counts the files written in place, without the renames):")
    table([["", *names], ["full copy / floors", *[f"{median(t, 'full copy') / floor:.2f}" for t in tools]]],
          markdown)
    print("\n   durable (fsync):")
    for tool in tools:
        print(f"   - {tool.name}: {tool.durable}")
    for tool in tools[:len(binaries)]:
        print(f"   {tool.name} serve peak RSS {tool.server_rss:.1f} MB")
    for tool in tools[:len(binaries)]:
        cpu = stats([x[4] for x in results[tool.name]["full copy"]])
        print(f"   {tool.name} CPU of a full copy, client + server: {cpu[0]:.2f} CPU-s ({cpu[1]:.2f}-{cpu[2]:.2f})")
    shutil.rmtree(inv.folder)


def version(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return (r.stdout.strip().splitlines() or r.stderr.strip().splitlines() or ["?"])[0]


def main():
    args = sys.argv[1:]
    binaries = [("hp-sync", args.pop(0))]
    runs, skip, markdown, parent = 3, set(), False, None
    compare = os.environ.get("HP_SYNC_BIN_BEFORE")
    while any(a.startswith("--") for a in args):
        i = next(i for i, a in enumerate(args) if a.startswith("--"))
        flag = args.pop(i)
        if flag == "--runs":
            runs = int(args.pop(i))
        elif flag == "--compare-bin":
            compare = args.pop(i)
        elif flag == "--skip":
            skip |= {name.strip().lower() for name in args.pop(i).split(",")}
        elif flag == "--markdown":
            markdown = True
        elif flag == "--work":
            parent = args.pop(i)
        else:
            sys.exit(f"unknown option {flag}")
    if compare:
        binaries.append(("compare", os.path.abspath(compare)))
    labels = [a.upper() for a in args] or ["S", "M"]
    for label in labels:
        if label not in SIZES:
            sys.exit(f"unknown size {label}; use {', '.join(SIZES)}")
    work = tempfile.mkdtemp(prefix="hp-sync-bench.", dir=parent)
    sshd = None
    try:
        sshd = SSHD(work)
        print(f"machine: {os.cpu_count()} cores, {os.uname().release}, load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        for name, binary in binaries:
            print(f"{name}: {binary} ({version([binary, '--version'])})")
        print(f"peers: {version(['rsync', '--version'])}"
              + ("" if "syncthing" in skip else f"; {version(['syncthing', '--version'])}")
              + ("" if "unison" in skip else f"; {version(['unison', '-version'])}"))
        filesystem = subprocess.run(["stat", "-f", "-c", "%T", work], capture_output=True, text=True).stdout.strip()
        print(f"work folder: {work} ({filesystem or 'unknown file system'})")
        print(VM_NOTE)
        for label in labels:
            bench_size(label, binaries, runs, work, sshd, skip, markdown)
    finally:
        if sshd:
            sshd.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
