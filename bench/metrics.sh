#!/usr/bin/env bash
# What the metrics cost: requests per second of the metadata GET (bench/run.sh's first row) on
# two nodes of the same build, one with metrics.listen set and one without, loaded in turn
# (off, on, on, off, …) so both see the same background load; then a scrape of the first, to
# show it counted what it served. Talks only to 127.0.0.1 and cleans up after itself.
#
# Usage: bench/metrics.sh   (env: ROUNDS=6 DURATION=5 WARMUP=5 CONNECTIONS=16)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
need wrk wrk

ROUNDS=${ROUNDS:-6}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-5}
CONNECTIONS=${CONNECTIONS:-16}

echo "lading metrics cost, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
BASE=$WORK
declare -A URL TOKEN
for variant in off on; do
  mkdir -p "$BASE/$variant"
  if [ "$variant" = on ]; then
    METRICS_PORT=$(free_port)
    export LADING_METRICS_LISTEN="127.0.0.1:$METRICS_PORT"
  fi
  WORK="$BASE/$variant" start_lading
  unset LADING_METRICS_LISTEN
  head -c 4096 /dev/urandom > "$BASE/meta.bin"
  curl -sf -o /dev/null -T "$BASE/meta.bin" -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/meta.bin"
  URL[$variant]="$HOME_URL/meta.bin"
  TOKEN[$variant]=$BENCH_TOKEN
done
cat > "$BASE/get.lua" <<'LUA'
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
LUA
load() { # variant seconds -> req/s (fails on errors or non-2xx answers)
  local out
  out=$(BENCH_TOKEN=${TOKEN[$1]} wrk -t1 -c"$CONNECTIONS" -d"$2s" -s "$BASE/get.lua" "${URL[$1]}")
  grep -q 'Non-2xx\|Socket errors' <<<"$out" && { echo "$out" >&2; echo "bench: wrk $1 had errors" >&2; exit 1; }
  awk '/^Requests\/sec:/ { print $2 }' <<<"$out"
}
load off "$WARMUP" >/dev/null
load on "$WARMUP" >/dev/null
: > "$BASE/rps"
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then order="off on"; else order="on off"; fi
  for v in $order; do
    x=$(load "$v" "$DURATION")
    echo "$v $x" >> "$BASE/rps"
    printf 'round %d: metrics %s %s req/s\n' "$r" "$v" "$x" >&2
  done
done
median() { awk -v v="$1" '$1 == v { print $2 }' "$BASE/rps" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
off=$(median off)
on=$(median on)
printf '\n| metadata GET req/s (median of %d rounds of %d s, wrk -c%d) | metrics off | metrics on | on ÷ off |\n|---|---|---|---|\n| | %s | %s | %.3f |\n' \
  "$ROUNDS" "$DURATION" "$CONNECTIONS" "$off" "$on" "$(awk -v a="$on" -v b="$off" 'BEGIN { print a / b }')"
counted=$(curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" | awk '/^lading_http_requests_total\{.*method="GET".*status="200"/ { n += $2 } END { print n + 0 }')
echo "GET answers with status 200 the node with metrics counted: $counted"
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
