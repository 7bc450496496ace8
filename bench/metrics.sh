#!/usr/bin/env bash
# What the metrics cost: requests per second of the metadata GET (bench/run.sh's first row) on
# two nodes of the same build, one with metrics.listen set and one without, loaded in turn
# (off, on, on, off, …) so both see the same background load, and the server's CPU time per
# request (user + system, all threads), which a busy machine disturbs less than the rate; then
# a scrape of the node with metrics, to show it counted what it served. Talks only to
# 127.0.0.1 and cleans up after itself.
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
declare -A URL TOKEN PID
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
  PID[$variant]=$LADING_PID
done
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)
cat > "$BASE/get.lua" <<'LUA'
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
LUA
load() { # variant seconds -> "req/s cpu-µs-per-request" (fails on errors or non-2xx answers)
  local out before after
  before=$(ticks "${PID[$1]}")
  out=$(BENCH_TOKEN=${TOKEN[$1]} wrk -t1 -c"$CONNECTIONS" -d"$2s" -s "$BASE/get.lua" "${URL[$1]}")
  after=$(ticks "${PID[$1]}")
  grep -q 'Non-2xx\|Socket errors' <<<"$out" && { echo "$out" >&2; echo "bench: wrk $1 had errors" >&2; exit 1; }
  awk -v t="$((after - before))" -v hz="$TICK" '/^Requests\/sec:/ { rps = $2 } / requests in / { n = $1 } END { printf "%s %.1f\n", rps, t / hz * 1e6 / n }' <<<"$out"
}
load off "$WARMUP" >/dev/null
load on "$WARMUP" >/dev/null
: > "$BASE/rps"
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then order="off on"; else order="on off"; fi
  for v in $order; do
    read -r x cpu <<<"$(load "$v" "$DURATION")"
    echo "$v $x $cpu" >> "$BASE/rps"
    printf 'round %d: metrics %s %s req/s, %s µs CPU each\n' "$r" "$v" "$x" "$cpu" >&2
  done
done
median() { # variant column
  awk -v v="$1" -v c="$2" '$1 == v { print $c }' "$BASE/rps" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
row() { # label column
  local off on
  off=$(median off "$2")
  on=$(median on "$2")
  printf '| %s | %s | %s | %.3f |\n' "$1" "$off" "$on" "$(awk -v a="$on" -v b="$off" 'BEGIN { print a / b }')"
}
printf '\nMedians of %d rounds of %d s (wrk -t1 -c%d):\n\n| metadata GET | metrics off | metrics on | on ÷ off |\n|---|---|---|---|\n' "$ROUNDS" "$DURATION" "$CONNECTIONS"
row 'requests/s' 2
row 'server CPU µs per request' 3
curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" > "$BASE/scrape"
counted=$(awk '/^lading_http_requests_total\{.*method="GET".*status="200"/ { n += $2 } END { print n + 0 }' "$BASE/scrape")
operations=$(awk '/^lading_catalog_operation_duration_seconds_count/ { n += $2 } END { print n + 0 }' "$BASE/scrape")
echo "GET answers with status 200 the node with metrics counted: $counted; catalog operations it timed: $operations"
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
