#!/usr/bin/env bash
# Metadata benchmark: requests per second of lading's metadata GET
# (/api/registered/<zone>/home/bench/<file>, bearer token) next to nginx serving a static JSON
# file of the same bytes; then the listing of a collection of 10,000 data objects (creation
# rate, median time of GET <dir>/, response size). Load comes from wrk, interleaved
# (lading, nginx, …). Talks only to 127.0.0.1 and cleans up after itself.
#
# Usage: bench/metadata.sh   (env: ROUNDS=3 DURATION=10 WARMUP=5 CONNECTIONS=16 OBJECTS=10000
#                             CONCURRENCY=8; any LADING_<KEY>, e.g. LADING_LOG_LEVEL=warn)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
need wrk wrk

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-5}
CONNECTIONS=${CONNECTIONS:-16}
OBJECTS=${OBJECTS:-10000}
CONCURRENCY=${CONCURRENCY:-8}

echo "lading metadata benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, work dir $WORK"
env | grep '^LADING_' | sed 's/^/  /' || true

start_nginx
start_lading

# One small data object; its metadata answer, byte for byte, is nginx's static peer.
head -c 4096 /dev/urandom > "$WORK/meta.bin"
curl -sf -o /dev/null -T "$WORK/meta.bin" -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/meta.bin"
curl -sf -o "$WORK/nginx-root/meta.json" -H @"$AUTH_HEADER" "$HOME_URL/meta.bin"
META_BYTES=$(stat -c %s "$WORK/nginx-root/meta.json")

# The token reaches wrk through the environment, not argv.
cat > "$WORK/auth.lua" <<'EOF'
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
EOF

load() { # name url [wrk args…] -> req/s (fails on errors or non-2xx answers)
  local name=$1 url=$2 out
  shift 2
  out=$(wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "$@" "$url")
  if grep -q 'Non-2xx\|Socket errors' <<<"$out"; then
    echo "bench: $name had errors:" >&2; echo "$out" >&2; exit 1
  fi
  awk '/^Requests\/sec:/ { print $2 }' <<<"$out"
}

: > "$WORK/rps"
# Warm-up (JIT, caches): untimed. NOTE: lading answers at half its pace for its first ~3 s
# under load, while V8 compiles its request path (bench/README.md).
DURATION=$WARMUP load lading "$HOME_URL/meta.bin" -s "$WORK/auth.lua" >/dev/null
DURATION=$WARMUP load nginx "$NGINX/meta.json" >/dev/null
for r in $(seq "$ROUNDS"); do
  l=$(load lading "$HOME_URL/meta.bin" -s "$WORK/auth.lua")
  n=$(load nginx "$NGINX/meta.json")
  echo "lading $l" >> "$WORK/rps"
  echo "nginx $n" >> "$WORK/rps"
  printf 'round %d: lading %s req/s, nginx %s req/s\n' "$r" "$l" "$n" >&2
done
L_RPS=$(awk '$1 == "lading" { print $2 }' "$WORK/rps" | median)
N_RPS=$(awk '$1 == "nginx" { print $2 }' "$WORK/rps" | median)

# A collection of $OBJECTS data objects, created through the API.
printf '{"path":"/%s/home/bench/dir"}' "$ZONE" > "$WORK/mkdir.json"
curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H @"$AUTH_HEADER" \
  --data-binary @"$WORK/mkdir.json" "$LADING/api/registered"
read -r created create_secs < <("$NODE" --disable-warning=ExperimentalWarning "$BENCH_DIR/create-objects.ts" \
  "$HOME_URL/dir" "$OBJECTS" "$CONCURRENCY")
: > "$WORK/list-times"
for r in 0 1 2 3 4 5; do
  out=$(curl -s -o "$WORK/listing.json" -w '%{http_code} %{time_total} %{size_download}' -H @"$AUTH_HEADER" "$HOME_URL/dir/")
  read -r code secs bytes <<<"$out"
  [ "$code" = 200 ] || { echo "bench: listing answered $code" >&2; exit 1; }
  [ "$r" = 0 ] || echo "$secs" >> "$WORK/list-times" # the first is a warm-up
done
entries=$(grep -o '"object_type"' "$WORK/listing.json" | wc -l)
[ "$entries" = "$OBJECTS" ] || { echo "bench: the listing has $entries entries, expected $OBJECTS" >&2; exit 1; }
LIST_SECS=$(median < "$WORK/list-times")

echo
printf '%-40s %14s %14s %7s\n' 'metadata GET' 'lading req/s' 'nginx req/s' ratio
printf '%s\n' '-------------------------------------------------------------------------------'
awk -v l="$L_RPS" -v n="$N_RPS" -v b="$META_BYTES" -v r="$ROUNDS" -v d="$DURATION" -v c="$CONNECTIONS" 'BEGIN {
  printf "%-40s %14.0f %14.0f %7.2f\n", sprintf("%d B JSON, %d conns, median of %d x %ds", b, c, r, d), l, n, l / n
}'
echo
printf 'listing of %d data objects:\n' "$OBJECTS"
awk -v n="$created" -v s="$create_secs" -v c="$CONCURRENCY" 'BEGIN { printf "  created in %.1f s through the API (%d in flight): %.0f objects/s\n", s, c, n / s }'
awk -v s="$LIST_SECS" -v b="$bytes" 'BEGIN { printf "  GET dir/: median %.3f s of 5, response %.1f MiB (%d bytes)\n", s, b / 1048576, b }'
