#!/usr/bin/env bash
# Interop test: an independent offline restore (blind_restore.py, written from Protocol.md §5.8,
# hpsync.proto and README.md only) reads a real blind host's folder in packs (protocol version 6)
# with nothing but the recovery key, and must end up with exactly what `hp-sync list --json
# --deleted` and `hp-sync image get` report on the trusted nodes; then it must refuse exactly
# what §5.8.7 says a reader refuses when the host's files are altered.
#
# Usage: Tests/Interop/run-blind-restore.sh [PATH-TO-hp-sync]   (default: $HP_SYNC_BIN, else hp-sync)
# Prints ok:/FAIL: lines, then PASS and exits 0, or FAIL and exits 1.
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1

HERE="$(cd "$(dirname "$0")" && pwd)"
RESTORE="$HERE/blind_restore.py"
CLIENT="$HERE/hpsync_client.py"
HPS="${1:-${HP_SYNC_BIN:-$(command -v hp-sync || true)}}"
if [[ -z "$HPS" || ! -x "$HPS" ]]; then
  echo "FAIL: no hp-sync binary (pass its path or set HP_SYNC_BIN)" >&2
  exit 2
fi
HPS="$(cd "$(dirname "$HPS")" && pwd)/$(basename "$HPS")"
python3 -c 'import cryptography' 2>/dev/null || { echo "FAIL: python3 needs the cryptography package" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/hpsync-blind-restore.XXXXXX")"
SERVE_PIDS=()
cleanup() {
  for pid in "${SERVE_PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  done
  if [[ -n "${KEEP_WORK:-}" ]]; then echo "work kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok:   $*"; }

H="$WORK/home"      # the trusted node that burns down
L="$WORK/laptop"    # a second trusted node (concurrent edits: joined states in the packs)
O="$WORK/offsite"   # the blind host
hs() { "$HPS" "$@" --store "$H"; }
ls_() { "$HPS" "$@" --store "$L"; }
os_() { "$HPS" "$@" --store "$O"; }

# serve STORE: start `hp-sync serve` on STORE, set PORT and SERVE_PID
serve() {
  local log="$WORK/serve.$RANDOM.log"
  "$HPS" serve --store "$1" --listen 127.0.0.1:0 2>"$log" &
  SERVE_PID=$!
  SERVE_PIDS+=("$SERVE_PID")
  PORT=""
  for _ in $(seq 200); do
    PORT=$(grep -o 'listen=127\.0\.0\.1:[0-9]*' "$log" 2>/dev/null | head -1 | cut -d: -f2 || true)
    [[ -n "$PORT" ]] && return 0
    kill -0 "$SERVE_PID" 2>/dev/null || { cat "$log"; echo "FAIL: serve exited"; exit 1; }
    sleep 0.05
  done
  echo "FAIL: serve did not say its port"; exit 1
}
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

jpeg() {  # jpeg FILE NBYTES: a JPEG signature followed by random bytes
  { printf '\xff\xd8\xff\xe0'; head -c "$2" /dev/urandom; } >"$1"
}

# --- stores ----------------------------------------------------------------------------------
hs init >/dev/null
os_ init --blind >/dev/null
os_ peer add home "$(hs id)" --allow read-write >/dev/null
serve "$O"; OFF_PID=$SERVE_PID
hs peer add offsite "$(os_ id)" --address "127.0.0.1:$PORT" --blind >/dev/null
KEY=$(hs key show | head -1)
[[ "$KEY" == hpk1-* ]] && ok "recovery key printed by 'hp-sync key show'" || fail "key show printed '$KEY'"

# snap NAME: a copy of the host's folder and what the trusted node home shows at that moment
snap() {
  cp -a "$O" "$WORK/snap-$1"
  hs list --json --deleted >"$WORK/snap-$1.list.json"
  mkdir -p "$WORK/snap-$1.images"
  python3 - "$WORK/snap-$1.list.json" <<'EOF' | while read -r k; do hs image get "$k" >"$WORK/snap-$1.images/$k"; done
import json, sys
for i in json.load(open(sys.argv[1])):
    if not i["deleted"] and i.get("image"):
        print(i["key"])
EOF
}

# restore NAME DIR [ARGS...]: run the independent reader on DIR into $WORK/r-NAME; sets RC
restore() {
  local name=$1 dir=$2; shift 2
  rm -rf "$WORK/r-$name"
  set +e
  python3 "$RESTORE" "$dir" --recovery-key "$KEY" --out "$WORK/r-$name" "$@" \
    >"$WORK/r-$name.out" 2>"$WORK/r-$name.err"
  RC=$?
  set -e
}

# compare LABEL RESTORED LIST.json IMAGES-DIR [EXCLUDED-KEYS,...]: the restore against hp-sync's view
compare() {
  python3 - "$1" "$2" "$3" "$4" "${5:-}" "$CLIENT" <<'EOF' || FAILS=$((FAILS + 1))
import hashlib, importlib.util, json, os, sys
label, restored, list_path, images, excluded, client_path = sys.argv[1:]
excluded = set(filter(None, excluded.split(",")))
spec = importlib.util.spec_from_file_location("c", client_path)
c = importlib.util.module_from_spec(spec); spec.loader.exec_module(c)
want = {i["key"]: i for i in json.load(open(list_path)) if i["key"] not in excluded}
got = {i["key"]: i for i in json.load(open(os.path.join(restored, "items.json")))}
bad = []
if set(want) != set(got):
    bad.append(f"key sets differ: only in hp-sync {sorted(set(want) - set(got))[:5]}, "
               f"only restored {sorted(set(got) - set(want))[:5]}")
photos = 0
for k in sorted(set(want) & set(got)):
    w, g = want[k], got[k]
    exp = {"stamp": w["stamp"], "origin": c.parse_node_id(w["origin"]).hex(), "deleted": w["deleted"]}
    have = {f: g[f] for f in exp}
    if not w["deleted"]:
        img = w.get("image")
        exp.update(name=w["name"], serial=w.get("serialNumber"), value=w["valueInDollars"],
                   date=w["dateCreatedMilliseconds"],
                   image=(img["sha256"], img["size"]) if img else None)
        gi = g["image"]
        have.update(name=g["name"], serial=g["serialNumber"], value=g["valueInDollars"],
                    date=g["dateCreatedMilliseconds"], image=(gi["sha256"], gi["size"]) if gi else None)
    if exp != have:
        bad.append(f"{k}: hp-sync {exp} != restored {have}")
    path = os.path.join(restored, "images", k)
    if not w["deleted"] and w.get("image"):
        ref = open(os.path.join(images, k), "rb").read()
        data = open(path, "rb").read() if os.path.exists(path) else None
        if data != ref:
            bad.append(f"{k}: photo bytes differ from 'hp-sync image get'")
        elif hashlib.sha256(data).hexdigest() != w["image"]["sha256"]:
            bad.append(f"{k}: photo sha256 differs")
        photos += 1
    elif os.path.exists(path):
        bad.append(f"{k}: restored a photo for an item without one")
for b in bad[:20]:
    print(f"FAIL: [{label}] {b}")
if bad:
    sys.exit(1)
live = sum(not i["deleted"] for i in want.values())
print(f"ok:   [{label}] {live} items, {len(want) - live} tombstones, {photos} photos identical to "
      f"hp-sync list --json --deleted / image get")
EOF
}

field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))" "$1" "$2"; }

# check_snap NAME: restore snapshot NAME, expect success and hp-sync's view of that moment
check_snap() {
  restore "$1" "$WORK/snap-$1"
  if [[ $RC -ne 0 ]]; then fail "[$1] restore exited $RC: $(cat "$WORK/r-$1.err")"; return; fi
  local rep="$WORK/r-$1/report.json"
  echo "      [$1] epoch $(field "$rep" epoch), $(field "$rep" packs_opened)/$(field "$rep" packs_named) packs, $(field "$rep" records) records (per pack $(field "$rep" pack_records); with fields bytes $(field "$rep" records_with_fields), with conflicts $(field "$rep" records_with_conflicts), tombstones $(field "$rep" tombstone_records)), head open: $(field "$rep" head_open)"
  compare "$1" "$WORK/r-$1" "$WORK/snap-$1.list.json" "$WORK/snap-$1.images"
}

# --- 1: first push -----------------------------------------------------------------------------
jpeg "$WORK/small.jpg" 1000
jpeg "$WORK/big.jpg" 200000      # 4 chunks of 64 KiB sealed
jpeg "$WORK/gone.jpg" 500
jpeg "$WORK/later.jpg" 3000
jpeg "$WORK/huge.jpg" 1500000    # 23 chunks
K_SOFA=$(hs add --name "Sofa" --serial SF-2231 --value 1200 --image "$WORK/small.jpg" --created 2024-05-01T10:00:00Z)
K_PIANO=$(hs add --name "Piano" --value 9000 --image "$WORK/big.jpg")
K_COPY=$(hs add --name "Piano photo copy" --image "$WORK/big.jpg")   # same photo as the piano
K_UNI=$(hs add --name "Ünïcödé ✓ 📦" --serial "" --value=-5 --created 1960-01-01)
K_PLAIN=$(hs add --name "No serial, no image")
K_GONE=$(hs add --name "To be deleted" --image "$WORK/gone.jpg")
K_LAMP=$(hs add --name "Lamp" --value 40)
K_MAX=$(hs add --name "Max value" --value 2147483647 --serial "$(printf 'S%.0s' $(seq 256))")
K_MIN=$(hs add --name "$(printf 'n%.0s' $(seq 1024))" --value=-2147483648)
hs push offsite >/dev/null
snap p1
check_snap p1

# --- 2: edits, deletions, photo changes -------------------------------------------------------------
hs edit "$K_LAMP" --name "Lamp (brass)" >/dev/null
hs edit "$K_LAMP" --value 45 >/dev/null
hs edit "$K_LAMP" --name "Lamp (brass, rewired)" --serial L-1 >/dev/null
hs rm "$K_GONE" "$K_PLAIN" >/dev/null
hs image set "$K_UNI" "$WORK/later.jpg" >/dev/null
hs image rm "$K_COPY" >/dev/null
hs edit "$K_SOFA" --clear-serial >/dev/null
K_NEW=$(hs add --name "New chair" --image "$WORK/small.jpg")    # a photo the host holds already
hs push offsite >/dev/null
snap p2
check_snap p2

# --- 3: 1500 items through import: one push, several packs ----------------------------------------
python3 - "$WORK/bulk.json" "$(hs id)" <<'EOF'
import json, sys, uuid
path, origin = sys.argv[1], sys.argv[2]
items = [{"key": str(uuid.uuid4()).upper(), "name": f"bulk {i}", "valueInDollars": i,
          "dateCreated": "2024-05-01T10:00:00.000Z", "dateCreatedMilliseconds": 1714557600000,
          "stamp": (1714557600000 << 16) + i, "origin": origin, "deleted": False}
         for i in range(1500)]
json.dump({"format": "hp-sync-export", "version": 1, "nodeID": origin, "items": items},
          open(path, "w"))
EOF
hs import "$WORK/bulk.json" >/dev/null
hs push offsite >/dev/null
snap p3
check_snap p3

# --- 4: more edits, a deleted bulk item, a photo of 23 chunks -----------------------------------------
hs edit "$K_LAMP" --value 50 >/dev/null
K_BULK=$(python3 -c 'import json,sys; print(next(i["key"] for i in json.load(sys.stdin) if i.get("name") == "bulk 7"))' < <(hs list --json))
hs rm "$K_BULK" >/dev/null
K_HUGE=$(hs add --name "Painting" --value 25000 --image "$WORK/huge.jpg")
hs push offsite >/dev/null
snap p4
check_snap p4

# --- 5: a second trusted node restores through hp-sync itself, then both edit concurrently ---------
ls_ init --recovery-key "$KEY" >/dev/null
os_ peer add laptop "$(ls_ id)" --allow read-write >/dev/null
ls_ peer add offsite "$(os_ id)" --address "127.0.0.1:$PORT" --blind >/dev/null
ls_ pull offsite >/dev/null
ls_ list --json --deleted >"$WORK/laptop-p4.list.json"
python3 - "$WORK/laptop-p4.list.json" "$WORK/snap-p4.list.json" <<'EOF' && ok "hp-sync's own restore (laptop) shows what home shows" || fail "hp-sync's own restore differs from home"
import json, sys
a, b = (sorted(json.load(open(p)), key=lambda i: i["key"]) for p in sys.argv[1:])
sys.exit(0 if a == b else 1)
EOF
hs edit "$K_SOFA" --name "Sofa (re-covered)" >/dev/null      # home: the name
ls_ edit "$K_SOFA" --value 1300 >/dev/null                     # laptop: the value (both survive)
hs edit "$K_LAMP" --name "Lamp H" >/dev/null                   # both: the name (a clash)
ls_ edit "$K_LAMP" --name "Lamp L" >/dev/null
ls_ rm "$K_PIANO" >/dev/null                                   # laptop deletes
ls_ sync offsite >/dev/null
hs sync offsite >/dev/null || true
ls_ sync offsite >/dev/null || true
hs list --json --deleted >"$WORK/home-final.json"
ls_ list --json --deleted >"$WORK/laptop-final.json"
python3 - "$WORK/home-final.json" "$WORK/laptop-final.json" <<'EOF' && ok "home and laptop converged through the blind host" || fail "home and laptop differ after syncs"
import json, sys
a, b = (sorted(json.load(open(p)), key=lambda i: i["key"]) for p in sys.argv[1:])
sys.exit(0 if a == b else 1)
EOF
snap p5
check_snap p5
hs conflicts --json >"$WORK/conflicts.json"
python3 - "$WORK/conflicts.json" "$WORK/r-p5/items.json" "$CLIENT" <<'EOF' && ok "restored open conflicts match 'hp-sync conflicts --json'" || fail "restored conflicts differ"
import importlib.util, json, sys, datetime
spec = importlib.util.spec_from_file_location("c", sys.argv[3]); c = importlib.util.module_from_spec(spec); spec.loader.exec_module(c)
names = {"name": "name", "serial": "serialNumber", "value": "valueInDollars", "date": "dateCreated", "photo": "image"}
def ms(iso):
    return int(datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
want = sorted((x["key"], x["field"], x["losing"]["value"], c.parse_node_id(x["losing"]["node"]).hex(),
               ms(x["losing"]["at"])) for x in json.load(open(sys.argv[1])))
got = sorted((i["key"], names[x["field"]], x["value"], x["origin"], x["stamp"] >> 16)
             for i in json.load(open(sys.argv[2])) for x in i.get("conflicts", []))
print(f"      hp-sync conflicts: {want}\n      restored:          {got}")
sys.exit(0 if want == got and got else 1)
EOF
python3 - "$WORK/r-p5/items.json" "$H/trash" <<'EOF' && ok "photos the tombstones keep (§5.9) match home's trash copies" || fail "tombstones' kept photos differ"
import json, os, sys
items, trash = json.load(open(sys.argv[1])), sys.argv[2]
kept = [i["keptImage"]["sha256"] for i in items if i["deleted"] and i.get("keptImage")]
restored = os.path.join(os.path.dirname(sys.argv[1]), "kept")
bad = [s for s in kept if open(os.path.join(restored, s), "rb").read() != open(os.path.join(trash, s), "rb").read()]
print(f"      {len(kept)} tombstones keep a photo; {len(kept) - len(bad)} restored byte for byte")
sys.exit(0 if kept and not bad else 1)
EOF

EPOCHS=$(for s in p1 p2 p3 p4 p5; do field "$WORK/r-$s/report.json" epoch; done | tr '\n' ' ')
PACKS=$(field "$WORK/r-p5/report.json" packs_named)
PHOTOS=$(ls "$O/sealed" | wc -l)
echo "      heads read at epochs: $EPOCHS; final head names $PACKS packs; host holds $PHOTOS sealed photos"
[[ $PACKS -ge 4 ]] && ok "several packs ($PACKS)" || fail "only $PACKS packs"

stop "$OFF_PID"

# --- negative checks, each on a copy of the final host folder ---------------------------------------
FINAL="$WORK/snap-p5"
PACK_IDS=($(python3 - "$FINAL" "$KEY" "$RESTORE" <<'EOF'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("r", sys.argv[3]); r = importlib.util.module_from_spec(spec); spec.loader.exec_module(r)
keys = r.Keys(r.parse_recovery_key(sys.argv[2]))
sid, _, epoch, sealed = r.read_host(sys.argv[1], None)
for pid, _ in r.open_head(keys, sid, epoch, sealed)["packs"]:
    print(pid.hex())
EOF
))
NAMED=${#PACK_IDS[@]}
# copy NAME: a fresh copy of the final host folder
copy() { rm -rf "$WORK/neg-$1"; cp -a "$FINAL" "$WORK/neg-$1"; echo "$WORK/neg-$1"; }
flip() {  # flip FILE OFFSET
  python3 -c "import sys; p, o = sys.argv[1], int(sys.argv[2]); d = bytearray(open(p, 'rb').read()); d[o if o >= 0 else len(d) + o] ^= 0x5A; open(p, 'wb').write(d)" "$1" "$2"
}
refused_only() {  # refused_only NAME WHAT-PREFIX: exactly one refusal, naming WHAT-PREFIX
  python3 - "$WORK/r-$1/report.json" "$2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
ok = len(r["refused"]) == 1 and r["refused"][0].startswith(sys.argv[2])
print(f"      refused: {r['refused']}")
sys.exit(0 if ok else 1)
EOF
}

# (a) one byte of a pack flipped: that pack refused whole, every other pack read
P=${PACK_IDS[1]}
D=$(copy packflip); SZ=$(stat -c %s "$D/packs/$P"); flip "$D/packs/$P" $((SZ / 2))
restore packflip "$D"
if [[ $RC -eq 81 ]] && refused_only packflip "pack ${P:0:16}" && [[ $(field "$WORK/r-packflip/report.json" packs_opened) -eq $((NAMED - 1)) ]]; then
  ok "a flipped byte in pack ${P:0:16}: that pack refused, the other $((NAMED - 1)) read (exit 81)"
else fail "flipped pack: exit $RC, $(cat "$WORK/r-packflip.err")"; fi

# (b) the same on the last byte (the last chunk's tag), on the format byte, and a truncated pack
for what in tag format truncate missing swap; do
  D=$(copy "pack-$what")
  case $what in
    tag) flip "$D/packs/$P" -1 ;;
    format) flip "$D/packs/$P" 0 ;;
    truncate) truncate -s -1 "$D/packs/$P" ;;
    missing) rm "$D/packs/$P" ;;
    swap) cp "$D/packs/${PACK_IDS[0]}" "$D/packs/$P" ;;   # another pack's bytes under this ID
  esac
  restore "pack-$what" "$D"
  if [[ $RC -eq 81 ]] && refused_only "pack-$what" "pack ${P:0:16}" >/dev/null; then
    ok "pack $what: refused that pack only (exit 81): $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["refused"][0])' "$WORK/r-pack-$what/report.json")"
  else fail "pack $what: exit $RC, $(cat "$WORK/r-pack-$what.out" "$WORK/r-pack-$what.err")"; fi
done

# (b2) a byte of the first chunk of a pack of 1,024 records (2 chunks): the whole pack refused
BIG=${PACK_IDS[2]}
D=$(copy bigpackflip); flip "$D/packs/$BIG" 100
restore bigpackflip "$D"
if [[ $RC -eq 81 ]] && refused_only bigpackflip "pack ${BIG:0:16}: chunk 1 of" \
   && [[ $(field "$WORK/r-bigpackflip/report.json" records) -eq $(( $(field "$WORK/r-p5/report.json" records) - 1024 )) ]]; then
  ok "a flipped byte in the first of a pack's chunks: all 1,024 records of it refused, no chunk used"
else fail "big pack flip: exit $RC $(cat "$WORK/r-bigpackflip.out")"; fi

# (c) one byte of a photo flipped: that photo refused, the items naming it held back, the rest intact
PHOTO_KEY=$K_HUGE
PHOTO_SHA=$(python3 -c 'import json,sys; print(next(i["image"]["sha256"] for i in json.load(open(sys.argv[1])) if i["key"] == sys.argv[2]))' "$WORK/snap-p5.list.json" "$PHOTO_KEY")
PHOTO_ID=$(python3 - "$KEY" "$PHOTO_SHA" "$RESTORE" <<'EOF'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("r", sys.argv[3]); r = importlib.util.module_from_spec(spec); spec.loader.exec_module(r)
print(r.Keys(r.parse_recovery_key(sys.argv[1])).photo_id_of(bytes.fromhex(sys.argv[2])).hex())
EOF
)
D=$(copy photoflip); flip "$D/sealed/$PHOTO_ID" 70000
restore photoflip "$D"
if [[ $RC -eq 81 ]] && refused_only photoflip "photo ${PHOTO_ID:0:16}" \
   && [[ $(field "$WORK/r-photoflip/report.json" held_back) == "['$PHOTO_KEY']" ]]; then
  ok "a flipped byte in photo ${PHOTO_ID:0:16}: refused, its item held back (exit 81)"
  compare "photoflip: the rest" "$WORK/r-photoflip" "$WORK/snap-p5.list.json" "$WORK/snap-p5.images" "$PHOTO_KEY"
else fail "flipped photo: exit $RC, $(cat "$WORK/r-photoflip.out" "$WORK/r-photoflip.err")"; fi

# (c2) the photo of an item whose older version (an earlier pack) had none: that older version lands
photo_id_of() {  # photo_id_of KEY: the photo ID of KEY's photo in the final list
  python3 - "$KEY" "$RESTORE" "$WORK/snap-p5.list.json" "$1" <<'EOF'
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("r", sys.argv[2]); r = importlib.util.module_from_spec(spec); spec.loader.exec_module(r)
sha = next(i["image"]["sha256"] for i in json.load(open(sys.argv[3])) if i["key"] == sys.argv[4])
print(r.Keys(r.parse_recovery_key(sys.argv[1])).photo_id_of(bytes.fromhex(sha)).hex())
EOF
}
UNI_PHOTO=$(photo_id_of "$K_UNI")
D=$(copy photoflip2); flip "$D/sealed/$UNI_PHOTO" 40
restore photoflip2 "$D"
if [[ $RC -eq 81 ]] && refused_only photoflip2 "photo ${UNI_PHOTO:0:16}" \
   && [[ $(field "$WORK/r-photoflip2/report.json" held_back) == "['$K_UNI']" ]] \
   && python3 -c 'import json,sys; i = {x["key"]: x for x in json.load(open(sys.argv[1]))}[sys.argv[2]]; sys.exit(0 if i["image"] is None and i["valueInDollars"] == -5 else 1)' "$WORK/r-photoflip2/items.json" "$K_UNI"; then
  ok "the photo of a later version refused: that record held back, the version before it (no photo) kept"
else fail "photo flip 2: exit $RC $(cat "$WORK/r-photoflip2.out")"; fi

# (d) a photo swapped for another (sealed under another photo ID): refused by its AEAD
OTHER=$(ls "$FINAL/sealed" | grep -v "$PHOTO_ID" | head -1)
D=$(copy photoswap); cp "$D/sealed/$OTHER" "$D/sealed/$PHOTO_ID"
restore photoswap "$D"
[[ $RC -eq 81 ]] && refused_only photoswap "photo ${PHOTO_ID:0:16}" >/dev/null \
  && ok "photo swapped for another: refused (exit 81)" || fail "photo swap: exit $RC $(cat "$WORK/r-photoswap.err")"

# (e) the head: altered, a wrong key, a typo in the key, a rollback
D=$(copy headflip)
python3 - "$D/store.sqlite" <<'EOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); s = bytearray(c.execute("SELECT sealed FROM blindHead").fetchone()[0])
s[20] ^= 1; c.execute("UPDATE blindHead SET sealed = ?", (bytes(s),)); c.commit(); c.close()
EOF
restore headflip "$D"
[[ $RC -eq 2 ]] && grep -q "head failed authentication" "$WORK/r-headflip.err" \
  && ok "altered head: nothing restored (exit 2)" || fail "altered head: exit $RC $(cat "$WORK/r-headflip.err")"
"$HPS" init --store "$WORK/other" >/dev/null; OTHER_KEY=$("$HPS" key show --store "$WORK/other" | head -1)
rm -rf "$WORK/r-wrongkey"
set +e; python3 "$RESTORE" "$FINAL" --recovery-key "$OTHER_KEY" --out "$WORK/r-wrongkey" 2>"$WORK/r-wrongkey.err" >/dev/null; RC=$?; set -e
[[ $RC -eq 2 ]] && ok "another inventory's recovery key: the head does not open (exit 2)" || fail "wrong key: exit $RC"
TYPO=$(python3 -c 'import sys; k = sys.argv[1]; print(k[:7] + ("x" if k[7] != "x" else "y") + k[8:])' "$KEY")
set +e; python3 "$RESTORE" "$FINAL" --recovery-key "$TYPO" --out "$WORK/r-typo" 2>"$WORK/r-typo.err" >/dev/null; RC=$?; set -e
[[ $RC -eq 2 ]] && grep -q checksum "$WORK/r-typo.err" && ok "a typo in the recovery key: checksum refused (exit 2)" \
  || fail "typo: exit $RC $(cat "$WORK/r-typo.err")"
if "$HPS" init --recovery-key "$TYPO" --store "$WORK/typo-node" >/dev/null 2>&1; then
  fail "hp-sync accepted the recovery key with a typo"; else ok "hp-sync refuses the same typo"; fi
LAST=$(field "$WORK/r-p5/report.json" epoch)
restore rollback "$WORK/snap-p1" --min-epoch "$LAST"
[[ $RC -eq 2 ]] && grep -q rollback "$WORK/r-rollback.err" \
  && ok "an older copy of the host (epoch $(field "$WORK/r-p1/report.json" epoch) < $LAST seen): refused" \
  || fail "rollback: exit $RC"

# (f) what a reader must NOT refuse: a pack file the head does not name (a cut push leaves one)
D=$(copy extra); cp "$D/packs/$P" "$D/packs/$(python3 -c 'import os; print(os.urandom(32).hex())')"
restore extra "$D"
[[ $RC -eq 0 && $(field "$WORK/r-extra/report.json" packs_not_named) == 1 ]] \
  && ok "a pack the head does not name is ignored, not refused" || fail "extra pack: exit $RC"

# (g0) an open head (a push under way), sealed here with the key: read like a finished one (§5.8.7)
D=$(copy openhead)
python3 - "$D" "$KEY" "$RESTORE" <<'EOF'
import importlib.util, os, sqlite3, struct, sys
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
spec = importlib.util.spec_from_file_location("r", sys.argv[3]); r = importlib.util.module_from_spec(spec); spec.loader.exec_module(r)
keys = r.Keys(r.parse_recovery_key(sys.argv[2]))
sid, _, epoch, sealed = r.read_host(sys.argv[1], None)
aead = ChaCha20Poly1305(keys.head)
plain = bytearray(aead.decrypt(sealed[:12], sealed[12:], r.HEAD_AD + sid + struct.pack(">Q", epoch)))
assert plain[0] == 2 and plain[9] == 0
plain[9] = 1  # open
e2 = epoch + 1
plain[1:9] = struct.pack(">Q", e2)
nonce = os.urandom(12)
new = nonce + aead.encrypt(nonce, bytes(plain), r.HEAD_AD + sid + struct.pack(">Q", e2))
c = sqlite3.connect(os.path.join(sys.argv[1], "store.sqlite"))
c.execute("UPDATE blindHead SET epoch = ?, sealed = ? WHERE one = 1", (e2, new)); c.commit(); c.close()
EOF
restore openhead "$D"
[[ $RC -eq 0 && $(field "$WORK/r-openhead/report.json" head_open) == True ]] \
  && compare "open head" "$WORK/r-openhead" "$WORK/snap-p5.list.json" "$WORK/snap-p5.images" \
  || fail "open head: exit $RC $(cat "$WORK/r-openhead.err")"

# (g) hp-sync's own reader on the tampered copies: it must land what ours lands
binary_restore() {  # binary_restore NAME DIR [EXIT]: a fresh node pulls from `serve DIR`; compare with r-NAME
  local n="$WORK/node-$1" rc
  "$HPS" init --recovery-key "$KEY" --store "$n" >/dev/null
  "$HPS" peer add fresh "$("$HPS" id --store "$n")" --allow read --store "$2" >/dev/null
  serve "$2"
  "$HPS" peer add offsite "$("$HPS" id --store "$2")" --address "127.0.0.1:$PORT" --blind --store "$n" >/dev/null
  set +e; "$HPS" pull offsite --store "$n" >"$WORK/node-$1.out" 2>"$WORK/node-$1.err"; rc=$?; set -e
  stop "$SERVE_PID"
  "$HPS" list --json --deleted --store "$n" >"$WORK/node-$1.list.json"
  mkdir -p "$WORK/node-$1.images"
  python3 -c 'import json,sys; [print(i["key"]) for i in json.load(open(sys.argv[1])) if not i["deleted"] and i.get("image")]' \
    "$WORK/node-$1.list.json" | while read -r k; do "$HPS" image get "$k" --store "$n" >"$WORK/node-$1.images/$k"; done
  local want=${3:-81}
  [[ $rc -eq $want ]] && ok "[$1] hp-sync's own pull exits $want too" || fail "[$1] hp-sync's pull exited $rc, not $want: $(cat "$WORK/node-$1.err")"
  compare "$1: ours vs hp-sync's pull" "$WORK/r-$1" "$WORK/node-$1.list.json" "$WORK/node-$1.images"
}
binary_restore packflip "$WORK/neg-packflip"
binary_restore photoflip "$WORK/neg-photoflip"
binary_restore bigpackflip "$WORK/neg-bigpackflip"
binary_restore photoflip2 "$WORK/neg-photoflip2"
binary_restore openhead "$WORK/neg-openhead" 0

if [[ $FAILS -eq 0 ]]; then
  echo "PASS: the independent blind restore reads $("$HPS" --version 2>/dev/null | head -1 || echo hp-sync)'s packs"
  exit 0
fi
echo "FAIL: $FAILS check(s) failed"
exit 1
