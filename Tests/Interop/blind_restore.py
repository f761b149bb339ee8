#!/usr/bin/env python3
"""An independent offline restore of a blind store in packs (protocol version 6), written from
Protocol.md (§5.8.1 keys, §5.8.3 sealed photos, §5.8.6/§5.8.7 head and packs, §4.5 and §5.9
records), hpsync.proto and README.md alone: "the house burned down, I have the recovery key and
the off-site folder".

Usage:
  blind_restore.py HOST-STORE-DIR (--recovery-key hpk1-... | --recovery-key-file FILE)
                   --out DIR [--store-id HEX-OR-UUID] [--min-epoch N]

Reads (never writes) the blind host's folder:
  store.sqlite (+ -wal)   the sealed head and the host's store ID (README "How it works": "the
                          sealed head naming them ... are in store.sqlite"; the table and column
                          names are NOT documented: blindHead(one, epoch, sealed) and
                          meta(storeID, blind) were found by listing the schema). The head usually
                          lives only in store.sqlite-wal: a copy without it has no head at all.
  packs/<hex pack ID>     sealed packs (README; "<ID>" is 64 lowercase hex digits, seen by listing)
  sealed/<hex photo ID>   sealed photos (likewise)

Writes:
  DIR/items.json   [{key, name, serialNumber, valueInDollars, dateCreatedMilliseconds,
                     image: {sha256, size} | null, conflicts, stamp, origin (hex), deleted,
                     keptImage (a tombstone's photo, §5.9)}] sorted by key: the join (§5.9) of
                   the records of every pack that opened, applied pack by pack in the head's order
  DIR/images/KEY   the photo of each live item, verified against its SHA-256
  DIR/kept/SHA256  the photos tombstones keep (§5.9 "A tombstone's photo"), verified
  DIR/report.json  what was read, refused and why

Exit status: 0 everything the head names opened and checked; 81 something was refused (a pack, a
photo: reported, the rest written, as hp-sync's pull does, §5.8.7); 2 the recovery key or the
head is unusable (nothing written), or a usage error.
"""

import argparse
import hashlib
import hmac
import importlib.util
import json
import os
import sqlite3
import struct
import sys
import uuid

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("hpsync_client", os.path.join(HERE, "hpsync_client.py"))
pb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pb)  # standard-library protobuf reading, node ID text


class Refused(Exception):
    """Sealed data failed a check the spec says a reader MUST make."""


class Fatal(Exception):
    """Nothing can be restored (bad recovery key, head does not open)."""


# ---------------------------------------------------------------------------------------------
# §5.8.1 recovery key and subkeys

CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def parse_recovery_key(text: str) -> bytes:
    s = "".join(text.split()).replace("-", "").lower()
    s = s.replace("o", "0").replace("i", "1").replace("l", "1")
    # The text is printed as `hpk1-` and 11 groups. §5.8.1 does not say whether a reader requires
    # or strips the prefix; "hpk1" is itself valid base32 (h, p, k, 1), so strip it when the
    # length says it is there (hp-sync accepts the key with or without it, and "hpkl" too).
    if len(s) == 59 and s.startswith("hpk1"):
        s = s[4:]
    if len(s) != 55:
        raise Fatal(f"recovery key: {len(s)} characters after hpk1-, expected 55")
    bits = 0
    for ch in s:
        v = CROCKFORD.find(ch)
        if v < 0:
            raise Fatal(f"recovery key: {ch!r} is not a Crockford base32 character")
        bits = bits << 5 | v
    # 55 * 5 = 275 bits = 34 bytes + 3 padding bits ("the last group zero-padded")
    pad = bits & 0b111
    raw = (bits >> 3).to_bytes(34, "big")
    if pad:
        # Not in §5.8.1 (it says only "the last group zero-padded" and "refuse a wrong length or
        # checksum"); hp-sync refuses it too ("its last character cannot end a recovery key").
        raise Fatal("recovery key: the padding bits of the last character are not zero")
    key, check = raw[:32], raw[32:]
    if hashlib.sha256(key).digest()[:2] != check:
        raise Fatal("recovery key: checksum mismatch (a typo?)")
    return key


def hkdf(ikm: bytes, info: bytes, salt: bytes = b"") -> bytes:
    # RFC 5869 with an empty salt is HMAC keyed with HashLen zeros; cryptography's salt=None is that.
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt or None, info=info).derive(ikm)


class Keys:
    def __init__(self, k: bytes):
        self.inventory = k
        self.record_id = hkdf(k, b"hp-sync v4 record-id")
        self.photo_id = hkdf(k, b"hp-sync v4 photo-id")
        self.record = hkdf(k, b"hp-sync v4 record")
        self.photo = hkdf(k, b"hp-sync v4 photo")
        self.head = hkdf(k, b"hp-sync v4 head")
        self.pack = hkdf(k, b"hp-sync v6 pack")  # §5.8.7: "HKDF-SHA256(K, info `hp-sync v6 pack`)"

    def photo_id_of(self, sha256: bytes) -> bytes:
        return hmac.new(self.photo_id, sha256, hashlib.sha256).digest()

    def record_id_of(self, key: str) -> bytes:
        return hmac.new(self.record_id, key.encode("utf-8"), hashlib.sha256).digest()


# ---------------------------------------------------------------------------------------------
# §5.8.3 sealed streams (photos, and packs with the §5.8.7 differences)

CHUNK = 64 * 1024


def padme(n: int) -> int:
    e = n.bit_length() - 1  # floor(log2 n)
    s = e.bit_length()      # floor(log2 e) + 1 (e >= 1 for every n >= 2)
    mask = (1 << (e - s)) - 1
    return (n + mask) & ~mask


def padded_size(length: int) -> int:
    return max(4096, padme(length + 1))


def sealed_size(length: int) -> int:
    p = padded_size(length)
    return 17 + p + 16 * -(-p // CHUNK)


STREAM_KINDS = {
    "photo": (b"hp-sync v4 photo chunk", b"hp-sync photo v1"),
    "pack": (b"hp-sync v6 pack chunk", b"hp-sync pack v1"),
}


def open_stream(kind: str, subkey: bytes, stream_id: bytes, length: int, sealed: bytes) -> bytes:
    """Open a sealed photo or pack of `length` plaintext bytes; every check of §5.8.3/§5.8.7."""
    info_label, ad_label = STREAM_KINDS[kind]
    p = padded_size(length)
    nchunks = -(-p // CHUNK)
    if len(sealed) != 17 + p + 16 * nchunks:
        raise Refused(f"{kind} {stream_id.hex()[:16]}: {len(sealed)} bytes, a sealed {kind} of "
                      f"{length} bytes is {17 + p + 16 * nchunks}")
    if sealed[0] != 1:
        raise Refused(f"{kind} {stream_id.hex()[:16]}: format byte {sealed[0]}, expected 1")
    salt = sealed[1:17]
    aead = ChaCha20Poly1305(hkdf(subkey, info_label + stream_id, salt=salt))
    ad = ad_label + stream_id + struct.pack(">Q", length)
    out = bytearray()
    pos = 17
    for i in range(nchunks):
        plain_len = min(CHUNK, p - i * CHUNK)
        ct = sealed[pos:pos + plain_len + 16]
        pos += plain_len + 16
        last = i == nchunks - 1
        nonce = i.to_bytes(11, "big") + (b"\x01" if last else b"\x00")
        try:
            out += aead.decrypt(nonce, ct, ad)
        except InvalidTag:
            raise Refused(f"{kind} {stream_id.hex()[:16]}: chunk {i + 1} of {nchunks} failed "
                          f"authentication") from None
    if len(out) != p:
        raise Refused(f"{kind} {stream_id.hex()[:16]}: padded length {len(out)} != {p}")
    if out[length] != 0x80 or any(out[length + 1:]):
        raise Refused(f"{kind} {stream_id.hex()[:16]}: bad padding")
    return bytes(out[:length])


# ---------------------------------------------------------------------------------------------
# §5.8.6 / §5.8.7 the head (format 2)

HEAD_AD = b"hp-sync head v1"
MAX_HEAD_SEALED = 1024 * 1024
MAX_PACKS = 26207
# The head allows a pack's plaintext size up to 2^26 (and §4.15 a sealed pack up to 69,222,929
# bytes, which is 2^26 sealed), while §5.8.7 says a pack's plaintext is at most 4 MiB. A reader
# has no rule to refuse 4 MiB < size <= 2^26, so it accepts what the head allows.
MAX_PACK_PLAIN = 1 << 26


def open_head(keys: Keys, store_id: bytes, epoch: int, sealed: bytes):
    if epoch == 0 or not sealed:
        raise Fatal("the blind store has no head (epoch 0): nothing was ever pushed")
    if len(sealed) > MAX_HEAD_SEALED or len(sealed) < 12 + 16:
        raise Fatal(f"head: {len(sealed)} sealed bytes")
    ad = HEAD_AD + store_id + struct.pack(">Q", epoch)
    try:
        plain = ChaCha20Poly1305(keys.head).decrypt(sealed[:12], sealed[12:], ad)
    except InvalidTag:
        raise Fatal("head failed authentication: altered, sealed under another inventory key, or "
                    "from another store (store ID) or epoch") from None
    if not plain:
        raise Fatal("head: empty plaintext")
    if plain[0] == 1:
        raise Fatal("head is of format 1 (a version-4 store of entries, §5.8.6): not a store in packs")
    if plain[0] != 2:
        raise Fatal(f"head: unknown format {plain[0]}")
    if len(plain) < 14:
        raise Fatal("head: truncated")
    (p_epoch,) = struct.unpack(">Q", plain[1:9])
    if p_epoch != epoch:
        raise Fatal(f"head: sealed epoch {p_epoch} != stored epoch {epoch}")
    state = plain[9]
    if state not in (0, 1):
        raise Fatal(f"head: open/finished byte {state}")
    (count,) = struct.unpack(">I", plain[10:14])
    if count > MAX_PACKS:
        raise Fatal(f"head: {count} packs, at most {MAX_PACKS}")
    body = 14 + 40 * count
    padding = "none"
    if len(plain) != body:
        # DOCS vs BINARY: §5.8.6 says the head is "sealed like a record (without padding)" and
        # §5.8.7 that it is "sealed and stored as the format-1 head is", yet hp-sync pads the
        # format-2 head's plaintext as §5.8.2 pads a record: 0x80, then zeros to the next multiple
        # of 256 bytes. Accept exactly that, and nothing else.
        if (len(plain) % 256 or len(plain) <= body or plain[body] != 0x80
                or any(plain[body + 1:])):
            raise Fatal(f"head: {len(plain)} bytes for {count} packs (neither {body} nor padded "
                        f"to a multiple of 256 with 0x80 and zeros)")
        padding = "record-style (0x80, zeros, to a multiple of 256)"
    packs, seen = [], set()
    for i in range(count):
        off = 14 + 40 * i
        pid = plain[off:off + 32]
        (size,) = struct.unpack(">Q", plain[off + 32:off + 40])
        if pid in seen:
            raise Fatal(f"head: pack {pid.hex()[:16]} named twice")
        if not 1 <= size <= MAX_PACK_PLAIN:
            raise Fatal(f"head: pack {pid.hex()[:16]} plaintext size {size}")
        seen.add(pid)
        packs.append((pid, size))
    return {"epoch": epoch, "open": state == 1, "packs": packs, "padding": padding}


# ---------------------------------------------------------------------------------------------
# §4.5 / §5.9 records

INT32 = (-(1 << 31), (1 << 31) - 1)
MAX_IMAGE = 64 * 1024 * 1024
FIELDS = ("name", "serial", "value", "date", "photo")
ABSENT = None


def s64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def check_text(b: bytes, limit: int, what: str) -> str:
    if len(b) > limit:
        raise Refused(f"{what}: {len(b)} bytes, at most {limit}")
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{what}: not UTF-8") from None


def check_value(v: int, what: str):
    if not INT32[0] <= v <= INT32[1]:
        raise Refused(f"{what}: value {v} outside the 32-bit range")


def check_photo(sha: bytes, size: int, what: str):
    if sha and (len(sha) != 32 or size == 0 or size > MAX_IMAGE):
        raise Refused(f"{what}: image digest of {len(sha)} bytes, size {size}")
    if not sha and size:
        raise Refused(f"{what}: image size {size} without digest")


class Reader:
    def __init__(self, buf: bytes, what: str):
        self.buf, self.pos, self.what = buf, 0, what

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.buf):
            raise Refused(f"{self.what}: fields bytes end early")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def u8(self) -> int:
        return self.take(1)[0]

    def le(self, n: int, signed=False) -> int:
        return int.from_bytes(self.take(n), "little", signed=signed)


def read_value(r: Reader, field: str, what: str):
    """A value in the fields bytes (§5.9 "The fields bytes": integers little-endian)."""
    if field == "name":
        return check_text(r.take(r.le(8)), 1024, what + " name")
    if field == "serial":
        flag = r.u8()
        if flag == 0:
            return ABSENT
        if flag != 1:
            raise Refused(f"{what}: serial presence byte {flag}")
        return check_text(r.take(r.le(8)), 256, what + " serial")
    if field in ("value", "date"):
        v = r.le(8, signed=True)
        if field == "value":
            check_value(v, what)
        return v
    flag = r.u8()  # photo
    if flag == 0:
        return ABSENT
    if flag != 1:
        raise Refused(f"{what}: photo presence byte {flag}")
    sha, size = r.take(32), r.le(8)
    check_photo(sha, size, what)
    return (sha, size)


def record_value(rec, field):
    return {"name": rec["name"], "serial": rec["serial"], "value": rec["value"], "date": rec["date"],
            "photo": (rec["image_sha256"], rec["image_size"]) if rec["image_sha256"] else ABSENT}[field]


def parse_fields(rec, fb: bytes):
    """Decode the fields bytes of a record into a merge state {field: [cand]}, §5.9.

    A candidate is (version, base, value) with version = (stamp, origin) and base None (unknown)."""
    what = rec["key"]
    r = Reader(fb, what)
    origins = [rec["origin"]] + [r.take(32) for _ in range(r.u8())]
    versions = []
    for _ in range(r.u8()):
        stamp, oi = r.le(8), r.u8()
        if oi >= len(origins):
            raise Refused(f"{what}: origin index {oi} outside the table")
        versions.append((stamp, origins[oi]))
    rv = (rec["stamp"], rec["origin"])

    def ver(i):
        if i >= len(versions):
            raise Refused(f"{what}: version index {i} outside the table")
        return versions[i]

    state = {}
    for field in FIELDS:
        flags = r.u8()
        if flags == 4:
            if not rec["deleted"]:
                raise Refused(f"{what}: live item with empty field {field}")
            state[field] = []
            continue
        if flags & ~(1 | 2 | 8 | 16):
            raise Refused(f"{what}: field {field} flags {flags:#x}")
        v = ver(r.u8()) if flags & 1 else rv
        base = ver(r.u8()) if flags & 2 else None
        if rec["deleted"] != bool(flags & 8):
            raise Refused(f"{what}: field {field}: value flag 8 {'missing on a deleted' if rec['deleted'] else 'on a live'} item")
        value = read_value(r, field, what) if flags & 8 else record_value(rec, field)
        if base is not None and not base < v:
            raise Refused(f"{what}: field {field}: base not below its version")
        cands = [(v, base, value)]
        if flags & 16:
            for _ in range(r.u8()):
                af = r.u8()
                if af & ~2:
                    raise Refused(f"{what}: agreeing candidate flags {af:#x}")
                av = ver(r.u8())
                ab = ver(r.u8()) if af & 2 else None
                if ab is not None and not ab < av:
                    raise Refused(f"{what}: field {field}: base not below its version")
                cands.append((av, ab, value))
        state[field] = cands
    if r.pos != len(fb):
        raise Refused(f"{what}: fields bytes go on past the fifth entry")
    return state


def parse_record(buf: bytes):
    f = pb.decode(buf)
    key = pb.get_s(f, 1)
    try:
        pb.check_key(key)
    except pb.ProtoError:
        raise Refused(f"record key {key!r} is not a canonical UUID") from None
    origin = pb.get_b(f, 9)
    if len(origin) != 32:
        raise Refused(f"{key}: origin of {len(origin)} bytes")
    rec = {
        "key": key,
        "name": check_text(pb.get_b(f, 2), 1024, key + " name"),
        "serial": check_text(pb.get_b(f, 3), 256, key + " serial") if 3 in f else ABSENT,
        "value": pb.get_i64(f, 4),
        "date": pb.get_i64(f, 5),
        "image_sha256": pb.get_b(f, 6),
        "image_size": pb.get_u(f, 7),
        "stamp": pb.get_u(f, 8),
        "origin": origin,
        "deleted": pb.get_bool(f, 10),
        "joined": pb.get_bool(f, 12),
        "fields": pb.get_b(f, 13),
        "conflicts": [],
    }
    if not rec["deleted"]:
        check_value(rec["value"], key)
        check_photo(rec["image_sha256"], rec["image_size"], key)
    if len(rec["fields"]) > 16384:
        raise Refused(f"{key}: fields bytes {len(rec['fields'])} > 16384")
    cands = f.get(11, [])
    if len(cands) > 64:
        raise Refused(f"{key}: {len(cands)} conflicts > 64")
    if cands and not rec["fields"]:
        raise Refused(f"{key}: conflicts without fields bytes")
    for cb in cands:
        c = pb.decode(cb)
        fnum = pb.get_u(c, 1)
        if not 1 <= fnum <= 5:
            raise Refused(f"{key}: conflict of field {fnum}")
        field = FIELDS[fnum - 1]
        corigin, borigin = pb.get_b(c, 3), pb.get_b(c, 5)
        if len(corigin) != 32 or (borigin and len(borigin) != 32):
            raise Refused(f"{key}: conflict origin length")
        v = (pb.get_u(c, 2), corigin)
        base = (pb.get_u(c, 4), borigin) if borigin else None
        if not borigin and pb.get_u(c, 4):
            raise Refused(f"{key}: conflict base stamp without base origin")
        if base is not None and not base < v:
            raise Refused(f"{key}: conflict base not below its version")
        has_text, has_int = 6 in c, 7 in c
        has_img = 8 in c or 9 in c
        if field in ("name", "serial"):
            if has_int or has_img:
                raise Refused(f"{key}: conflict of {field} with a non-text value")
            if field == "name":
                value = check_text(pb.get_b(c, 6), 1024, key + " conflict name")
            else:
                value = check_text(pb.get_b(c, 6), 256, key + " conflict serial") if has_text else ABSENT
        elif field in ("value", "date"):
            if has_text or has_img:
                raise Refused(f"{key}: conflict of {field} with a non-integer value")
            value = pb.get_i64(c, 7)
            if field == "value":
                check_value(value, key + " conflict")
        else:
            if has_text or has_int:
                raise Refused(f"{key}: conflict of photo with a non-photo value")
            sha, size = pb.get_b(c, 8), pb.get_u(c, 9)
            check_photo(sha, size, key + " conflict")
            value = (sha, size) if sha else ABSENT
        rec["conflicts"].append((field, (v, base, value)))
    rec["state"] = record_state(rec)
    return rec


def record_state(rec):
    """The merge state a record stands for (§5.9), checked to show exactly the record."""
    rv = (rec["stamp"], rec["origin"])
    if not rec["fields"]:
        if rec["deleted"]:  # a whole tombstone: no field holds a candidate
            return {"fields": {f: [] for f in FIELDS}, "deletion": rv}
        return {"fields": {f: [(rv, None, record_value(rec, f))] for f in FIELDS}, "deletion": None}
    fields = parse_fields(rec, rec["fields"])
    for field, cand in rec["conflicts"]:
        fields[field].append(cand)
    state = normalize({"fields": fields, "deletion": rv if rec["deleted"] else None})
    shown = show(state)
    if shown["version"] != rv or shown["deleted"] != rec["deleted"]:
        raise Refused(f"{rec['key']}: merge state does not show the record's version/deletion")
    if not rec["deleted"]:
        for f in FIELDS:
            if shown["values"][f] != record_value(rec, f):
                raise Refused(f"{rec['key']}: merge state's {f} is not the record's")
    return state


def conflict_value(v):
    if isinstance(v, tuple):
        return {"sha256": v[0].hex(), "size": v[1]}
    return v


def value_order(field, v):
    if v is ABSENT:
        return (0,)
    if field == "photo":
        return (1, v[0], v[1])
    if isinstance(v, str):
        return (1, v.encode("utf-8"))
    return (1, v)


def normalize(state):
    """Join's per-field cleanup (§5.9): one candidate per version, then drop dominated ones."""
    out = {}
    for field, cands in state["fields"].items():
        byver = {}
        for c in cands:
            v, base, value = c
            old = byver.get(v)
            if old is None:
                byver[v] = c
                continue
            # "keep the one whose base is unknown, else the greater base, else the value first"
            if old[1] is None:
                keep = old
            elif base is None:
                keep = c
            elif base != old[1]:
                keep = c if base > old[1] else old
            else:
                keep = c if value_order(field, value) < value_order(field, old[2]) else old
            byver[v] = keep
        kept = []
        for c in byver.values():
            dominated = False
            for x in byver.values():
                if x is c:
                    continue
                if x[1] is not None:
                    if c[0] <= x[1]:
                        dominated = True
                elif c[0] < x[0]:
                    dominated = True
                if dominated:
                    break
            if not dominated:
                kept.append(c)
        out[field] = sorted(kept, key=lambda c: c[0], reverse=True)
    return {"fields": out, "deletion": state["deletion"]}


def join(a, b):
    fields = {f: a["fields"][f] + b["fields"][f] for f in FIELDS}
    deletions = [d for d in (a["deletion"], b["deletion"]) if d is not None]
    return normalize({"fields": fields, "deletion": max(deletions) if deletions else None})


def show(state):
    versions = [state["fields"][f][0][0] for f in FIELDS if state["fields"][f]]
    top = max(versions) if versions else None
    d = state["deletion"]
    deleted = d is not None and (top is None or d > top)
    version = max([v for v in (top, d) if v is not None])
    values, conflicts = {}, []
    for f in FIELDS:
        cands = state["fields"][f]
        values[f] = cands[0][2] if cands else ABSENT
        for c in cands[1:]:
            if c[2] != values[f]:
                conflicts.append((f, c))
    return {"version": version, "deleted": deleted, "values": values, "conflicts": conflicts}


# ---------------------------------------------------------------------------------------------
# the host's folder (README "How it works")

def read_host(store: str, store_id_arg):
    db = os.path.join(store, "store.sqlite")
    if not os.path.exists(db):
        raise Fatal(f"{db}: no such file")
    # mode=ro, not immutable: the head usually sits in store.sqlite-wal, which immutable ignores.
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = con.execute("SELECT epoch, sealed FROM blindHead WHERE one = 1").fetchone()
        meta = con.execute("SELECT storeID, blind FROM meta").fetchone()
    except sqlite3.Error as e:
        raise Fatal(f"{db}: cannot read the head: {e}") from None
    finally:
        con.close()
    if store_id_arg:
        store_id = bytes.fromhex(store_id_arg.replace("-", ""))
    else:
        store_id = bytes(meta[0])
    if len(store_id) != 16:
        raise Fatal(f"store ID of {len(store_id)} bytes")
    epoch, sealed = (row[0], bytes(row[1])) if row else (0, b"")
    return store_id, bool(meta[1]), epoch, sealed


def restore(args):
    report = {"refused": [], "held_back": [], "notes": [], "pack_records": [],
              "records_with_fields": 0, "records_with_conflicts": 0, "tombstone_records": 0}
    if args.recovery_key_file:
        text = open(args.recovery_key_file, encoding="utf-8").read()
    else:
        text = args.recovery_key
    keys = Keys(parse_recovery_key(text))
    store_id, is_blind, epoch, sealed = read_host(args.store, args.store_id)
    if not is_blind:
        report["notes"].append("meta.blind is 0: not a blind store?")
    report["store_id"] = str(uuid.UUID(bytes=store_id)).upper()
    head = open_head(keys, store_id, epoch, sealed)
    if args.min_epoch and head["epoch"] < args.min_epoch:
        raise Fatal(f"rollback: the head is at epoch {head['epoch']}, {args.min_epoch} was seen")
    report.update(epoch=head["epoch"], head_open=head["open"], packs_named=len(head["packs"]),
                  head_padding=head["padding"])

    # packs, in the head's order (§5.8.7 "A pull ... reads, in the head's order, every pack")
    os.makedirs(os.path.join(args.out, "images"), exist_ok=True)
    photo_cache, damaged = {}, {}

    def fetch_photo(sha: bytes, size: int, who: str) -> bytes:
        """A photo by its digest (§5.8.3): opened once, checked, kept; a failure is remembered."""
        if sha in photo_cache:
            return photo_cache[sha]
        if sha in damaged:
            raise Refused(damaged[sha])
        pid = keys.photo_id_of(sha)
        path = os.path.join(args.store, "sealed", pid.hex())
        try:
            if not os.path.exists(path):
                raise Refused(f"photo {pid.hex()[:16]} of {who}: not on the host")
            data = open_stream("photo", keys.photo, pid, size, open(path, "rb").read())
            if hashlib.sha256(data).digest() != sha:
                raise Refused(f"photo {pid.hex()[:16]} of {who}: SHA-256 is not the record's")
        except Refused as e:
            damaged[sha] = str(e)
            raise
        photo_cache[sha] = data
        return data

    # packs, in the head's order (§5.8.7 "A pull ... reads, in the head's order, every pack"); each
    # pack's records are applied as one page: joined (§5.9) with what earlier packs brought
    states = {}
    records_read = 0
    packs_opened = 0
    for pid, size in head["packs"]:
        path = os.path.join(args.store, "packs", pid.hex())
        try:
            if not os.path.exists(path):
                raise Refused(f"pack {pid.hex()[:16]}: named by the head, not on the host")
            plain = open_stream("pack", keys.pack, pid, size, open(path, "rb").read())
            try:
                env = pb.decode(plain)
                bodies = [n for n in env if n != 6]
                if bodies or len(env.get(6, [])) != 1:
                    raise Refused(f"pack {pid.hex()[:16]}: plaintext is not an Envelope with one Records body")
                recs_raw = pb.decode(env[6][0]).get(1, [])
                if not 1 <= len(recs_raw) <= 1024:
                    raise Refused(f"pack {pid.hex()[:16]}: {len(recs_raw)} records")
                recs = [parse_record(bytes(b)) for b in recs_raw]
            except (pb.ProtoError, UnicodeDecodeError) as e:
                raise Refused(f"pack {pid.hex()[:16]}: not a valid Records message: {e}") from None
            if len({r["key"] for r in recs}) != len(recs):
                raise Refused(f"pack {pid.hex()[:16]}: a key appears twice")
        except Refused as e:
            report["refused"].append(str(e))
            continue
        packs_opened += 1
        records_read += len(recs)
        report["pack_records"].append(len(recs))
        report["records_with_fields"] += sum(bool(r["fields"]) for r in recs)
        report["records_with_conflicts"] += sum(bool(r["conflicts"]) for r in recs)
        report["tombstone_records"] += sum(r["deleted"] for r in recs)
        for r in recs:
            key = r["key"]
            joined = join(states[key], r["state"]) if key in states else r["state"]
            shown = show(joined)
            photo = shown["values"]["photo"]
            if not shown["deleted"] and photo:
                try:
                    fetch_photo(photo[0], photo[1], key)
                except Refused as e:
                    # §5.8.7: "one that fails is reported, its record held back, and its photo ID
                    # remembered as damaged": what earlier packs brought for the key stays
                    if str(e) not in report["refused"]:
                        report["refused"].append(str(e))
                    if key not in report["held_back"]:
                        report["held_back"].append(key)
                    continue
            states[key] = joined
    report.update(packs_opened=packs_opened, records=records_read)

    items, photos_ok, kept_photos = [], 0, 0
    for key in sorted(states):
        s = show(states[key])
        v = s["values"]
        item = {"key": key, "stamp": s["version"][0], "origin": s["version"][1].hex(),
                "deleted": s["deleted"]}
        if not s["deleted"]:
            photo = v["photo"]
            item.update(name=v["name"], serialNumber=v["serial"], valueInDollars=v["value"],
                        dateCreatedMilliseconds=v["date"],
                        image={"sha256": photo[0].hex(), "size": photo[1]} if photo else None,
                        conflicts=[{"field": f, "stamp": c[0][0], "origin": c[0][1].hex(),
                                    "value": conflict_value(c[2])} for f, c in s["conflicts"]])
            if photo:
                with open(os.path.join(args.out, "images", key), "wb") as f:
                    f.write(photo_cache[photo[0]])
                photos_ok += 1
        else:
            # §5.9 "A tombstone's photo": a tombstone keeps its fields, the photo too, so that a
            # revival can show it; the host keeps that sealed photo. Restore it beside the items
            # (kept/<SHA-256>); one that fails does not hold the tombstone back.
            photo = v["photo"]
            if photo:
                try:
                    data = fetch_photo(photo[0], photo[1], f"tombstone {key}")
                    os.makedirs(os.path.join(args.out, "kept"), exist_ok=True)
                    with open(os.path.join(args.out, "kept", photo[0].hex()), "wb") as f:
                        f.write(data)
                    item["keptImage"] = {"sha256": photo[0].hex(), "size": photo[1]}
                    kept_photos += 1
                except Refused as e:
                    report["notes"].append(str(e))
        items.append(item)
    report.update(kept_photos=kept_photos, items=sum(not i["deleted"] for i in items),
                  tombstones=sum(i["deleted"] for i in items), photos=photos_ok,
                  distinct_photos=len(photo_cache))
    on_disk = set(os.listdir(os.path.join(args.store, "packs"))) if os.path.isdir(
        os.path.join(args.store, "packs")) else set()
    report["packs_not_named"] = len(on_disk - {p.hex() for p, _ in head["packs"]})
    with open(os.path.join(args.out, "items.json"), "w") as f:
        json.dump(items, f, indent=1, sort_keys=True)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
    return report


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("store", help="the blind host's store folder (a copy will do)")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--recovery-key")
    g.add_argument("--recovery-key-file")
    ap.add_argument("--out", required=True)
    ap.add_argument("--store-id", help="the host's store ID (default: read from store.sqlite)")
    ap.add_argument("--min-epoch", type=int, default=0,
                    help="the highest epoch seen before: a lower head is a rollback (§5.8.6)")
    args = ap.parse_args()
    try:
        report = restore(args)
    except Fatal as e:
        print(f"blind_restore: {e}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(report, sort_keys=True))
    for r in report["refused"]:
        print(f"blind_restore: refused: {r}", file=sys.stderr)
    sys.exit(81 if report["refused"] else 0)


if __name__ == "__main__":
    main()
