#!/usr/bin/env python3
"""Runs hp-sync under Valgrind's memcheck and fails on any invalid read, write or free: `status`
and `verify` on stores with thousands of names in `images/`, a real TLS session (`serve`, then
a `pull` and a `push` of a few items with photos), and `hp-sync web` serving its pages.

Usage: memcheck.py HP_SYNC_BINARY

Why: every command that opens a store lists `images/` with readdir(3). Reading a `dirent`
whole (280 bytes on Linux) read past the end of readdir's buffer whenever the kernel packed an
entry near its end; a pull died of it once (SIGSEGV). Unit tests cannot see an over-read that
happens not to fault; memcheck sees every one. Each store holds a few thousand names in
`images/` so that readdir fills its buffer several times.

Only invalid accesses count: Swift's enums with spare-bit payloads make memcheck report
"uninitialised value" in correct code (GRDB's SQL generation, for one), so those are ignored.
"""
import http.cookiejar
import os
import re
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    if not shutil.which("valgrind"):
        sys.exit("memcheck: valgrind is not installed (Scripts/test installs it on Debian)")
    work = tempfile.mkdtemp(prefix="hp-sync-memcheck.")
    try:
        # Valgrind cannot read the DWARF 5 the toolchain writes: check a copy without it.
        plain = os.path.join(work, "hp-sync")
        subprocess.run(["objcopy", "--strip-debug", binary, plain], check=True)
        failures = []
        # Where readdir's buffer ends relative to an entry depends on the names' lengths:
        # item keys (36 characters, as `images/` holds) and SHA-256 hex names (64, as the
        # trash folder's kept photos) both met the over-read; 40 or 52 did not.
        for label, name_of in (("item keys", lambda i: str(uuid.UUID(int=i)).upper()), ("digests", lambda i: f"{i:064x}")):
            store = os.path.join(work, label.replace(" ", "-"))
            subprocess.run([plain, "init", "--store", store], check=True, capture_output=True)
            for index in range(3000):
                open(os.path.join(store, "images", name_of(index)), "wb").close()
            for command in (["status"], ["verify"]):
                log = os.path.join(work, f"{command[0]}.valgrind")
                subprocess.run(
                    ["valgrind", "-q", f"--log-file={log}", plain, *command, "--store", store],
                    capture_output=True, timeout=600)
                invalid = invalid_accesses(log)
                print(f"memcheck: hp-sync {' '.join(command)}, {label}: {len(invalid)} invalid accesses")
                failures += [f"hp-sync {' '.join(command)} ({label}):\n{block}" for block in invalid]
        failures += sync_under_memcheck(plain, work)
        failures += web_under_memcheck(plain, work, os.path.join(work, "server"))
        if failures:
            sys.exit("memcheck: invalid memory accesses\n" + "\n".join(failures[:5]))
        print("memcheck: no invalid read, write or free")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def invalid_accesses(log):
    """The invalid read, write and free reports of a memcheck log, each with its stack."""
    report = open(log).read() if os.path.exists(log) else ""
    return re.findall(r"^==\d+== (Invalid (?:read|write|free)[^\n]*\n(?:==\d+==\s+(?:at|by) [^\n]*\n)*)", report, re.M)


def sync_under_memcheck(plain, work):
    """A real TLS session under memcheck on both sides: `serve` on loopback and a `pull` of a
    few items with photos (the socket, TLS, framing and image paths), then a `push` back."""
    def run(*args, **kwargs):
        return subprocess.run([plain, *args], check=True, capture_output=True, text=True, **kwargs).stdout.strip()

    server, client = os.path.join(work, "server"), os.path.join(work, "client")
    for store in (server, client):
        run("init", "--store", store)
    for index in range(12):
        photo = os.path.join(work, f"photo-{index}.jpg")
        with open(photo, "wb") as out:
            out.write(bytes([0xFF, 0xD8, 0xFF, 0xE0]) + os.urandom(20_000 + 997 * index) + bytes([0xFF, 0xD9]))
        run("add", "--name", f"item {index}", "--value", str(index), "--image", photo, "--store", server)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run("peer", "add", "client", run("id", "--store", client), "--allow", "read-write", "--store", server)
    run("peer", "add", "server", run("id", "--store", server), "--address", f"127.0.0.1:{port}",
        "--store", client)
    serve_log, client_log = os.path.join(work, "serve.valgrind"), os.path.join(work, "client.valgrind")
    serve = subprocess.Popen(
        ["valgrind", "-q", f"--log-file={serve_log}", plain, "serve", "--store", server,
         "--listen", f"127.0.0.1:{port}", "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    failures = []
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or serve.poll() is not None:
                    return [f"hp-sync serve under valgrind did not listen on {port}"]
                time.sleep(0.5)
        for verb in ("pull", "push"):
            if verb == "push":
                key = re.search(r'"key"\s*:\s*"([^"]+)"', run("list", "--json", "--store", client)).group(1)
                run("edit", key, "--name", "renamed", "--store", client)
            result = subprocess.run(
                ["valgrind", "-q", f"--log-file={client_log}", plain, verb, "server", "--store", client],
                capture_output=True, text=True, timeout=900)
            if result.returncode != 0:
                failures.append(f"hp-sync {verb} under valgrind exited {result.returncode}: {result.stderr}")
            elif verb == "pull":
                pulled = run("list", "--json", "--store", client).count('"key"')
                photos = len([n for n in os.listdir(os.path.join(client, "images")) if not n.startswith(".")])
                if (pulled, photos) != (12, 12):
                    failures.append(f"the pull under valgrind brought {pulled} items and {photos} photos, not 12 and 12")
            invalid = invalid_accesses(client_log)
            print(f"memcheck: hp-sync {verb} (TLS session, 12 photos): {len(invalid)} invalid accesses")
            failures += [f"hp-sync {verb}:\n{block}" for block in invalid]
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=300)
    invalid = invalid_accesses(serve_log)
    print(f"memcheck: hp-sync serve (both sessions): {len(invalid)} invalid accesses")
    return failures + [f"hp-sync serve:\n{block}" for block in invalid]


def web_under_memcheck(plain, work, store):
    """`hp-sync web` under memcheck, serving the pages a browser asks for on a store with
    items and photos: the inventory, an item, its photo, the sync page, the report, the form."""
    log = os.path.join(work, "web.valgrind")
    web = subprocess.Popen(
        ["valgrind", "-q", f"--log-file={log}", plain, "web", "--store", store, "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    failures = []
    paths = []
    try:
        # Lines are read on a thread of their own: a buffered pipe and select() disagree.
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in web.stdout], daemon=True).start()
        url = None
        deadline = time.monotonic() + 120
        while url is None and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if "?token=" in line:
                url = line.strip()
        if url is None:
            return ["hp-sync web under valgrind printed no URL"]
        base = url.split("/?token=")[0]
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        inventory = opener.open(url, timeout=120).read().decode()
        key = re.search(r'/items/([0-9A-F-]{36})', inventory).group(1)
        item = opener.open(f"{base}/items/{key}", timeout=120).read().decode()
        paths += [f"/items/{key}", "/sync", "/report", "/new", "/?sort=value"]
        photo = re.search(r'/image/([0-9a-f]{64})', item)
        if photo is None:
            failures.append("the item page under valgrind shows no photo")
        else:
            paths.append(f"/image/{photo.group(1)}")
        for path in paths:
            with opener.open(base + path, timeout=120) as answer:
                if answer.status != 200 or not answer.read():
                    failures.append(f"hp-sync web answered {path} with {answer.status} under valgrind")
    except (OSError, AttributeError) as error:
        failures.append(f"hp-sync web under valgrind: {error}")
    finally:
        web.send_signal(signal.SIGTERM)
        web.wait(timeout=300)
    invalid = invalid_accesses(log)
    print(f"memcheck: hp-sync web ({2 + len(paths)} requests, a photo among them): {len(invalid)} invalid accesses")
    return failures + [f"hp-sync web:\n{block}" for block in invalid]


if __name__ == "__main__":
    main()
