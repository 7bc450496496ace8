#!/usr/bin/env bash
# A collection of OBJECTS (default 1,000,000) data objects, listed through the API: time to the
# first byte and to the last, the answer's size, and lading's RSS before and during the listing.
# The objects are written straight into a fresh SQLite catalog (creating a million through the
# API would take the better part of an hour and measure uploads, not listings); their bytes are
# never read by a listing. Then one page of 1,000 with max_keys, from the middle.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
need curl curl
OBJECTS=${OBJECTS:-1000000}

data="$WORK/lading-data"
"$ROOT/bin/lading" init --data "$data" >/dev/null
printf 'pw\n' | "$ROOT/bin/lading" user add bench --data "$data" >/dev/null
echo "writing $OBJECTS objects into the catalog of $data ..."
"$NODE" --disable-warning=ExperimentalWarning - "$data/catalog.sqlite" "$ZONE" "$OBJECTS" <<'JS'
const { DatabaseSync } = require('node:sqlite');
const { randomUUID } = require('node:crypto');
const [file, zone, count] = process.argv.slice(2);
const db = new DatabaseSync(file);
const parent = `/${zone}/home/bench/many`;
const now = Date.now();
db.exec('BEGIN');
db.prepare(`INSERT INTO entities (uid, path, parent, name, kind, owner, created_at, modified_at) VALUES (?, ?, ?, 'many', 'collection', 'bench', ?, ?)`)
  .run(randomUUID(), parent, `/${zone}/home/bench`, now, now);
const insert = db.prepare(`INSERT INTO entities (uid, path, parent, name, kind, owner, size, checksum, blob, created_at, modified_at)
  VALUES (?, ?, ?, ?, 'dataobject', 'bench', 4096, 'sha2:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=', ?, ?, ?)`);
for (let i = 0; i < Number(count); i++) {
  const name = `obs-${String(i).padStart(7, '0')}.nc`;
  insert.run(randomUUID(), `${parent}/${name}`, parent, name, randomUUID(), now, now);
}
db.exec('COMMIT');
db.close();
JS
LADING_PORT=$(free_port)
LADING_LOG_LEVEL=warn "$ROOT/bin/lading" serve --data "$data" --listen "127.0.0.1:$LADING_PORT" > "$WORK/lading.log" 2>&1 &
PIDS+=("$!")
LADING="http://127.0.0.1:$LADING_PORT"
wait_http "$LADING/"
server=$(pgrep -n -f "src/cli/main.ts serve --data $data") || { echo "bench: cannot find lading's process" >&2; exit 1; }
printf 'username=bench&password=pw' > "$WORK/login-form"
token=$(curl -sf -X POST "$LADING/auth/login" -d @"$WORK/login-form" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
printf 'Authorization: Bearer %s\n' "$token" > "$WORK/auth-header"
url="$LADING/api/registered/$ZONE/home/bench/many/"
curl -sf -H @"$WORK/auth-header" "${url}?max_keys=1" >/dev/null # warm: the session and its proxy
rss() { awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$server/status"; }
idle=$(rss)
peak=$idle
( while sleep 0.05; do rss; done ) > "$WORK/rss" &
sampler=$!
timing=$(curl -sf -H @"$WORK/auth-header" -o "$WORK/listing.json" -w '%{time_starttransfer} %{time_total} %{size_download}' "$url")
kill "$sampler"; wait "$sampler" 2>/dev/null || true
peak=$(sort -n "$WORK/rss" | tail -1)
read -r first total bytes <<<"$timing"
elements=$(tail -c 200 "$WORK/listing.json" | sed -n 's/.*"elements":\([0-9]*\).*/\1/p')
middle=$(printf 'obs-%07d.nc' $((OBJECTS / 2)) | base64 -w0 | tr '+/' '-_' | tr -d '=')
page=$(curl -sf -H @"$WORK/auth-header" -o /dev/null -w '%{time_total}' "${url}?max_keys=1000&continuation_token=$middle")
printf '\n| listing of %s data objects | value |\n|---|---|\n' "$OBJECTS"
printf '| entries answered (Meta.elements) | %s |\n' "$elements"
awk -v f="$first" -v t="$total" -v b="$bytes" 'BEGIN {
  printf "| first byte | %.0f ms |\n| whole answer | %.2f s (%.0f MB, %.0f MB/s, %.0f entries/s) |\n", f * 1000, t, b / 1e6, b / 1e6 / t, '"$OBJECTS"' / t }' 
printf '| lading RSS before / peak during | %s / %s MiB |\n' "$idle" "$peak"
awk -v p="$page" 'BEGIN { printf "| one page of 1,000 from the middle (max_keys, continuation_token) | %.0f ms |\n", p * 1000 }' 
