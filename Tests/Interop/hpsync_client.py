#!/usr/bin/env python3
"""An independent hp-sync protocol v1 client (plus version 3's images by digest), written from
Protocol.md and hpsync.proto alone.

Standard library only. Commands:

  node-id CERT.pem
      Print the node ID text form of a PEM certificate.

  pull --host H --port P --cert C --key K --server-id ID --out DIR [--store-id HEX]
      Pull the server's changes into DIR:
        DIR/items.json       {"KEY": {key, name, serial, value, date_ms, image_sha256,
                                      image_size, stamp, origin, deleted}, ...}
        DIR/checkpoint.json  {"store_id": hex, "through_seq": n}
        DIR/images/KEY       image bytes
      A second pull into the same DIR resumes from the checkpoint and merges by (stamp, origin).

  heal --host H --port P --cert C --key K --server-id ID --out DIR KEY...
      Version 3 (Protocol.md §5.7): fetch the images of KEYs (items pulled into DIR) by digest,
      verify them, write DIR/images/KEY, end with EndSession; prints {healed, missing}.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import socket
import ssl
import struct
import sys
import time

# ---------------------------------------------------------------------------------------------
# Node IDs (Protocol.md §2)

B32_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def luhn32(chunk: str) -> str:
    """Luhn mod 32 check character over `chunk` (alphabet A-Z2-7, factors 1, 2, ... from the left).

    Protocol.md §2 says only "factors alternating 1, 2 from the left, check = (32 - sum mod 32)
    mod 32". Like Syncthing (which §2 names as the model), each product is reduced to
    `product // 32 + product % 32` before summing; this was confirmed against `hp-sync id`.
    """
    factor = 1
    total = 0
    for ch in chunk:
        addend = factor * B32_ALPHABET.index(ch)
        factor = 2 if factor == 1 else 1
        addend = addend // 32 + addend % 32
        total += addend
    return B32_ALPHABET[(32 - total % 32) % 32]


def luhn32_plain(chunk: str) -> str:
    """The literal reading of §2: no reduction of the products (kept to show the ambiguity)."""
    total = 0
    for i, ch in enumerate(chunk):
        total += (1 if i % 2 == 0 else 2) * B32_ALPHABET.index(ch)
    return B32_ALPHABET[(32 - total % 32) % 32]


def node_id_text(node_id: bytes, check=luhn32) -> str:
    assert len(node_id) == 32
    b32 = base64.b32encode(node_id).decode("ascii").rstrip("=")
    assert len(b32) == 52
    with_checks = ""
    for i in range(4):
        chunk = b32[i * 13:(i + 1) * 13]
        with_checks += chunk + check(chunk)
    return "-".join(with_checks[i:i + 7] for i in range(0, 56, 7))


def parse_node_id(text: str) -> bytes:
    s = text.upper().replace("-", "").replace(" ", "")
    s = s.translate(str.maketrans("018", "OIB"))
    if len(s) != 56:
        raise ValueError(f"node ID must have 56 characters without separators, got {len(s)}")
    b32 = ""
    for i in range(4):
        chunk, check = s[i * 14:i * 14 + 13], s[i * 14 + 13]
        if luhn32(chunk) != check:
            raise ValueError(f"node ID check character {i + 1} is wrong")
        b32 += chunk
    return base64.b32decode(b32 + "====")


def pem_to_der(path: str) -> bytes:
    with open(path, "r", encoding="ascii") as f:
        pem = f.read()
    m = re.search(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", pem, re.S)
    if not m:
        raise ValueError(f"{path}: no PEM certificate")
    return base64.b64decode("".join(m.group(1).split()))


def node_id_of_der(der: bytes) -> bytes:
    return hashlib.sha256(der).digest()


# ---------------------------------------------------------------------------------------------
# Minimal protobuf (proto3) encoding

def enc_varint(n: int) -> bytes:
    if n < 0:
        n &= (1 << 64) - 1  # int64 negative: two's complement, 10 bytes
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_varint(num: int, value: int, always=False) -> bytes:
    if value == 0 and not always:
        return b""  # proto3 default values are not encoded
    return enc_varint(num << 3 | 0) + enc_varint(value)


def f_bytes(num: int, value: bytes, always=False) -> bytes:
    if not value and not always:
        return b""
    return enc_varint(num << 3 | 2) + enc_varint(len(value)) + value


def f_str(num: int, value: str, always=False) -> bytes:
    return f_bytes(num, value.encode("utf-8"), always)


def f_msg(num: int, value: bytes) -> bytes:
    return f_bytes(num, value, always=True)  # a set message field is encoded even when empty


class ProtoError(Exception):
    pass


def dec_varint(buf: bytes, pos: int):
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise ProtoError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift >= 70:
            raise ProtoError("varint too long")
    return result & ((1 << 64) - 1), pos


def decode(buf: bytes):
    """Return {field number: [values]}: ints for varints, bytes for length-delimited; other wire
    types are skipped (unknown fields MUST be ignored)."""
    fields = {}
    pos = 0
    while pos < len(buf):
        tag, pos = dec_varint(buf, pos)
        num, wt = tag >> 3, tag & 7
        if num == 0:
            raise ProtoError("field number 0")
        if wt == 0:
            v, pos = dec_varint(buf, pos)
        elif wt == 1:
            v = buf[pos:pos + 8]
            pos += 8
        elif wt == 2:
            n, pos = dec_varint(buf, pos)
            if pos + n > len(buf):
                raise ProtoError("truncated length-delimited field")
            v = buf[pos:pos + n]
            pos += n
        elif wt == 5:
            v = buf[pos:pos + 4]
            pos += 4
        else:
            raise ProtoError(f"unsupported wire type {wt}")
        if pos > len(buf):
            raise ProtoError("truncated field")
        fields.setdefault(num, []).append(v)
    return fields


def last(fields, num, default):
    vs = fields.get(num)
    return vs[-1] if vs else default  # proto3: the last value of a scalar wins


def get_u(fields, num):
    return last(fields, num, 0)


def get_i64(fields, num):
    v = last(fields, num, 0)
    return v - (1 << 64) if v >= 1 << 63 else v


def get_b(fields, num):
    return bytes(last(fields, num, b""))


def get_s(fields, num):
    return get_b(fields, num).decode("utf-8")  # raises on invalid UTF-8


def get_bool(fields, num):
    return bool(last(fields, num, 0))


# Envelope body field numbers
HELLO, ERROR, PULL_REQUEST, MANIFEST_PAGE, FETCH_RECORDS, RECORDS, FETCH_IMAGES, IMAGE_HEADER, \
    PAGE_DONE, DONE = range(1, 11)
FETCH_IMAGES_BY_DIGEST, END_SESSION = 13, 14  # version 3
BODY_NAMES = {1: "Hello", 2: "Error", 3: "PullRequest", 4: "ManifestPage", 5: "FetchRecords",
              6: "Records", 7: "FetchImages", 8: "ImageHeader", 9: "PageDone", 10: "Done"}
ERROR_NAMES = ["ERROR_UNSPECIFIED", "ERROR_INCOMPATIBLE_VERSION", "ERROR_NOT_AUTHORIZED",
               "ERROR_READ_ONLY", "ERROR_BUSY", "ERROR_PROTOCOL", "ERROR_LIMIT", "ERROR_INTERNAL",
               "ERROR_SHUTTING_DOWN", "ERROR_NODE_ID_MISMATCH", "ERROR_BAD_DATA"]
INTENT_PULL = 1


def envelope(body_num: int, body: bytes) -> bytes:
    return f_msg(body_num, body)


def open_envelope(payload: bytes):
    fields = decode(payload)
    bodies = [(n, vs) for n, vs in fields.items() if n in BODY_NAMES]
    if len(bodies) != 1 or len(bodies[0][1]) != 1:
        # A oneof set twice is legal protobuf (last wins) but §4 says "exactly one body set".
        raise ProtoError(f"envelope must have exactly one known body, has fields {sorted(fields)}")
    num, vs = bodies[0]
    return num, decode(vs[0])


def counts_msg(c: dict) -> bytes:
    order = ["inserted", "updated", "deleted", "tombstones", "skipped", "refused", "images",
             "image_bytes", "entries", "records"]
    return b"".join(f_varint(i + 1, c.get(k, 0)) for i, k in enumerate(order))


# ---------------------------------------------------------------------------------------------
# Framing (Protocol.md §3)

FRAME_MESSAGE, FRAME_IMAGE_CHUNK = 0x01, 0x02
LIMITS = {FRAME_MESSAGE: 4 * 1024 * 1024, FRAME_IMAGE_CHUNK: 1024 * 1024}


class PeerError(Exception):
    """The peer sent Error."""


class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.bytes_in = 0

    def _read_exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ProtoError("connection closed mid-conversation (truncation)")
            buf += chunk
        self.bytes_in += n
        return bytes(buf)

    def read_frame(self):
        header = self._read_exact(5)
        ftype, length = header[0], struct.unpack(">I", header[1:])[0]
        if ftype not in LIMITS:
            raise ProtoError(f"unknown frame type {ftype:#x}")
        if length == 0 or length > LIMITS[ftype]:
            raise ProtoError(f"bad frame length {length} for type {ftype:#x}")
        return ftype, self._read_exact(length)

    def send_message(self, body_num: int, body: bytes):
        payload = envelope(body_num, body)
        assert 1 <= len(payload) <= LIMITS[FRAME_MESSAGE]
        self.sock.sendall(struct.pack(">BI", FRAME_MESSAGE, len(payload)) + payload)

    def read_message(self, *expected):
        ftype, payload = self.read_frame()
        if ftype != FRAME_MESSAGE:
            raise ProtoError("IMAGE_CHUNK frame where a message was expected")
        num, body = open_envelope(payload)
        if num == ERROR:
            code = get_u(body, 1)
            name = ERROR_NAMES[code] if code < len(ERROR_NAMES) else f"error {code}"
            raise PeerError(f"{name}: {get_s(body, 2)[:1024]}")
        if expected and num not in expected:
            raise ProtoError(f"expected {'/'.join(BODY_NAMES[e] for e in expected)}, "
                             f"got {BODY_NAMES[num]}")
        return num, body


# ---------------------------------------------------------------------------------------------
# Validation (Protocol.md §1, §4)

KEY_RE = re.compile(r"^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$")
MAX_IMAGE = 64 * 1024 * 1024
SKEW_MS = 10 * 60 * 1000


def check_key(k: str) -> str:
    if not KEY_RE.match(k):
        raise ProtoError(f"bad key {k!r}")
    return k


def check_len(what, b: bytes, n: int):
    if len(b) != n:
        raise ProtoError(f"{what} must be {n} bytes, is {len(b)}")
    return b


def wins(new, old) -> bool:
    """Merge rule §1: greater (stamp, origin) wins; origin compared bytewise unsigned."""
    if old is None:
        return True
    return (new[0], new[1]) > (old[0], old[1])


# ---------------------------------------------------------------------------------------------
# Pull

def connect(args):
    """TLS 1.3 with this client's certificate, the server pinned by node ID (§2)."""
    pinned = parse_node_id(args.server_id)
    my_node_id = node_id_of_der(pem_to_der(args.cert))

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.maximum_version = ssl.TLSVersion.TLSv1_3
    ctx.check_hostname = False  # §2: no host-name check
    ctx.verify_mode = ssl.CERT_NONE  # §2: no chain validation; trust is by pinning below
    ctx.load_cert_chain(args.cert, args.key)

    raw = socket.create_connection((args.host, args.port), timeout=args.timeout)
    sock = ctx.wrap_socket(raw, server_hostname=None)
    if sock.version() != "TLSv1.3":
        raise ProtoError(f"negotiated {sock.version()}, need TLSv1.3")
    server_der = sock.getpeercert(binary_form=True)
    if not server_der:
        raise ProtoError("server presented no certificate")
    server_node_id = node_id_of_der(server_der)
    if server_node_id != pinned:
        sock.close()
        raise SystemExit(f"server node ID is {node_id_text(server_node_id)}, "
                         f"expected {node_id_text(pinned)}: not trusted, aborting")
    return Conn(sock), pinned, my_node_id


def read_image(conn, key: str, sha: str, size: int):
    """One ImageHeader and its IMAGE_CHUNK frames (§4.7): the verified bytes, None if missing."""
    _, hdr = conn.read_message(IMAGE_HEADER)
    if get_s(hdr, 1) != key or get_b(hdr, 2).hex() != sha:
        raise ProtoError("ImageHeader for another key or digest")
    if get_bool(hdr, 4):
        return None
    hsize = get_u(hdr, 3)
    if hsize == 0:
        raise ProtoError("ImageHeader size 0 without missing")
    if hsize > MAX_IMAGE:
        raise ProtoError("image above limit (ERROR_LIMIT)")
    data = bytearray()
    while len(data) < hsize:
        ftype, chunk = conn.read_frame()
        if ftype != FRAME_IMAGE_CHUNK:
            raise ProtoError("message frame before the image bytes were complete")
        if len(data) + len(chunk) > hsize:
            raise ProtoError("IMAGE_CHUNK exceeds announced size")
        data += chunk
    if hashlib.sha256(data).hexdigest() != sha or len(data) != size:
        raise ProtoError(f"{key}: image digest/size mismatch (ERROR_BAD_DATA)")
    return bytes(data)


def heal(args):
    """Version 3 (§5.7): images by digest outside the manifest, then EndSession and Done."""
    items = json.load(open(os.path.join(args.out, "items.json")))
    wanted = []
    for key in args.keys:
        it = items[check_key(key)]
        wanted.append((key, it["image_sha256"], it["image_size"]))
    conn, pinned, my_node_id = connect(args)
    conn.send_message(HELLO,
                      f_varint(1, 3) + f_varint(2, 3) + f_bytes(3, my_node_id)
                      + f_bytes(4, os.urandom(16)) + f_varint(5, INTENT_PULL)
                      + f_str(7, "hpsync_client.py 0.1"))
    _, h = conn.read_message(HELLO)
    if get_b(h, 3) != pinned or get_u(h, 6) != 3 or get_u(h, 5) != INTENT_PULL:
        raise ProtoError("server Hello: wrong node ID, version (want 3) or intent")
    request = b"".join(f_msg(1, f_str(1, key) + f_bytes(2, bytes.fromhex(sha))) for key, sha, _ in wanted)
    conn.send_message(FETCH_IMAGES_BY_DIGEST, request)
    healed, missing = [], []
    for key, sha, size in wanted:
        data = read_image(conn, key, sha, size)
        if data is None:
            missing.append(key)
            continue
        with open(os.path.join(args.out, "images", key), "wb") as f:
            f.write(data)
        healed.append(key)
    conn.send_message(END_SESSION, b"")  # an empty message: the field is still sent (oneof)
    _, done = conn.read_message(DONE)
    conn.sock.close()
    print(json.dumps({"healed": healed, "missing": missing,
                      "server_images": get_u(decode(get_b(done, 1)), 7)}))


def pull(args):
    out = args.out
    os.makedirs(os.path.join(out, "images"), exist_ok=True)
    items_path = os.path.join(out, "items.json")
    cp_path = os.path.join(out, "checkpoint.json")
    items = json.load(open(items_path)) if os.path.exists(items_path) else {}
    checkpoint = json.load(open(cp_path)) if os.path.exists(cp_path) else None
    my_store_id = bytes.fromhex(args.store_id) if args.store_id else None
    if my_store_id is None:
        sid_path = os.path.join(out, "store_id")
        if not os.path.exists(sid_path):
            with open(sid_path, "w") as f:
                f.write(os.urandom(16).hex())
        my_store_id = bytes.fromhex(open(sid_path).read().strip())
    conn, pinned, my_node_id = connect(args)

    # --- Hello (§4.1, §5.1)
    conn.send_message(HELLO,
                      f_varint(1, 1) + f_varint(2, 1) + f_bytes(3, my_node_id)
                      + f_bytes(4, my_store_id) + f_varint(5, INTENT_PULL)
                      + f_str(7, "hpsync_client.py 0.1"))
    _, h = conn.read_message(HELLO)
    if get_b(h, 3) != pinned:
        raise ProtoError("server Hello node_id is not the pinned ID")
    if get_u(h, 6) != 1:
        raise ProtoError(f"server chose version {get_u(h, 6)}, we speak only 1")
    if get_u(h, 5) != INTENT_PULL:
        raise ProtoError("server Hello does not echo intent pull")
    server_store_id = check_len("store_id", get_b(h, 4), 16)
    software = get_s(h, 7)

    # --- PullRequest (§4.2)
    since = 0
    if checkpoint and bytes.fromhex(checkpoint["store_id"]) == server_store_id:
        since = checkpoint["through_seq"]
    conn.send_message(PULL_REQUEST, f_bytes(1, server_store_id) + f_varint(2, since))

    counts = {k: 0 for k in ["inserted", "updated", "deleted", "tombstones", "skipped",
                             "refused", "images", "image_bytes", "entries", "records"]}
    prev_through = since
    pages = 0
    refused_floor = None  # lowest (seq - 1) of a refused entry: checkpoint may not pass it
    while True:
        _, page = conn.read_message(MANIFEST_PAGE)
        pages += 1
        through = get_u(page, 2)
        final = get_bool(page, 3)
        if through < prev_through:
            raise ProtoError("through_seq decreased")
        entries = []
        seen = set()
        last_seq = prev_through
        for raw_e in page.get(1, []):
            e = decode(raw_e)
            key = check_key(get_s(e, 1))
            ent = {"key": key, "stamp": get_u(e, 2),
                   "origin": check_len("origin", get_b(e, 3), 32),
                   "deleted": get_bool(e, 4), "seq": get_u(e, 5)}
            if key in seen:
                raise ProtoError(f"key {key} twice on one page")
            seen.add(key)
            if not (last_seq < ent["seq"] <= through):
                raise ProtoError(f"entry seq {ent['seq']} out of order or range "
                                 f"({last_seq}, {through}]")
            last_seq = ent["seq"]
            entries.append(ent)
        if len(entries) > 4096:
            raise ProtoError("more than 4096 entries on a page")
        counts["entries"] += len(entries)

        # §6 steps 1-3: clock guard, merge rule
        now_ms = int(time.time() * 1000)
        winners = []
        for ent in entries:
            if (ent["stamp"] >> 16) > now_ms + SKEW_MS:
                counts["refused"] += 1
                floor = ent["seq"] - 1
                refused_floor = floor if refused_floor is None else min(refused_floor, floor)
                continue
            old = items.get(ent["key"])
            old_v = (old["stamp"], bytes.fromhex(old["origin"])) if old else None
            if wins((ent["stamp"], ent["origin"]), old_v):
                winners.append(ent)
            else:
                counts["skipped"] += 1

        staged = {}  # key -> new item dict
        seq_of = {e["key"]: e["seq"] for e in entries}
        for ent in winners:
            if ent["deleted"]:  # winning tombstones straight from the manifest
                staged[ent["key"]] = {"key": ent["key"], "name": "", "serial": None, "value": 0,
                                      "date_ms": 0, "image_sha256": None, "image_size": 0,
                                      "stamp": ent["stamp"], "origin": ent["origin"].hex(),
                                      "deleted": True}

        # §6 step 4: FetchRecords for winning live entries, in batches of <= 1024
        live = [e["key"] for e in winners if not e["deleted"]]
        for i in range(0, len(live), 1024):
            batch = live[i:i + 1024]
            conn.send_message(FETCH_RECORDS, b"".join(f_str(1, k, always=True) for k in batch))
            _, recs = conn.read_message(RECORDS)
            got = set()
            rec_list = recs.get(1, [])
            if len(rec_list) > 1024:
                raise ProtoError("more than 1024 records")
            for raw_r in rec_list:
                r = decode(raw_r)
                key = check_key(get_s(r, 1))
                if key not in batch or key in got:
                    raise ProtoError(f"record for unrequested or repeated key {key}")
                got.add(key)
                counts["records"] += 1
                stamp, origin = get_u(r, 8), check_len("origin", get_b(r, 9), 32)
                old = items.get(key)
                old_v = (old["stamp"], bytes.fromhex(old["origin"])) if old else None
                if not wins((stamp, origin), old_v):
                    counts["skipped"] += 1
                    continue
                if (stamp >> 16) > now_ms + SKEW_MS:
                    counts["refused"] += 1
                    continue
                if get_bool(r, 10):
                    staged[key] = {"key": key, "name": "", "serial": None, "value": 0,
                                   "date_ms": 0, "image_sha256": None, "image_size": 0,
                                   "stamp": stamp, "origin": origin.hex(), "deleted": True}
                    continue
                name = get_s(r, 2)
                serial = get_s(r, 3) if 3 in r else None  # optional: presence matters
                if len(name.encode()) > 1024 or (serial and len(serial.encode()) > 256):
                    raise ProtoError(f"{key}: oversized text (ERROR_BAD_DATA)")
                sha = get_b(r, 6)
                size = get_u(r, 7)
                if sha:
                    check_len("image_sha256", sha, 32)
                    if size == 0 or size > MAX_IMAGE:
                        raise ProtoError(f"{key}: bad image size {size}")
                elif size != 0:
                    raise ProtoError(f"{key}: image_size without image_sha256")
                staged[key] = {"key": key, "name": name, "serial": serial,
                               "value": get_i64(r, 4), "date_ms": get_i64(r, 5),
                               "image_sha256": sha.hex() if sha else None, "image_size": size,
                               "stamp": stamp, "origin": origin.hex(), "deleted": False}

        # §6 step 5: images we do not have by digest, once per distinct digest, <= 64 at a time
        have = {}  # sha hex -> path of a file we already have
        for it in items.values():
            if it.get("image_sha256") and not it["deleted"]:
                p = os.path.join(out, "images", it["key"])
                if os.path.exists(p):
                    have[it["image_sha256"]] = p
        wanted = {}  # sha hex -> (key, size)
        for it in staged.values():
            if it["image_sha256"] and it["image_sha256"] not in have \
                    and it["image_sha256"] not in wanted:
                wanted[it["image_sha256"]] = (it["key"], it["image_size"])
        new_images = {}  # sha hex -> bytes
        wl = list(wanted.items())
        for i in range(0, len(wl), 64):
            batch = wl[i:i + 64]
            conn.send_message(FETCH_IMAGES, b"".join(
                f_msg(1, f_str(1, key, always=True) + f_bytes(2, bytes.fromhex(sha)))
                for sha, (key, _) in batch))
            for sha, (key, size) in batch:
                data = read_image(conn, key, sha, size)
                if data is None:
                    # Protocol.md does not say what a sink does with a missing image. This client
                    # leaves every item that needs those bytes unapplied and holds its checkpoint
                    # below them (like a refused entry), so a later pull retries them.
                    for it_key in [k for k, it in staged.items() if it["image_sha256"] == sha]:
                        del staged[it_key]
                        floor = seq_of[it_key] - 1
                        refused_floor = floor if refused_floor is None else min(refused_floor, floor)
                        counts["skipped"] += 1
                    continue
                new_images[sha] = data
                counts["images"] += 1
                counts["image_bytes"] += len(data)

        # §6 step 6: apply the page atomically-ish (images first, then items + checkpoint)
        for key, it in staged.items():
            img_path = os.path.join(out, "images", key)
            old = items.get(key)
            if it["deleted"]:
                counts["tombstones" if old is None or old["deleted"] else "deleted"] += 1
                if os.path.exists(img_path):
                    os.remove(img_path)
            else:
                counts["inserted" if old is None or old["deleted"] else "updated"] += 1
                sha = it["image_sha256"]
                if sha:
                    data = new_images.get(sha)
                    if data is None and sha in have:
                        data = open(have[sha], "rb").read()
                    if data is not None:
                        with open(img_path + ".tmp", "wb") as f:
                            f.write(data)
                            f.flush()
                            os.fsync(f.fileno())
                        os.replace(img_path + ".tmp", img_path)
                elif os.path.exists(img_path):
                    os.remove(img_path)
            items[key] = it
        cp_seq = through if refused_floor is None else min(through, refused_floor)
        with open(items_path + ".tmp", "w") as f:
            json.dump(items, f, indent=1, sort_keys=True)
        os.replace(items_path + ".tmp", items_path)
        with open(cp_path + ".tmp", "w") as f:
            json.dump({"store_id": server_store_id.hex(), "through_seq": cp_seq}, f)
        os.replace(cp_path + ".tmp", cp_path)

        conn.send_message(PAGE_DONE, f_varint(1, through) + f_msg(2, counts_msg(counts)))
        prev_through = through
        if final:
            break

    _, done = conn.read_message(DONE)
    dc = decode(get_b(done, 1))
    server_counts = {k: get_u(dc, i + 1) for i, k in enumerate(counts)}
    try:
        conn.sock.settimeout(2)
        conn.sock.unwrap()  # TLS close_notify
    except (OSError, ssl.SSLError):
        pass
    conn.sock.close()
    summary = {"server_software": software, "server_store_id": server_store_id.hex(),
               "pages": pages, "since": since, "through_seq": prev_through, "counts": counts,
               "server_counts": server_counts}
    print(json.dumps(summary))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    n = sub.add_parser("node-id", help="print the node ID text of a PEM certificate")
    n.add_argument("cert")
    n.add_argument("--plain-luhn", action="store_true",
                   help="use the literal §2 Luhn (no digit reduction) for comparison")
    p = sub.add_parser("pull", help="pull from an hp-sync server")
    h = sub.add_parser("heal", help="version 3: fetch the images of KEYS (pulled into OUT) by digest")
    for q in (p, h):
        q.add_argument("--host", default="127.0.0.1")
        q.add_argument("--port", type=int, default=7717)
        q.add_argument("--cert", required=True)
        q.add_argument("--key", required=True)
        q.add_argument("--server-id", required=True, help="the server's node ID (text form)")
        q.add_argument("--out", required=True)
        q.add_argument("--timeout", type=float, default=20)
    p.add_argument("--store-id", help="this client's 16-byte store ID in hex (default: random, "
                                      "kept in OUT/store_id)")
    h.add_argument("keys", nargs="+")
    args = ap.parse_args()
    if args.cmd == "node-id":
        nid = node_id_of_der(pem_to_der(args.cert))
        print(node_id_text(nid, luhn32_plain if args.plain_luhn else luhn32))
    else:
        try:
            heal(args) if args.cmd == "heal" else pull(args)
        except PeerError as e:
            print(f"hpsync_client: server sent error: {e}", file=sys.stderr)
            sys.exit(3)
        except ProtoError as e:
            print(f"hpsync_client: protocol error: {e}", file=sys.stderr)
            sys.exit(4)


if __name__ == "__main__":
    main()
