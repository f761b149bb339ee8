#!/usr/bin/env python3
"""An independent hp-sync protocol version 5 ("Field merge", Protocol.md §5.9) client, written
from Protocol.md and hpsync.proto alone. Standard library only; it reuses the framing, protobuf
and TLS code of hpsync_client.py (versions 1 and 3), which keeps working as before.

Commands:

  pull --host H --port P --cert C --key K --server-id ID --out DIR [--fetch-all] [--version 5]
      A version-5 pull (Hello min_version = max_version = 5) into DIR:
        DIR/state.json       {"KEY": merge state}: per field its candidates (value, version, base),
                             the deletion version, the last Record.joined seen
        DIR/wire.json        {"KEY": what the last session listed and sent for KEY: the manifest
                             entry (version, deleted, merge_digest) and, when fetched, the Record
                             (version, deleted, fields bytes, conflicts, joined) and the merge
                             digest this client computes from that Record alone}
        DIR/checkpoint.json  {"store_id": hex, "through_seq": n}
        DIR/images/SHA256    photo bytes by digest (live photos, tombstones' kept photos, and the
                             losing photos of open conflicts when the server supplies them)
      Without --fetch-all the client is a version-5 sink: it fetches what §5.9 "The sink" says
      (newer entries, entries whose merge digest differs from its own item's, live entries older
      than a tombstone keeping no fields), applies the other newer tombstones from the manifest
      and joins every record into its own state. With --fetch-all it fetches every listed key
      (tombstones too, §4.4), so that every manifest digest can be checked against its Record.

  check --out DIR --list LIST.json --conflicts CONFLICTS.json [--label L]
      Compare DIR with `hp-sync list --json --deleted` and `hp-sync conflicts --json` of the
      server store, and every manifest merge_digest with the digest computed from its Record.
      Prints ok:/FAIL: lines and a JSON summary line (`stats: {...}`); exit 1 on any FAIL.

  same-state DIR1 DIR2 [--label L]
      The merge states of two pulls are identical (candidate sets and deletion versions), e.g.
      an incremental sink pull (joins) against a fresh full pull.
"""

import argparse
import datetime
import hashlib
import json
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hpsync_client as c  # noqa: E402

FIELD_NAMES = ["name", "serial number", "value", "date", "photo"]  # field numbers 1..5
# `hp-sync conflicts --json` names (the tool's output, not the protocol)
CONFLICT_FIELD_NAMES = ["name", "serialNumber", "valueInDollars", "dateCreated", "photo"]
NAME, SERIAL, VALUE, DATE, PHOTO = range(5)

MAX_CONFLICTS = 64
MAX_FIELDS_BYTES = 16384
INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1

# Protocol.md §5.9 "The fields bytes" says how the *origin* table is indexed (0 = the record's
# origin, i = the table's i-th) but not how the *version* table is: "an index into the version
# table" ("the versions the entries name other than the record's own"). This client reads a
# version index as 0-based into the table (the record's own version is never written as an
# index: an absent flag 1 means it). VERSION_INDEX_BASE = 1 would read 0 as the record's version.
VERSION_INDEX_BASE = 0


class BadData(c.ProtoError):
    """A Record the receiver must refuse with ERROR_BAD_DATA (§4.5, §5.9)."""


# ---------------------------------------------------------------------------------------------
# Values, versions, candidates

def value_order(field, v):
    """Tie-break order of values (§5.9): text by UTF-8 bytes, integers numerically, photos by
    digest bytes then size, an absent value first."""
    if v is None:
        return (0,)
    if field in (NAME, SERIAL):
        return (1, v.encode("utf-8"))
    if field in (VALUE, DATE):
        return (1, v)
    return (1, v[0], v[1])


def check_value(field, v, key):
    if field == NAME:
        if not isinstance(v, str) or len(v.encode("utf-8")) > 1024:
            raise BadData(f"{key}: bad name value {v!r}")
    elif field == SERIAL:
        if v is not None and len(v.encode("utf-8")) > 256:
            raise BadData(f"{key}: serial number over 256 bytes")
    elif field == VALUE:
        if not INT32_MIN <= v <= INT32_MAX:
            raise BadData(f"{key}: value {v} outside the 32-bit range")
    elif field == PHOTO:
        if v is not None and (len(v[0]) != 32 or v[1] <= 0):
            raise BadData(f"{key}: bad photo value")


class Cand:
    __slots__ = ("version", "base", "value")

    def __init__(self, version, base, value):
        self.version, self.base, self.value = version, base, value

    def __eq__(self, o):
        return (self.version, self.base, self.value) == (o.version, o.base, o.value)

    def __hash__(self):
        return hash((self.version, self.base, repr(self.value)))

    def __repr__(self):
        return f"Cand({vtext(self.version)}, base={vtext(self.base)}, {self.value!r})"


def vtext(v):
    if v is None:
        return "unknown"
    return f"{v[0] >> 16}.{v[0] & 0xFFFF}@{v[1].hex()[:8]}"


def dominates(x, cnd):
    """§5.9 Domination: cnd is dominated by x."""
    if x.base is not None:
        return cnd.version <= x.base
    return cnd.version < x.version


def one_per_version(field, a, b):
    """Two candidates of one version are one edit: keep the one whose base is unknown, else the
    one with the greater base, else the one whose value orders first."""
    if (a.base is None) != (b.base is None):
        return a if a.base is None else b
    if a.base != b.base:
        return a if a.base > b.base else b
    return a if value_order(field, a.value) <= value_order(field, b.value) else b


class State:
    """One item's merge state (§5.9 "State"): five candidate lists, the deletion version."""

    def __init__(self, fields, deletion, joined=False):
        self.fields = [sorted(f, key=lambda x: x.version, reverse=True) for f in fields]
        self.deletion = deletion
        self.joined = joined

    def field_versions(self):
        return [x.version for f in self.fields for x in f]

    @property
    def deleted(self):
        fv = self.field_versions()
        return self.deletion is not None and (not fv or self.deletion > max(fv))

    @property
    def version(self):
        vs = self.field_versions() + ([self.deletion] if self.deletion is not None else [])
        return max(vs)

    def winner(self, f):
        return self.fields[f][0] if self.fields[f] else None

    def conflicts(self, f):
        w = self.winner(f)
        return [x for x in self.fields[f][1:] if x.value != w.value] if w else []

    def agreeing(self, f):
        w = self.winner(f)
        return [x for x in self.fields[f][1:] if x.value == w.value] if w else []

    def is_whole(self):
        """§5.9 Whole records."""
        if all(not f for f in self.fields):
            return self.deletion is not None
        v = self.version
        return all(len(f) == 1 and f[0].version == v and f[0].base is None for f in self.fields)

    def canonical(self):
        return ([[(x.version, x.base, x.value) for x in f] for f in self.fields],
                self.deletion if self.deleted else None)


def join(a, b):
    """§5.9 Join."""
    if a is None:
        return b
    if b is None:
        return a
    fields = []
    for f in range(5):
        byv = {}
        for x in a.fields[f] + b.fields[f]:
            cur = byv.get(x.version)
            byv[x.version] = x if cur is None else one_per_version(f, cur, x)
        cs = list(byv.values())
        fields.append([x for x in cs if not any(dominates(y, x) for y in cs if y is not x)])
    dels = [d for d in (a.deletion, b.deletion) if d is not None]
    st = State(fields, max(dels) if dels else None, b.joined)
    if not st.deleted:
        st.deletion = None  # a live item forgets its deletion version
    return st


# ---------------------------------------------------------------------------------------------
# The merge digest (§5.9 "On the wire"): big-endian, over every candidate

def enc_value_digest(field, v):
    if field == NAME:
        b = v.encode("utf-8")
        return struct.pack(">I", len(b)) + b
    if field == SERIAL:
        if v is None:
            return b"\x00"
        b = v.encode("utf-8")
        return b"\x01" + struct.pack(">I", len(b)) + b
    if field in (VALUE, DATE):
        return struct.pack(">q", v)
    if v is None:
        return b"\x00"
    return b"\x01" + v[0] + struct.pack(">Q", v[1])


def enc_version_digest(v):
    return struct.pack(">Q", v[0]) + v[1]


def digest_input(st):
    out = bytearray()
    for f in range(5):
        cs = sorted(st.fields[f], key=lambda x: x.version, reverse=True)
        out += struct.pack(">I", len(cs))
        for x in cs:
            out += enc_version_digest(x.version)
            out += b"\x00" if x.base is None else b"\x01" + enc_version_digest(x.base)
            out += enc_value_digest(f, x.value)
    return bytes(out)


def candidates_digest(st):
    d = int.from_bytes(hashlib.sha256(digest_input(st)).digest()[:8], "big")
    return d or 1


def merge_digest(st):
    return 0 if st.is_whole() else candidates_digest(st)


# ---------------------------------------------------------------------------------------------
# Records: the fields bytes (little-endian) and FieldCandidates

class Reader:
    def __init__(self, data, key):
        self.data, self.pos, self.key = data, 0, key

    def take(self, n):
        if self.pos + n > len(self.data):
            raise BadData(f"{self.key}: fields bytes end early (at {self.pos}, need {n})")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def i64(self):
        return struct.unpack("<q", self.take(8))[0]

    def text(self):
        n = self.u64()
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError:
            raise BadData(f"{self.key}: text in fields bytes is not UTF-8")

    def presence(self):
        p = self.u8()
        if p not in (0, 1):
            raise BadData(f"{self.key}: presence byte {p}")
        return p == 1


def read_value(r, field):
    if field == NAME:
        return r.text()
    if field == SERIAL:
        return r.text() if r.presence() else None
    if field in (VALUE, DATE):
        return r.i64()
    if not r.presence():
        return None
    sha = r.take(32)
    return (sha, r.u64())


def record_value(rec, field):
    return [rec["name"], rec["serial"], rec["value"], rec["date"],
            (rec["image_sha256"], rec["image_size"]) if rec["image_sha256"] else None][field]


def parse_fields(rec, fb, stats=None):
    """The fields bytes of §5.9 -> five lists [winner, agreeing...] (conflicts are added later)."""
    key, recv, deleted = rec["key"], rec["version"], rec["deleted"]
    r = Reader(fb, key)
    origins = [recv[1]] + [r.take(32) for _ in range(r.u8())]
    versions = []
    for _ in range(r.u8()):
        stamp = r.u64()
        oi = r.u8()
        if oi >= len(origins):
            raise BadData(f"{key}: origin index {oi} outside the table ({len(origins)})")
        versions.append((stamp, origins[oi]))

    def vidx():
        i = r.u8()
        if VERSION_INDEX_BASE == 1 and i == 0:
            return recv
        j = i - VERSION_INDEX_BASE
        if not 0 <= j < len(versions):
            raise BadData(f"{key}: version index {i} outside the table ({len(versions)})")
        return versions[j]

    fields = []
    for f in range(5):
        flags = r.u8()
        if flags == 4:
            if not deleted:
                raise BadData(f"{key}: {FIELD_NAMES[f]} holds no candidate on a live item")
            fields.append([])
            continue
        if flags & ~(1 | 2 | 8 | 16):
            raise BadData(f"{key}: {FIELD_NAMES[f]} flags {flags:#x}")
        if bool(flags & 8) != deleted:
            raise BadData(f"{key}: {FIELD_NAMES[f]}: flag 8 {'missing on a deleted' if deleted else 'on a live'} item")
        ver = vidx() if flags & 1 else recv
        base = vidx() if flags & 2 else None
        value = read_value(r, f) if flags & 8 else record_value(rec, f)
        check_value(f, value, key)
        cands = [Cand(ver, base, value)]
        if flags & 16:
            for _ in range(r.u8()):
                af = r.u8()
                if af & ~2:
                    raise BadData(f"{key}: agreeing candidate flags {af:#x}")
                av = vidx()
                ab = vidx() if af & 2 else None
                cands.append(Cand(av, ab, value))
            if stats is not None:
                stats["agreeing_entries"] = stats.get("agreeing_entries", 0) + 1
        fields.append(cands)
    if r.pos != len(fb):
        raise BadData(f"{key}: {len(fb) - r.pos} bytes after the fifth entry")
    if stats is not None:
        # "A writer lists each origin and version once, in the order the entries first name them
        # (each version's origin when the version is listed)": a receiver needs none; count.
        named_v = []
        for cands in fields:
            for x in cands:
                for v in (x.version, x.base):
                    if v is not None and v != recv and v not in named_v:
                        named_v.append(v)
        named_o = []
        for v in named_v:
            if v[1] != recv[1] and v[1] not in named_o:
                named_o.append(v[1])
        if named_v != versions or named_o != origins[1:]:
            stats["tables_not_in_writer_order"] = stats.get("tables_not_in_writer_order", 0) + 1
    return fields


def decode_candidate(raw, key):
    fc = c.decode(raw)
    field = c.get_u(fc, 1)
    if not 1 <= field <= 5:
        raise BadData(f"{key}: FieldCandidate field {field}")
    f = field - 1
    version = (c.get_u(fc, 2), c.check_len("FieldCandidate.origin", c.get_b(fc, 3), 32))
    bo = c.get_b(fc, 5)
    if bo:
        base = (c.get_u(fc, 4), c.check_len("FieldCandidate.base_origin", bo, 32))
    else:
        if c.get_u(fc, 4) != 0:
            raise BadData(f"{key}: base_stamp without base_origin")
        base = None
    has_text = 6 in fc
    integer = c.get_i64(fc, 7)
    sha, size = c.get_b(fc, 8), c.get_u(fc, 9)
    if f == NAME:
        if not has_text or integer or sha or size:
            raise BadData(f"{key}: name candidate without text, or with another type's value")
        value = c.get_s(fc, 6)
    elif f == SERIAL:
        if integer or sha or size:
            raise BadData(f"{key}: serial candidate with another type's value")
        value = c.get_s(fc, 6) if has_text else None
    elif f in (VALUE, DATE):
        if has_text or sha or size:
            raise BadData(f"{key}: integer candidate with another type's value")
        value = integer
    else:
        if has_text or integer:
            raise BadData(f"{key}: photo candidate with another type's value")
        if not sha and size == 0:
            value = None
        elif len(sha) == 32 and size > 0:
            value = (sha, size)
        else:
            raise BadData(f"{key}: photo candidate sha256/size mismatch")
    check_value(f, value, key)
    return f, Cand(version, base, value)


def decode_record(raw, stats=None):
    """A Record (§4.5, version 5) -> (record dict, State). Applies §4.5's and §5.9's checks."""
    r = c.decode(raw)
    key = c.check_key(c.get_s(r, 1))
    rec = {"key": key,
           "version": (c.get_u(r, 8), c.check_len("origin", c.get_b(r, 9), 32)),
           "deleted": c.get_bool(r, 10),
           "joined": c.get_bool(r, 12),
           "fields": c.get_b(r, 13)}
    raw_conflicts = r.get(11, [])
    if rec["deleted"]:
        rec.update(name="", serial=None, value=0, date=0, image_sha256=b"", image_size=0)
    else:
        rec.update(name=c.get_s(r, 2), serial=c.get_s(r, 3) if 3 in r else None,
                   value=c.get_i64(r, 4), date=c.get_i64(r, 5),
                   image_sha256=c.get_b(r, 6), image_size=c.get_u(r, 7))
        if rec["image_sha256"]:
            c.check_len("image_sha256", rec["image_sha256"], 32)
            if rec["image_size"] == 0 or rec["image_size"] > c.MAX_IMAGE:
                raise BadData(f"{key}: bad image size")
        elif rec["image_size"]:
            raise BadData(f"{key}: image_size without image_sha256")
        for f in (NAME, SERIAL, VALUE):
            check_value(f, record_value(rec, f), key)
    fb = rec["fields"]
    if len(fb) > MAX_FIELDS_BYTES:
        raise c.ProtoError(f"{key}: fields bytes {len(fb)} > 16384 (ERROR_LIMIT)")
    if len(raw_conflicts) > MAX_CONFLICTS:
        raise c.ProtoError(f"{key}: {len(raw_conflicts)} conflicts > 64 (ERROR_LIMIT)")
    recv = rec["version"]
    if not fb:
        if raw_conflicts:
            raise BadData(f"{key}: conflicts without fields bytes")
        if rec["deleted"]:
            st = State([[] for _ in range(5)], recv)
        else:
            st = State([[Cand(recv, None, record_value(rec, f))] for f in range(5)], None)
        return rec, st
    fields = parse_fields(rec, fb, stats)
    for raw_c in raw_conflicts:
        f, cand = decode_candidate(raw_c, key)
        fields[f].append(cand)
    st = State(fields, recv if rec["deleted"] else None, rec["joined"])
    # --- the state must show exactly the record (§4.5, §5.9)
    for f in range(5):
        cs = st.fields[f]
        seen = set()
        for x in cs:
            if x.version in seen:
                raise BadData(f"{key}: {FIELD_NAMES[f]}: two candidates of version {vtext(x.version)}")
            seen.add(x.version)
            if x.base is not None and not x.base < x.version:
                raise BadData(f"{key}: {FIELD_NAMES[f]}: base {vtext(x.base)} not below {vtext(x.version)}")
        if cs:
            w = cs[0]
            # the winner written in the entry must be the greatest version of the field
            entry_winner = fields[f][0]
            if w is not entry_winner:
                raise BadData(f"{key}: {FIELD_NAMES[f]}: a candidate {vtext(w.version)} above the winner "
                              f"{vtext(entry_winner.version)}: the state does not show the record")
    n_conf = len(raw_conflicts)
    listed = sum(len(st.conflicts(f)) for f in range(5))
    if listed != n_conf:
        raise BadData(f"{key}: {n_conf} conflicts sent, but {n_conf - listed} of them have the "
                      f"winner's value (agreeing, not open conflicts)")
    if rec["deleted"]:
        if not st.deleted:
            raise BadData(f"{key}: deleted record whose fields are not all below its version")
    else:
        if st.version != recv:
            raise BadData(f"{key}: record version {vtext(recv)} but the greatest field version is "
                          f"{vtext(st.version)}")
    return rec, st


# ---------------------------------------------------------------------------------------------
# JSON persistence

def j_ver(v):
    return None if v is None else [v[0], v[1].hex()]


def u_ver(v):
    return None if v is None else (v[0], bytes.fromhex(v[1]))


def j_val(f, v):
    return [v[0].hex(), v[1]] if f == PHOTO and v is not None else v


def u_val(f, v):
    return (bytes.fromhex(v[0]), v[1]) if f == PHOTO and v is not None else v


def state_to_json(st):
    return {"fields": [[{"version": j_ver(x.version), "base": j_ver(x.base), "value": j_val(f, x.value)}
                        for x in st.fields[f]] for f in range(5)],
            "deletion": j_ver(st.deletion), "joined": st.joined}


def state_from_json(d):
    return State([[Cand(u_ver(x["version"]), u_ver(x["base"]), u_val(f, x["value"]))
                   for x in d["fields"][f]] for f in range(5)],
                 u_ver(d["deletion"]), d.get("joined", False))


def load_states(out):
    p = os.path.join(out, "state.json")
    return {k: state_from_json(v) for k, v in json.load(open(p)).items()} if os.path.exists(p) else {}


def save_json(path, obj):
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


# ---------------------------------------------------------------------------------------------
# The version-5 pull

def pull(args):
    out = args.out
    os.makedirs(os.path.join(out, "images"), exist_ok=True)
    states = load_states(out)
    cp_path = os.path.join(out, "checkpoint.json")
    checkpoint = json.load(open(cp_path)) if os.path.exists(cp_path) else None
    wire = {}
    conn, pinned, my_node_id = c.connect(args)
    conn.send_message(c.HELLO,
                      c.f_varint(1, args.version) + c.f_varint(2, args.version) + c.f_bytes(3, my_node_id)
                      + c.f_bytes(4, os.urandom(16)) + c.f_varint(5, c.INTENT_PULL)
                      + c.f_str(7, "hpsync_merge.py 0.1") + c.f_varint(9, int(time.time() * 1000)))
    _, h = conn.read_message(c.HELLO)
    if c.get_b(h, 3) != pinned or c.get_u(h, 5) != c.INTENT_PULL:
        raise c.ProtoError("server Hello: wrong node ID or intent")
    if c.get_u(h, 6) != args.version:
        raise c.ProtoError(f"server chose version {c.get_u(h, 6)}, we asked for exactly {args.version}")
    server_store_id = c.check_len("store_id", c.get_b(h, 4), 16)
    server_versions = [c.get_u(h, 1), c.get_u(h, 2)]
    since = 0
    if checkpoint and bytes.fromhex(checkpoint["store_id"]) == server_store_id:
        since = checkpoint["through_seq"]
    conn.send_message(c.PULL_REQUEST, c.f_bytes(1, server_store_id) + c.f_varint(2, since))

    counts = {k: 0 for k in ["inserted", "updated", "deleted", "tombstones", "skipped",
                             "refused", "images", "image_bytes", "entries", "records"]}
    stats = {"pages": 0, "fetched": 0, "from_manifest_tombstones": 0, "joined_changed": 0,
             "fetched_for_digest": 0, "v5_fields_seen": 0,
             "images_missing": {"live": 0, "tombstone": 0, "conflict": 0},
             "images_fetched": {"live": 0, "tombstone": 0, "conflict": 0}}
    prev_through = since
    first_held = 0
    while True:
        _, page = conn.read_message(c.MANIFEST_PAGE)
        stats["pages"] += 1
        through, final = c.get_u(page, 2), c.get_bool(page, 3)
        if through < prev_through and stats["pages"] > 1:
            raise c.ProtoError("through_seq decreased")
        entries, seen, last_seq = [], set(), prev_through if stats["pages"] > 1 else 0
        raw_entries = page.get(1, [])
        if len(raw_entries) > 4096:
            raise c.ProtoError("more than 4096 entries (ERROR_LIMIT)")
        for raw_e in raw_entries:
            e = c.decode(raw_e)
            key = c.check_key(c.get_s(e, 1))
            md = c.last(e, 6, b"")
            if 6 in e:
                stats["v5_fields_seen"] += 1
                stats.setdefault("v5_fields_examples", []).append(f"entry {key} merge_digest")
            if isinstance(md, int):
                raise c.ProtoError(f"{key}: merge_digest sent as a varint, not fixed64")
            ent = {"key": key, "version": (c.get_u(e, 2), c.check_len("origin", c.get_b(e, 3), 32)),
                   "deleted": c.get_bool(e, 4), "seq": c.get_u(e, 5),
                   "digest": int.from_bytes(md, "little") if md else 0}
            if key in seen:
                raise c.ProtoError(f"key {key} twice on one page")
            seen.add(key)
            if not (last_seq < ent["seq"] <= through):
                raise c.ProtoError(f"entry seq {ent['seq']} out of order or range")
            last_seq = ent["seq"]
            entries.append(ent)
        counts["entries"] += len(entries)

        # §5.9 "The sink": what to fetch, what to apply from the manifest
        staged = {}
        fetch = []
        for ent in entries:
            key = ent["key"]
            wire[key] = {"entry_version": j_ver(ent["version"]), "entry_deleted": ent["deleted"],
                         "entry_digest": ent["digest"], "seq": ent["seq"]}
            local = states.get(key)
            if args.fetch_all:
                fetch.append(key)
                continue
            newer = local is None or ent["version"] > local.version
            if newer:
                if ent["deleted"] and (ent["digest"] == 0 or (
                        local is not None and not local.deleted
                        and ent["digest"] == candidates_digest(local))):
                    tomb = State([[] for _ in range(5)], ent["version"])
                    staged[key] = join(local, tomb)
                    stats["from_manifest_tombstones"] += 1
                else:
                    fetch.append(key)
            elif ent["digest"] != merge_digest(local):
                fetch.append(key)  # not newer, but another state: fetch and join
                stats["fetched_for_digest"] += 1
            elif (not ent["deleted"] and ent["version"] < local.version and local.deleted
                  and all(not f for f in local.fields)):
                fetch.append(key)
            else:
                counts["skipped"] += 1

        for i in range(0, len(fetch), 1024):
            batch = fetch[i:i + 1024]
            conn.send_message(c.FETCH_RECORDS, b"".join(c.f_str(1, k, always=True) for k in batch))
            _, recs = conn.read_message(c.RECORDS)
            got = set()
            for raw_r in recs.get(1, []):
                v5 = [n for n in (11, 12, 13) if n in c.decode(raw_r)]
                if v5:
                    stats["v5_fields_seen"] += 1
                    stats.setdefault("v5_fields_examples", []).append(
                        f"record {c.get_s(c.decode(raw_r), 1)} fields {v5}")
                rec, st = decode_record(raw_r, stats)
                key = rec["key"]
                if key not in batch or key in got:
                    raise c.ProtoError(f"record for unrequested or repeated key {key}")
                got.add(key)
                counts["records"] += 1
                stats["fetched"] += 1
                w = wire[key]
                w.update(record_version=j_ver(rec["version"]), record_deleted=rec["deleted"],
                         fields=rec["fields"].hex(), joined=rec["joined"],
                         conflicts=sum(len(st.conflicts(f)) for f in range(5)),
                         whole=st.is_whole(), record_digest=merge_digest(st),
                         candidates_digest=candidates_digest(st))
                local = staged.get(key, states.get(key))
                staged[key] = join(local, st)

        # photos: shown, kept by tombstones, and the losing photos of open conflicts
        wanted = {}  # sha hex -> (key, size, kind)
        for key, st in staged.items():
            w = st.winner(PHOTO)
            if w is not None and w.value is not None:
                kind = "tombstone" if st.deleted else "live"
                wanted.setdefault(w.value[0].hex(), (key, w.value[1], kind))
            for x in st.conflicts(PHOTO):
                if x.value is not None:
                    wanted.setdefault(x.value[0].hex(), (key, x.value[1], "conflict"))
        wanted = {s: v for s, v in wanted.items()
                  if not os.path.exists(os.path.join(out, "images", s))}
        wl = list(wanted.items())
        for i in range(0, len(wl), 64):
            batch = wl[i:i + 64]
            conn.send_message(c.FETCH_IMAGES, b"".join(
                c.f_msg(1, c.f_str(1, key, always=True) + c.f_bytes(2, bytes.fromhex(sha)))
                for sha, (key, _, _) in batch))
            for sha, (key, size, kind) in batch:
                data = c.read_image(conn, key, sha, size)
                if data is None:
                    stats["images_missing"][kind] += 1
                    if kind == "live":  # §4.7: withhold every record that shows that photo
                        for k2 in [k for k, s2 in staged.items() if not s2.deleted
                                   and s2.winner(PHOTO).value and s2.winner(PHOTO).value[0].hex() == sha]:
                            del staged[k2]
                            seq = wire[k2]["seq"]
                            first_held = seq if not first_held else min(first_held, seq)
                            counts["skipped"] += 1
                    continue
                with open(os.path.join(out, "images", sha), "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                stats["images_fetched"][kind] += 1
                counts["images"] += 1
                counts["image_bytes"] += len(data)

        for key, st in staged.items():
            old = states.get(key)
            if old is not None and old.canonical() == st.canonical():
                counts["skipped"] += 1
                continue
            if st.deleted:
                counts["tombstones" if old is None or old.deleted else "deleted"] += 1
            else:
                counts["inserted" if old is None or old.deleted else "updated"] += 1
            if old is not None:
                stats["joined_changed"] += 1
            states[key] = st
        cp_seq = through if not first_held else min(through, first_held - 1)
        save_json(os.path.join(out, "state.json"), {k: state_to_json(v) for k, v in states.items()})
        save_json(cp_path, {"store_id": server_store_id.hex(), "through_seq": cp_seq})
        conn.send_message(c.PAGE_DONE, c.f_varint(1, through) + c.f_msg(2, c.counts_msg(counts))
                          + c.f_varint(3, through) + c.f_varint(4, first_held))
        prev_through = through
        if final:
            break
    _, done = conn.read_message(c.DONE)
    try:
        conn.sock.settimeout(2)
        conn.sock.unwrap()
    except (OSError, c.ssl.SSLError):
        pass
    conn.sock.close()
    save_json(os.path.join(out, "wire.json"), wire)
    print(json.dumps({"server_versions": server_versions, "since": since, "through_seq": prev_through, "counts": counts, **stats}))


# ---------------------------------------------------------------------------------------------
# Checks against the server's own view

def iso_ms(stamp):
    ms = stamp >> 16
    return (datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
            + datetime.timedelta(milliseconds=ms)).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def conflict_value_text(f, v):
    """The value as `hp-sync conflicts --json` prints it (None: the key is left out)."""
    if v is None:
        return None
    if f in (NAME, SERIAL):
        return v
    if f == VALUE:
        return str(v)
    if f == DATE:
        return iso_ms(v << 16)
    return f"sha256:{v[0].hex()} ({v[1]} bytes)"


def check(args):
    out = args.out
    states = load_states(out)
    wire = json.load(open(os.path.join(out, "wire.json")))
    listing = {i["key"]: i for i in json.load(open(args.list))}
    server_conflicts = json.load(open(args.conflicts))
    label = args.label
    fails = []
    st_count = {"items": len(states), "tombstones": 0, "whole": 0, "with_fields": 0,
                "fields_checked": 0, "candidates": 0, "agreeing": 0, "open_conflicts": 0,
                "bases_known": 0, "digests_checked": 0, "nonzero_digests": 0, "joined_flags": 0,
                "tombstones_keeping_fields": 0, "tombstone_photos": 0}

    # 1. every manifest digest = the digest of the Record fetched for it
    for key, w in sorted(wire.items()):
        if "record_digest" not in w:
            fails.append(f"{key}: listed but its Record was not fetched")
            continue
        if w["record_version"] != w["entry_version"] or w["record_deleted"] != w["entry_deleted"]:
            fails.append(f"{key}: Record version {w['record_version']} differs from its manifest "
                         f"entry {w['entry_version']} (the server store changed during the pull?)")
            continue
        st_count["digests_checked"] += 1
        if w["entry_digest"]:
            st_count["nonzero_digests"] += 1
        if w["entry_digest"] != w["record_digest"]:
            fails.append(f"{key}: manifest merge_digest {w['entry_digest']:#018x} != computed "
                         f"{w['record_digest']:#018x} (candidates digest {w['candidates_digest']:#018x}, "
                         f"whole={w['whole']}, fields bytes {w['fields']})")
        if w.get("joined") and (w["whole"] or w["record_deleted"]):
            fails.append(f"{key}: Record.joined on a whole record or a tombstone (§5.9: never)")
        if w["whole"] != (w["fields"] == ""):
            fails.append(f"{key}: whole record {w['whole']} but fields bytes {w['fields']!r}")
        st_count["joined_flags"] += bool(w.get("joined"))

    # 2. winners, versions and deletion against `hp-sync list --json --deleted`
    if set(states) != set(listing):
        fails.append(f"key sets differ: only on server {sorted(set(listing) - set(states))[:5]}, "
                     f"only pulled {sorted(set(states) - set(listing))[:5]}")
    for key in sorted(set(states) & set(listing)):
        st, li = states[key], listing[key]
        ver = st.version
        exp = {"stamp": li["stamp"], "origin": c.parse_node_id(li["origin"]), "deleted": li["deleted"]}
        have = {"stamp": ver[0], "origin": ver[1], "deleted": st.deleted}
        if not li["deleted"]:
            img = li.get("image")
            exp.update(name=li["name"], serial=li.get("serialNumber"), value=li["valueInDollars"],
                       date=li["dateCreatedMilliseconds"],
                       photo=(img["sha256"], img["size"]) if img else None)
            wv = [st.winner(f).value for f in range(5)]
            have.update(name=wv[0], serial=wv[1], value=wv[2], date=wv[3],
                        photo=(wv[4][0].hex(), wv[4][1]) if wv[4] else None)
            st_count["fields_checked"] += 5
        else:
            st_count["tombstones"] += 1
            if any(st.fields):
                st_count["tombstones_keeping_fields"] += 1
                w = st.winner(PHOTO)
                if w is not None and w.value is not None:
                    st_count["tombstone_photos"] += 1
        if exp != have:
            diff = {k: (exp[k], have[k]) for k in exp if exp[k] != have[k]}
            fails.append(f"{key}: server (list) vs pulled: {diff}")
        if st.is_whole():
            st_count["whole"] += 1
        else:
            st_count["with_fields"] += 1
        for f in range(5):
            st_count["candidates"] += len(st.fields[f])
            st_count["agreeing"] += len(st.agreeing(f))
            st_count["bases_known"] += sum(x.base is not None for x in st.fields[f])
            # a stored state holds no dominated candidate (the join dropped them)
            for x in st.fields[f]:
                for y in st.fields[f]:
                    if y is not x and dominates(y, x):
                        fails.append(f"{key}: {FIELD_NAMES[f]}: {x} is dominated by {y}")
        # live items' photos must have arrived, tombstones' kept photos should have
        w = st.winner(PHOTO)
        if w is not None and w.value is not None:
            path = os.path.join(out, "images", w.value[0].hex())
            if not os.path.exists(path):
                fails.append(f"{key}: {'kept' if st.deleted else 'shown'} photo {w.value[0].hex()[:12]} "
                             f"was not supplied by the server")

    # 3. open conflicts against `hp-sync conflicts --json`
    mine = []
    for key, st in states.items():
        for f in range(5):
            win = st.winner(f)
            for x in st.conflicts(f):
                st_count["open_conflicts"] += 1
                mine.append({"key": key, "field": CONFLICT_FIELD_NAMES[f], "deleted": st.deleted,
                             "kept": (iso_ms(win.version[0]), c.node_id_text(win.version[1]),
                                      conflict_value_text(f, win.value)),
                             "losing": (iso_ms(x.version[0]), c.node_id_text(x.version[1]),
                                        conflict_value_text(f, x.value))})
    theirs = []
    for sc in server_conflicts:
        theirs.append({"key": sc["key"], "field": sc["field"],
                       "kept": (sc["kept"]["at"], sc["kept"]["node"], sc["kept"].get("value")),
                       "losing": (sc["losing"]["at"], sc["losing"]["node"], sc["losing"].get("value"))})

    def tup(d):
        return (d["key"], d["field"], d["kept"], d["losing"])
    mine_live = sorted(tup(d) for d in mine if not d["deleted"])
    mine_all = sorted(tup(d) for d in mine)
    theirs_s = sorted(tup(d) for d in theirs)
    if theirs_s == mine_all:
        conflicts_note = "including the conflicts deleted items keep"
    elif theirs_s == mine_live:
        conflicts_note = (f"live items only; {len(mine_all) - len(mine_live)} conflicts kept by "
                          f"tombstones are not listed by the tool")
    else:
        conflicts_note = None
        only_mine = sorted(set(mine_all) - set(theirs_s))
        only_theirs = sorted(set(theirs_s) - set(mine_all))
        fails.append(f"open conflicts differ: only pulled {only_mine[:4]}, only in "
                     f"`hp-sync conflicts` {only_theirs[:4]}")

    for f in fails[:25]:
        print(f"FAIL: [{label}] {f}")
    if len(fails) > 25:
        print(f"FAIL: [{label}] ... and {len(fails) - 25} more")
    if not fails:
        print(f"ok:   [{label}] {st_count['digests_checked']} manifest merge digests equal the digest "
              f"computed from their Records ({st_count['nonzero_digests']} non-zero, "
              f"{st_count['digests_checked'] - st_count['nonzero_digests']} whole records)")
        print(f"ok:   [{label}] {len(states)} items ({st_count['tombstones']} tombstones, "
              f"{st_count['tombstones_keeping_fields']} keeping fields) and "
              f"{st_count['fields_checked']} live field winners equal `hp-sync list --json --deleted`")
        print(f"ok:   [{label}] {st_count['open_conflicts']} open conflicts equal `hp-sync conflicts "
              f"--json` ({conflicts_note}); {st_count['agreeing']} agreeing candidates, "
              f"{st_count['bases_known']} known bases, {st_count['candidates']} candidates")
    print("stats: " + json.dumps({"label": label, **st_count}))
    return 1 if fails else 0


def same_state(args):
    a, b = load_states(args.dir1), load_states(args.dir2)
    bad = []
    if set(a) != set(b):
        bad.append(f"key sets differ: {sorted(set(a) ^ set(b))[:5]}")
    for k in sorted(set(a) & set(b)):
        if a[k].canonical() != b[k].canonical():
            bad.append(f"{k}: {a[k].fields} del={vtext(a[k].deletion)} != {b[k].fields} "
                       f"del={vtext(b[k].deletion)}")
    for x in bad[:10]:
        print(f"FAIL: [{args.label}] {x}")
    if bad:
        return 1
    print(f"ok:   [{args.label}] {len(a)} merge states identical "
          f"({sum(not s.is_whole() for s in a.values())} with per-field versions)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pull")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=7717)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--server-id", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--timeout", type=float, default=20)
    p.add_argument("--fetch-all", action="store_true")
    p.add_argument("--version", type=int, default=5,
                   help="the one version to offer (default 5; 4 checks that no version-5 field is sent)")
    k = sub.add_parser("check")
    k.add_argument("--out", required=True)
    k.add_argument("--list", required=True)
    k.add_argument("--conflicts", required=True)
    k.add_argument("--label", default="check")
    s = sub.add_parser("same-state")
    s.add_argument("dir1")
    s.add_argument("dir2")
    s.add_argument("--label", default="same-state")
    args = ap.parse_args()
    if args.cmd == "check":
        sys.exit(check(args))
    if args.cmd == "same-state":
        sys.exit(same_state(args))
    try:
        pull(args)
    except c.PeerError as e:
        print(f"hpsync_merge: server sent error: {e}", file=sys.stderr)
        sys.exit(3)
    except c.ProtoError as e:
        print(f"hpsync_merge: protocol error: {e}", file=sys.stderr)
        sys.exit(4)


if __name__ == "__main__":
    main()
