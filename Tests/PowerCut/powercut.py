#!/usr/bin/python3
"""Cuts the power under hp-sync, many times, and checks that nothing acknowledged was lost.

    powercut.py HP_SYNC_BINARY [--cuts N] [--seed S] [--scenarios a,b] [--keep]

Every store under test lives on powercutfs.py (a FUSE layer that, at a cut, forgets every byte and
directory entry no fsync covered, and in a torn cut keeps a random part of them). Scenarios:

  pull-full         a full pull into a new store, cut at a random moment
  pull-incremental  an incremental pull (edits, deletions, new and replaced photos at the source)
  push              a push into a `serve` whose store is on the layer (the server is cut)
  local             local writes on the layer: add --image, image set, edit, rm, import,
                    import-homepwner, trash restore, gc, verify --repair; cut during one of them

After each cut the layer is mounted again and: the store opens and `verify` is clean; every
command that exited 0 before the cut is there with its content (a pull or push that finished:
both sides equal; a local command: every item as the last acknowledged listing had it, or newer);
the next pull or push (or the cut command run again) converges exactly. Exits 1 on any failure
and prints the count of cuts per scenario and of failures. Needs root and /dev/fuse.
"""

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
LAYER = os.path.join(HERE, "powercutfs.py")
SCENARIOS = ["pull-full", "pull-incremental", "push", "local"]


class Failure(Exception):
    pass


class Layer:
    """One powercutfs mount over a backing folder: mount, cut, unmount."""

    def __init__(self, root, name, rng):
        self.backing = os.path.join(root, name + "-backing")
        self.mount = os.path.join(root, name)
        self.control = os.path.join(root, name + "-control")
        self.rng = rng
        self.process = None
        for path in (self.backing, self.mount, self.control):
            os.makedirs(path, exist_ok=True)

    def start(self):
        for name in ("ready", "frozen"):
            if os.path.exists(os.path.join(self.control, name)):
                os.unlink(os.path.join(self.control, name))
        self.process = subprocess.Popen(
            ["/usr/bin/python3", LAYER, self.backing, self.mount, self.control,
             "--seed", str(self.rng.randrange(1 << 30))])
        self.wait_for("ready")

    def wait_for(self, name):
        deadline = time.time() + 20
        while not os.path.exists(os.path.join(self.control, name)):
            if self.process.poll() is not None or time.time() > deadline:
                raise Failure(f"powercutfs did not report {name}")
            time.sleep(0.005)

    def cut(self, torn):
        """Freezes the layer: from now on nothing written reaches the disk."""
        self.process.send_signal(signal.SIGUSR2 if torn else signal.SIGUSR1)
        self.wait_for("frozen")

    def stop(self):
        """Unmounts (after a cut: the backing folder gets the state the cut left)."""
        for _ in range(100):
            if subprocess.run(["fusermount3", "-u", self.mount], stderr=subprocess.DEVNULL).returncode == 0:
                break
            time.sleep(0.05)
        else:
            subprocess.run(["fusermount3", "-u", "-z", self.mount])
        if self.process.wait(timeout=120) != 0:
            raise Failure("powercutfs failed")

    def age(self, seconds=3600):
        """Moves every file's times back: the checks after a cut run as if much later (the sweep
        and `verify` treat young leftovers as another process's write in flight)."""
        then = time.time() - seconds
        for folder, dirs, files in os.walk(self.backing):
            for name in dirs + files:
                os.utime(os.path.join(folder, name), (then, then), follow_symlinks=False)

    def restart(self):
        self.stop()
        self.start()

    def wipe(self):
        """Starts again from an empty folder."""
        self.stop()
        shutil.rmtree(self.backing)
        os.makedirs(self.backing)
        self.start()


class Node:
    def __init__(self, binary, store):
        self.binary = binary
        self.store = store

    def run(self, *args, check=True, timeout=120):
        env = dict(os.environ)
        env.pop("HP_SYNC_HOME", None)
        result = subprocess.run(
            [self.binary, *args, "--store", self.store], capture_output=True, text=True, env=env, timeout=timeout)
        if check and result.returncode != 0:
            raise Failure(f"hp-sync {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
        return result

    def start(self, *args):
        env = dict(os.environ)
        env.pop("HP_SYNC_HOME", None)
        return subprocess.Popen(
            [self.binary, *args, "--store", self.store], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, env=env)

    def items(self):
        listing = json.loads(self.run("list", "--json", "--deleted").stdout)
        return {item["key"]: item for item in listing}

    def node_id(self):
        return self.run("id").stdout.strip()

    def check_trash(self, context):
        """Every trashed version's photo is in trash/ with its bytes (`trash restore` needs them)."""
        for entry in json.loads(self.run("trash", "list", "--json").stdout or "[]"):
            digest = entry.get("imageSHA256")
            if not digest:
                continue
            path = os.path.join(self.store, "trash", digest)
            if not os.path.exists(path):
                raise Failure(f"{context}: trash entry {entry['id']} of {entry['key']} names trash/{digest}, which is gone")
            with open(path, "rb") as f:
                if hashlib.sha256(f.read()).hexdigest() != digest:
                    raise Failure(f"{context}: trash/{digest} does not hold the bytes of its digest")

    def verify(self, context):
        self.check_trash(context)
        result = self.run("verify", check=False)
        if result.returncode != 0:
            raise Failure(f"{context}: verify exited {result.returncode}: {result.stdout.strip()} {result.stderr.strip()}")


class Server:
    """`hp-sync serve` in the background; the port comes from its log."""

    def __init__(self, node):
        self.process = node.start("serve", "--listen", "127.0.0.1:0")
        log = ""
        deadline = time.time() + 30
        while time.time() < deadline:
            line = self.process.stderr.readline()
            if not line:
                break
            log += line
            if "listen=127.0.0.1:" in line:
                digits = line.split("listen=127.0.0.1:")[1]
                self.address = "127.0.0.1:" + "".join(c for c in digits[:6] if c.isdigit())
                return
        raise Failure(f"serve did not start: {log}")

    def kill(self):
        self.process.kill()
        self.process.wait()


def jpeg(rng, size):
    return b"\xff\xd8\xff\xe0" + rng.randbytes(size)


def same(a, b, context):
    """Both listings hold the same versions (key, stamp, origin and every field)."""
    if a != b:
        only_a = sorted(set(a) - set(b))[:3]
        only_b = sorted(set(b) - set(a))[:3]
        changed = [k for k in a if k in b and a[k] != b[k]][:3]
        raise Failure(f"{context}: stores differ (only first {only_a}, only second {only_b}, changed {changed})")


def not_older(acknowledged, after, context, tombstones_may_go=False):
    """Every acknowledged version is still there, or a newer one replaced it (or gc dropped a tombstone)."""
    for key, item in acknowledged.items():
        now = after.get(key)
        if now is None and tombstones_may_go and item["deleted"]:
            continue
        if now is None:
            raise Failure(f"{context}: acknowledged item {key} is gone")
        if (now["stamp"], now["origin"]) < (item["stamp"], item["origin"]):
            raise Failure(f"{context}: item {key} went back to an older version")
        if (now["stamp"], now["origin"]) == (item["stamp"], item["origin"]) and now != item:
            raise Failure(f"{context}: item {key} changed without a new version: {item} -> {now}")


class Harness:
    def __init__(self, binary, root, rng, log):
        self.binary = binary
        self.root = root
        self.rng = rng
        self.log = log
        self.midway = {}  # per scenario: cuts that found the command still running
        self.scenario = ""
        self.files = os.path.join(root, "files")
        os.makedirs(self.files)
        self.source = Node(binary, os.path.join(root, "source"))
        self.source.run("init")
        self.import_batch(self.source, 40)
        for key in list(self.source.items())[:12]:
            self.set_image(self.source, key)

    def file(self, name, data):
        path = os.path.join(self.files, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def export_file(self, count):
        """An hp-sync export of `count` new items, as `import` reads it."""
        items = [{
            "key": str(uuid.UUID(int=self.rng.getrandbits(128), version=4)).upper(),
            "name": f"item {self.rng.randrange(10**6)}", "valueInDollars": self.rng.randrange(5000),
            "serialNumber": f"SN{self.rng.randrange(10**6)}", "dateCreatedMilliseconds": 1_750_000_000_000,
        } for _ in range(count)]
        return self.file(f"batch-{self.rng.randrange(10**9)}.json", json.dumps(
            {"format": "hp-sync-export", "version": 1, "items": items}).encode())

    def import_batch(self, node, count):
        node.run("import", self.export_file(count))

    def set_image(self, node, key, size=None):
        path = self.file(f"img-{self.rng.randrange(10**9)}.jpg", jpeg(self.rng, size or self.rng.randrange(1000, 300_000)))
        node.run("image", "set", key, path)

    def mutate_source(self):
        keys = [k for k, v in self.source.items().items() if not v["deleted"]]
        self.rng.shuffle(keys)
        for key in keys[:3]:
            self.source.run("edit", key, "--name", f"edited {self.rng.randrange(10**6)}")
        for key in keys[3:5]:
            self.set_image(self.source, key)
        if len(keys) > 30:
            self.source.run("rm", keys[5])
        self.import_batch(self.source, 5)

    # Runs a command on a layer and cuts at a random moment; returns the process (exited or killed).
    def cut_during(self, layer, node, args, victims=()):
        command = node.start(*args)
        time.sleep(self.rng.uniform(0, self.cut_window))
        torn = self.rng.random() < 0.5
        layer.cut(torn)
        self.midway[self.scenario] = self.midway.get(self.scenario, 0) + (command.poll() is None)
        for process in (command, *victims):
            if process.poll() is None:
                process.kill()
            process.wait()
        layer.stop()
        layer.age()
        layer.start()
        return command, torn

    def measure_window(self, layer, node, args):
        started = time.time()
        node.run(*args)
        return time.time() - started


def scenario_pull(h, layer, incremental, rounds, tally):
    server = Server(h.source)
    try:
        sink = Node(h.binary, os.path.join(layer.mount, "sink"))
        source_id = h.source.node_id()

        def fresh_sink():
            layer.wipe()
            sink.run("init")
            sink_id = sink.node_id()
            h.source.run("peer", "rm", "sink", check=False)
            h.source.run("peer", "add", "sink", sink_id, "--allow", "read")
            sink.run("peer", "add", "source", source_id, "--address", server.address, "--allow", "read")
            layer.restart()  # a clean shutdown: the new store is on disk

        fresh_sink()
        if incremental:
            sink.run("pull", "source")
        h.cut_window = 1.5 * h.measure_window(layer, sink, ["pull", "source"]) + 0.05
        acknowledged = sink.items()
        name = "pull-incremental" if incremental else "pull-full"
        for round in range(rounds):
            if incremental:
                h.mutate_source()
            else:
                fresh_sink()
                acknowledged = sink.items()
            expected = h.source.items()
            pull, torn = h.cut_during(layer, sink, ["pull", "source"])
            context = f"{name} round {round} ({'torn' if torn else 'strict'} cut, pull exited {pull.returncode})"
            after = sink.items()
            sink.verify(context)
            if pull.returncode == 0:
                same(expected, after, context + ", acknowledged pull")
            not_older(acknowledged, after, context)
            sink.run("pull", "source")
            sink.verify(context + ", after the next pull")
            acknowledged = sink.items()
            same(expected, acknowledged, context + ", the next pull")
            tally[name] += 1
    finally:
        server.kill()


def scenario_push(h, layer, rounds, tally):
    client = Node(h.binary, os.path.join(h.root, "client"))
    client.run("init")
    h.import_batch(client, 20)
    served = Node(h.binary, os.path.join(layer.mount, "served"))
    layer.wipe()
    served.run("init")
    served.run("peer", "add", "client", client.node_id(), "--allow", "read-write")
    layer.restart()
    server = Server(served)
    client.run("peer", "add", "backup", served.node_id(), "--address", server.address, "--allow", "read-write")
    h.cut_window = 1.5 * h.measure_window(layer, client, ["push", "backup"]) + 0.1
    try:
        for round in range(rounds):
            h.import_batch(client, 15)
            keys = [k for k, v in client.items().items() if not v["deleted"]]
            for key in h.rng.sample(keys, 2):
                h.set_image(client, key)
            client.run("edit", h.rng.choice(keys), "--value", str(h.rng.randrange(1000)))
            client.run("rm", h.rng.choice(keys))
            expected = client.items()
            push, torn = h.cut_during(layer, client, ["push", "backup"], victims=(server.process,))
            context = f"push round {round} ({'torn' if torn else 'strict'} cut, push exited {push.returncode})"
            served.verify(context)
            after = served.items()
            if push.returncode == 0:
                same(expected, after, context + ", acknowledged push")
            server = Server(served)
            client.run("peer", "set", "backup", "--address", server.address)
            client.run("push", "backup")
            served.verify(context + ", after the next push")
            same(expected, served.items(), context + ", the next push")
            tally["push"] += 1
    finally:
        server.kill()


def scenario_local(h, layer, rounds, tally):
    store = Node(h.binary, os.path.join(layer.mount, "local"))
    layer.wipe()
    store.run("init")
    server = Server(h.source)
    store.run("peer", "add", "source", h.source.node_id(), "--address", server.address, "--allow", "read")
    h.source.run("peer", "rm", "local", check=False)
    h.source.run("peer", "add", "local", store.node_id(), "--allow", "read")
    homepwner = os.path.join(h.root, "homepwner")
    h.source.run("export-homepwner", homepwner)
    layer.restart()
    store.run("pull", "source")

    def live_keys():
        return [k for k, v in store.items().items() if not v["deleted"]]

    def command():
        kind = h.rng.choice(["add", "image", "edit", "rm", "import", "homepwner", "restore", "gc", "repair", "pull"])
        keys = live_keys()
        if kind == "add":
            path = h.file(f"add-{h.rng.randrange(10**9)}.jpg", jpeg(h.rng, h.rng.randrange(1000, 200_000)))
            return kind, ["add", "--name", "added", "--value", "7", "--image", path]
        if kind == "image" and keys:
            path = h.file(f"set-{h.rng.randrange(10**9)}.jpg", jpeg(h.rng, h.rng.randrange(1000, 200_000)))
            return kind, ["image", "set", h.rng.choice(keys), path]
        if kind == "edit" and keys:
            return kind, ["edit", h.rng.choice(keys), "--name", f"renamed {h.rng.randrange(10**6)}"]
        if kind == "rm" and len(keys) > 10:
            return kind, ["rm", *h.rng.sample(keys, 3)]
        if kind == "import":
            return kind, ["import", h.export_file(50)]
        if kind == "homepwner":
            return kind, ["import-homepwner", homepwner]
        if kind == "restore":
            trash = json.loads(store.run("trash", "list", "--json").stdout or "[]")
            if trash:
                return kind, ["trash", "restore", h.rng.choice(trash)["key"]]
        if kind == "gc":
            return kind, ["gc", "--older-than", "0", "--force"]
        if kind == "repair":
            images = os.path.join(store.store, "images")
            source = h.source.items()
            names = [k for k, v in store.items().items()  # photos the source can still give back
                     if v.get("image") and k in source and source[k].get("image") == v["image"]]
            if names:  # damage one photo in place, as bit rot would, then heal it from the source
                with open(os.path.join(images, h.rng.choice(names)), "r+b") as f:
                    f.seek(10)
                    f.write(b"rot")
            return kind, ["verify", "--repair", "--from", "source"]
        if kind == "pull":
            h.mutate_source()
            return kind, ["pull", "source"]
        return command()

    h.cut_window = 0.25
    try:
        for round in range(rounds):
            acknowledged = store.items()
            for _ in range(h.rng.randrange(0, 3)):  # acknowledged commands before the cut one
                kind, args = command()
                store.run(*args, check=kind != "repair")
                acknowledged = store.items()
            kind, args = command()
            process, torn = h.cut_during(layer, store, args)
            context = f"local round {round} ({'torn' if torn else 'strict'} cut during {kind}, exited {process.returncode})"
            if kind == "repair":  # the damage it was healing is ours, not the cut's: heal it first
                store.run(*args)
            store.verify(context)
            after = store.items()
            not_older(acknowledged, after, context, tombstones_may_go=kind == "gc")
            if kind not in ("gc", "repair", "homepwner", "restore", "pull"):
                store.run(*args, check=kind in ("import",))
            store.verify(context + ", after running it again")
            tally["local"] += 1
    finally:
        server.kill()


def self_test(root, rng):
    """The layer loses what a power cut loses: unsynced bytes, and names whose folder was not synced."""
    layer = Layer(root, "self-test", rng)
    layer.start()
    m = layer.mount

    def write(name, data, sync):
        fd = os.open(os.path.join(m, name), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        os.write(fd, data)
        if sync:
            os.fsync(fd)
        os.close(fd)

    def sync_dir():
        fd = os.open(m, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)

    write("synced", b"kept", sync=True)
    write("unsynced", b"lost", sync=False)
    write("renamed-tmp", b"moved", sync=True)
    sync_dir()
    with open(os.path.join(m, "synced"), "ab") as f:
        f.write(b" and lost")
    os.rename(os.path.join(m, "renamed-tmp"), os.path.join(m, "renamed"))  # the folder is not synced after it
    write("new-synced-data", b"data", sync=True)  # its name was never synced
    layer.cut(torn=False)
    layer.stop()
    found = {name: open(os.path.join(layer.backing, name), "rb").read() for name in os.listdir(layer.backing)}
    expected = {"synced": b"kept", "unsynced": b"", "renamed-tmp": b"moved"}
    if found != expected:
        raise Failure(f"layer self-test: after the cut the folder holds {found}, not {expected}")
    print("powercut: self-test: unsynced bytes, an unsynced rename and an unsynced new name were lost", flush=True)


def main():
    args = sys.argv[1:]
    binary = os.path.abspath(args.pop(0))
    cuts, seed, scenarios, keep = 8, random.randrange(10**6), list(SCENARIOS), False
    while args:
        flag = args.pop(0)
        if flag == "--cuts":
            cuts = int(args.pop(0))
        elif flag == "--seed":
            seed = int(args.pop(0))
        elif flag == "--scenarios":
            scenarios = args.pop(0).split(",")
        elif flag == "--keep":
            keep = True
        else:
            sys.exit(f"unknown option {flag}")
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        sys.exit("powercut: needs root and /dev/fuse")
    rng = random.Random(seed)
    root = tempfile.mkdtemp(prefix="hp-sync-powercut-")
    tally = {name: 0 for name in scenarios}
    failures = []
    started = time.time()
    print(f"powercut: seed {seed}, {cuts} cuts per scenario, in {root}", flush=True)
    self_test(root, rng)
    h = Harness(binary, root, rng, print)
    for name in scenarios:
        h.scenario = name
        layer = Layer(root, name, rng)
        layer.start()
        try:
            if name == "pull-full":
                scenario_pull(h, layer, False, cuts, tally)
            elif name == "pull-incremental":
                scenario_pull(h, layer, True, cuts, tally)
            elif name == "push":
                scenario_push(h, layer, cuts, tally)
            elif name == "local":
                scenario_local(h, layer, cuts, tally)
        except Failure as failure:
            failures.append(f"{name}: {failure}")
            print(f"FAIL {name}: {failure}", flush=True)
        finally:
            try:
                layer.stop()
            except Failure:
                pass
    summary = ", ".join(f"{name} {count} ({h.midway.get(name, 0)} mid-command)" for name, count in tally.items())
    print(f"powercut: {sum(tally.values())} cuts: {summary}; {len(failures)} failures, "
          f"{time.time() - started:.0f} s, seed {seed}", flush=True)
    if not keep and not failures:
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
