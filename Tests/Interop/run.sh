#!/usr/bin/env bash
# Interop test: an independent Python client (hpsync_client.py, written from Protocol.md and
# hpsync.proto only) pulls from a real `hp-sync serve` and must end up with exactly what
# `hp-sync list --json --deleted` and `hp-sync image get` report.
#
# Usage: Tests/Interop/run.sh [PATH-TO-hp-sync]   (default: $HP_SYNC_BIN, else hp-sync on PATH)
# Prints PASS and exits 0, or prints FAIL lines and exits 1.
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1

HERE="$(cd "$(dirname "$0")" && pwd)"
CLIENT="$HERE/hpsync_client.py"
HPS="${1:-${HP_SYNC_BIN:-$(command -v hp-sync || true)}}"
if [[ -z "$HPS" || ! -x "$HPS" ]]; then
  echo "FAIL: no hp-sync binary (pass its path or set HP_SYNC_BIN)" >&2
  exit 2
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/hpsync-interop.XXXXXX")"
SERVE_PID=""
cleanup() {
  if [[ -n "$SERVE_PID" ]] && kill -0 "$SERVE_PID" 2>/dev/null; then
    kill "$SERVE_PID" 2>/dev/null || true
    wait "$SERVE_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok:   $*"; }

S="$WORK/server"
OUT="$WORK/pulled"
hs() { "$HPS" "$@" --store "$S"; }

# --- server store and content ----------------------------------------------------------------
"$HPS" init --store "$S" >/dev/null

jpeg() {  # jpeg FILE NBYTES: a JPEG signature followed by random bytes
  { printf '\xff\xd8\xff\xe0'; head -c "$2" /dev/urandom; } >"$1"
}
jpeg "$WORK/small.jpg" 1000
jpeg "$WORK/big.jpg" 2500000   # > 1 MiB: several IMAGE_CHUNK frames
jpeg "$WORK/gone.jpg" 500
jpeg "$WORK/later.jpg" 3000

K_SOFA=$(hs add --name "Sofa" --serial SF-2231 --value 1200 --image "$WORK/small.jpg" --created 2024-05-01T10:00:00Z)
K_BIG=$(hs add --name "Piano" --value 9000 --image "$WORK/big.jpg")
K_BIG2=$(hs add --name "Piano photo copy" --image "$WORK/big.jpg")   # same digest as K_BIG
K_UNI=$(hs add --name "Ünïcödé ✓ 📦" --serial "" --value=-5 --created 1960-01-01)
K_PLAIN=$(hs add --name "No serial, no image")
K_GONE=$(hs add --name "To be deleted" --image "$WORK/gone.jpg")
K_EDIT=$(hs add --name "Lamp" --value 40)
hs rm "$K_GONE" >/dev/null
hs edit "$K_EDIT" --name "Lamp (brass)" --value 45 >/dev/null

# 1500 more items through import, so that the pull spans several manifest pages
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

# --- node IDs ---------------------------------------------------------------------------------
SERVER_ID=$(hs id)
PY_SERVER_ID=$(python3 "$CLIENT" node-id "$S/identity/cert.pem")
if [[ "$PY_SERVER_ID" == "$SERVER_ID" ]]; then
  ok "node ID of the server's cert.pem matches 'hp-sync id' ($SERVER_ID)"
else
  fail "node ID: python says $PY_SERVER_ID, hp-sync id says $SERVER_ID"
fi

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
  -subj /CN=pyclient -keyout "$WORK/client.key" -out "$WORK/client.pem" 2>/dev/null
CLIENT_ID=$(python3 "$CLIENT" node-id "$WORK/client.pem")
hs peer add pyclient "$CLIENT_ID" >/dev/null
ok "client node ID $CLIENT_ID accepted by 'hp-sync peer add'"

# --- serve --------------------------------------------------------------------------------------
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$HPS" serve --store "$S" --listen "127.0.0.1:$PORT" 2>"$WORK/serve.log" &
SERVE_PID=$!
for _ in $(seq 100); do
  if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $PORT), 0.2)" 2>/dev/null; then
    break
  fi
  kill -0 "$SERVE_PID" 2>/dev/null || { cat "$WORK/serve.log"; echo "FAIL: serve exited"; exit 1; }
  sleep 0.05
done

pull() {
  python3 "$CLIENT" pull --host 127.0.0.1 --port "$PORT" --cert "$WORK/client.pem" \
    --key "$WORK/client.key" --server-id "$SERVER_ID" --out "$OUT" --timeout 20
}

# compare LABEL: the pulled directory against hp-sync's own view of the server store
compare() {
  hs list --json --deleted >"$WORK/list.json"
  python3 - "$1" "$WORK/list.json" "$OUT" "$CLIENT" "$HPS" "$S" <<'EOF' || FAILS=$((FAILS + 1))
import hashlib, importlib.util, json, os, subprocess, sys
label, list_path, out, client_path, hps, store = sys.argv[1:]
spec = importlib.util.spec_from_file_location("c", client_path)
c = importlib.util.module_from_spec(spec); spec.loader.exec_module(c)
want = {i["key"]: i for i in json.load(open(list_path))}
got = json.load(open(os.path.join(out, "items.json")))
bad = []
if set(want) != set(got):
    bad.append(f"key sets differ: only on server {sorted(set(want) - set(got))[:5]}, "
               f"only pulled {sorted(set(got) - set(want))[:5]}")
images = 0
for k in sorted(set(want) & set(got)):
    w, g = want[k], got[k]
    exp = {"key": k, "stamp": w["stamp"], "origin": c.parse_node_id(w["origin"]).hex(),
           "deleted": w["deleted"]}
    have = {f: g[f] for f in exp}
    if not w["deleted"]:
        exp.update(name=w["name"], serial=w.get("serialNumber"), value=w["valueInDollars"],
                   date_ms=w["dateCreatedMilliseconds"],
                   image_sha256=(w.get("image") or {}).get("sha256"),
                   image_size=(w.get("image") or {}).get("size", 0))
        have.update({f: g[f] for f in exp if f not in have})
    if exp != have:
        bad.append(f"{k}: server {exp} != pulled {have}")
    path = os.path.join(out, "images", k)
    if not w["deleted"] and w.get("image"):
        ref = subprocess.run([hps, "image", "get", k, "--store", store], check=True,
                             capture_output=True).stdout
        data = open(path, "rb").read() if os.path.exists(path) else None
        if data != ref:
            bad.append(f"{k}: image bytes differ from 'hp-sync image get'")
        elif hashlib.sha256(data).hexdigest() != w["image"]["sha256"]:
            bad.append(f"{k}: image sha256 differs")
        images += 1
    elif os.path.exists(path):
        bad.append(f"{k}: pulled an image file for an item without image")
for b in bad[:20]:
    print(f"FAIL: [{label}] {b}")
if bad:
    sys.exit(1)
print(f"ok:   [{label}] {len(want)} items ({sum(i['deleted'] for i in want.values())} tombstones) "
      f"and {images} images identical to hp-sync list/image get")
EOF
}

field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, d))" "$1" "$2"; }

# 1: full pull from nothing
R1=$(pull) || { fail "first pull failed"; cat "$WORK/serve.log"; exit 1; }
echo "      pull 1: $R1"
[[ $(field "$R1" pages) -ge 2 ]] && ok "pull 1 spanned $(field "$R1" pages) manifest pages" \
  || fail "pull 1 used only one page"
[[ $(field "$R1" "counts['images']") == 2 ]] && ok "pull 1 fetched 2 distinct images for 3 items with images" \
  || fail "pull 1 fetched $(field "$R1" "counts['images']") images, expected 2 (one digest is shared)"
compare "pull 1"

# 2: incremental pull after edits, a delete, an image change and a new item
hs edit "$K_SOFA" --name "Sofa (re-covered)" --clear-serial >/dev/null
hs rm "$K_PLAIN" >/dev/null
hs image set "$K_UNI" "$WORK/later.jpg" >/dev/null
hs image rm "$K_BIG2" >/dev/null
K_NEW=$(hs add --name "New chair" --image "$WORK/small.jpg")
R2=$(pull) || { fail "second pull failed"; cat "$WORK/serve.log"; exit 1; }
echo "      pull 2: $R2"
[[ $(field "$R2" since) == $(field "$R1" through_seq) ]] && ok "pull 2 resumed from checkpoint $(field "$R2" since)" \
  || fail "pull 2 did not resume from pull 1's checkpoint"
[[ $(field "$R2" "counts['entries']") == 5 ]] && ok "pull 2 saw exactly the 5 changed keys" \
  || fail "pull 2 saw $(field "$R2" "counts['entries']") entries, expected 5"
[[ $(field "$R2" "counts['images']") == 1 ]] && ok "pull 2 fetched only the one new digest" \
  || fail "pull 2 fetched $(field "$R2" "counts['images']") images, expected 1 (the chair's image was already here)"
compare "pull 2"

# 3: nothing new
R3=$(pull) || { fail "third pull failed"; exit 1; }
[[ $(field "$R3" "counts['entries']") == 0 && $(field "$R3" pages) == 1 ]] \
  && ok "pull 3 (nothing new): one empty final page" || fail "pull 3 was not a no-op: $R3"

# 4: version 3, images by digest (§5.7): a lost image comes back; one the server lost is missing
K_HEAL=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(next(k for k, v in sorted(d.items()) if v["image_sha256"] and not v["deleted"]))' "$OUT/items.json")
K_GONE=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); live=[v["image_sha256"] for v in d.values() if v["image_sha256"] and not v["deleted"]]; print([k for k, v in sorted(d.items()) if v["image_sha256"] and not v["deleted"] and live.count(v["image_sha256"]) == 1 and v["image_sha256"] != d[sys.argv[2]]["image_sha256"]][0])' "$OUT/items.json" "$K_HEAL")
EXPECTED=$(sha256sum "$OUT/images/$K_HEAL" | cut -d' ' -f1)
rm "$OUT/images/$K_HEAL"
mv "$S/images/$K_GONE" "$WORK/gone.jpg"
R4=$(python3 "$CLIENT" heal --host 127.0.0.1 --port "$PORT" --cert "$WORK/client.pem" \
  --key "$WORK/client.key" --server-id "$SERVER_ID" --out "$OUT" --timeout 20 "$K_HEAL" "$K_GONE") \
  || { fail "heal failed"; cat "$WORK/serve.log"; exit 1; }
echo "      heal: $R4"
[[ $(field "$R4" healed) == "['$K_HEAL']" && $(sha256sum "$OUT/images/$K_HEAL" | cut -d' ' -f1) == "$EXPECTED" ]] \
  && ok "heal (version 3) fetched the lost image by digest, verified" || fail "heal did not restore $K_HEAL: $R4"
[[ $(field "$R4" missing) == "['$K_GONE']" ]] && ok "heal: an image the server lost is answered missing" \
  || fail "heal: expected $K_GONE missing: $R4"
mv "$WORK/gone.jpg" "$S/images/$K_GONE"

if grep -qE 'session failed|session refused' "$WORK/serve.log"; then
  fail "server logged a failed session:"; grep -E 'session failed|session refused' "$WORK/serve.log"
fi

if [[ $FAILS -eq 0 ]]; then
  echo "PASS: the Python client interoperates with $("$HPS" --version 2>/dev/null | head -1 || echo hp-sync)"
  exit 0
fi
echo "FAIL: $FAILS check(s) failed"
exit 1
