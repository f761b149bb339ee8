#!/usr/bin/env python3
"""Writes a valid JPEG of about SIZE bytes: a 1x1 baseline JPEG padded with COM segments.

Usage: make-sample-jpeg.py OUT SIZE SEED. The padding is random (seeded), so every image has its
own digest, and it sits in comment segments, so any JPEG reader still opens the file.
"""
import base64
import random
import struct
import sys

TINY = base64.b64decode(
    "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////"
    "////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQAB"
    "PxA="
)


def main() -> None:
    out, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    segments = []
    remaining = max(0, size - len(TINY))
    while remaining > 4:
        body = min(65533, remaining - 4)
        segments.append(b"\xff\xfe" + struct.pack(">H", body + 2) + rng.randbytes(body))
        remaining -= body + 4
    with open(out, "wb") as f:
        f.write(TINY[:2] + b"".join(segments) + TINY[2:])


if __name__ == "__main__":
    main()
