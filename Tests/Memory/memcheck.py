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
            for command in ("status", "verify"):
                log = os.path.join(work, f"{command}.valgrind")
                under_memcheck(log, plain, command, "--store", store)
                failures += checked(log, f"{command}, {label}")
        failures += sync_under_memcheck(plain, work)
        failures += web_under_memcheck(plain, work, os.path.join(work, "server"))
        if failures:
            sys.exit("memcheck: invalid memory accesses\n" + "\n".join(failures[:5]))
        print("memcheck: no invalid read, write or free")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def under_memcheck(log, *command):
    """Runs `command` to its end under memcheck, its report in `log`; returns the result."""
    return subprocess.run(["valgrind", "-q", f"--log-file={log}", *command], capture_output=True, text=True,
                          timeout=900)


def started(log, pattern, *command):
    """Starts the server `command` under memcheck and waits (up to 120 s) for a line of its
    output that matches `pattern`: (the process, the match, None if none came). Its output is
    read on a thread of its own to the end (a buffered pipe and select() disagree, and a pipe
    nobody reads would stall it)."""
    process = subprocess.Popen(["valgrind", "-q", f"--log-file={log}", *command],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            match = re.search(pattern, lines.get(timeout=1))
        except queue.Empty:
            continue
        if match:
            return process, match
    return process, None


def stopped(process, log, label):
    """Stops a server `started` gave (SIGTERM, as a user would) and checks its report."""
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=300)
    return checked(log, label)


def checked(log, label):
    """The invalid read, write and free reports of the memcheck log `log`, each with its stack,
    as failures; prints how many there are."""
    report = open(log).read() if os.path.exists(log) else ""
    invalid = re.findall(r"^==\d+== (Invalid (?:read|write|free)[^\n]*\n(?:==\d+==\s+(?:at|by) [^\n]*\n)*)", report, re.M)
    print(f"memcheck: hp-sync {label}: {len(invalid)} invalid accesses")
    return [f"hp-sync {label}:\n{block}" for block in invalid]


def sync_under_memcheck(plain, work):
    """A real TLS session under memcheck on both sides: `serve` on loopback and a `pull` of a
    few items with photos (the socket, TLS, framing and image paths), then a `push` back."""
    def run(*args):
        return subprocess.run([plain, *args], check=True, capture_output=True, text=True).stdout.strip()

    server, client = os.path.join(work, "server"), os.path.join(work, "client")
    for store in (server, client):
        run("init", "--store", store)
    for index in range(12):
        photo = os.path.join(work, f"photo-{index}.jpg")
        with open(photo, "wb") as out:
            out.write(bytes([0xFF, 0xD8, 0xFF, 0xE0]) + os.urandom(20_000 + 997 * index) + bytes([0xFF, 0xD9]))
        run("add", "--name", f"item {index}", "--value", str(index), "--image", photo, "--store", server)
    run("peer", "add", "client", run("id", "--store", client), "--allow", "read-write", "--store", server)
    serve_log, client_log = os.path.join(work, "serve.valgrind"), os.path.join(work, "client.valgrind")
    # Any free port: serve logs the one it took ("listen=127.0.0.1:PORT").
    serve, listening = started(serve_log, r"listen=(127\.0\.0\.1:\d+)", plain, "serve", "--store", server,
                               "--listen", "127.0.0.1:0")
    failures = []
    try:
        if listening is None:
            raise RuntimeError("hp-sync serve under valgrind did not say where it listens")
        run("peer", "add", "server", run("id", "--store", server), "--address", listening.group(1),
            "--store", client)
        for verb in ("pull", "push"):
            if verb == "push":
                key = re.search(r'"key"\s*:\s*"([^"]+)"', run("list", "--json", "--store", client)).group(1)
                run("edit", key, "--name", "renamed", "--store", client)
            result = under_memcheck(client_log, plain, verb, "server", "--store", client)
            if result.returncode != 0:
                failures.append(f"hp-sync {verb} under valgrind exited {result.returncode}: {result.stderr}")
            elif verb == "pull":
                pulled = run("list", "--json", "--store", client).count('"key"')
                photos = len([n for n in os.listdir(os.path.join(client, "images")) if not n.startswith(".")])
                if (pulled, photos) != (12, 12):
                    failures.append(f"the pull under valgrind brought {pulled} items and {photos} photos, not 12 and 12")
            failures += checked(client_log, f"{verb} (TLS session, 12 photos)")
    except RuntimeError as error:
        failures.append(str(error))
    finally:
        failures += stopped(serve, serve_log, "serve (both sessions)")
    return failures


def web_under_memcheck(plain, work, store):
    """`hp-sync web` under memcheck, serving the pages a browser asks for on a store with
    items and photos: the inventory, an item, its photo, the sync page, the report, the form."""
    log = os.path.join(work, "web.valgrind")
    web, printed = started(log, r"http://\S+\?token=\S+", plain, "web", "--store", store, "--listen", "127.0.0.1:0")
    failures = []
    paths = []
    try:
        if printed is None:
            raise OSError("printed no URL")
        url = printed.group(0)
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
        failures += stopped(web, log, f"web ({2 + len(paths)} requests, a photo among them)")
    return failures


if __name__ == "__main__":
    main()
