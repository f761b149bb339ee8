#!/usr/bin/env python3
"""Runs hp-sync commands that open a store under Valgrind's memcheck and fails on any invalid
read, write or free in them.

Usage: memcheck.py HP_SYNC_BINARY

Why: every command that opens a store lists `images/` with readdir(3). Reading a `dirent`
whole (280 bytes on Linux) read past the end of readdir's buffer whenever the kernel packed an
entry near its end; a pull died of it once (SIGSEGV). Unit tests cannot see an over-read that
happens not to fault; memcheck sees every one. Each store holds a few thousand names in
`images/` so that readdir fills its buffer several times.

Only invalid accesses count: Swift's enums with spare-bit payloads make memcheck report
"uninitialised value" in correct code (GRDB's SQL generation, for one), so those are ignored.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
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
                report = open(log).read()
                invalid = re.findall(
                    r"^==\d+== (Invalid (?:read|write|free)[^\n]*\n(?:==\d+==\s+(?:at|by) [^\n]*\n)*)", report, re.M)
                print(f"memcheck: hp-sync {' '.join(command)}, {label}: {len(invalid)} invalid accesses")
                failures += [f"hp-sync {' '.join(command)} ({label}):\n{block}" for block in invalid]
        if failures:
            sys.exit("memcheck: invalid memory accesses\n" + "\n".join(failures[:5]))
        print("memcheck: no invalid read, write or free")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
