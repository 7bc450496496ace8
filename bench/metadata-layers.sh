#!/usr/bin/env bash
# What each layer under lading's metadata GET costs: nginx serving the answer as a static file,
# a bare node:http server answering the same bytes, Fastify answering them through a route with
# a response schema, the same with one pino line per request (bench/layers.mjs), and lading's
# own GET with its bearer token. Prints req/s and CPU time per request (the server's user and
# system time from /proc, all its threads) for each, as the medians of interleaved rounds, and
# the CPU each layer adds to the one below it (node → fastify → fastify-log → lading). Talks
# only to 127.0.0.1 and cleans up after itself.
#
# Usage: bench/metadata-layers.sh   (env: ROUNDS=5 DURATION=5 CONNECTIONS=16)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
need wrk wrk

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-16}

echo "lading metadata layers, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"

start_nginx
start_lading

# One small data object; its metadata answer, byte for byte, is every peer's answer.
head -c 4096 /dev/urandom > "$WORK/meta.bin"
curl -sf -o /dev/null -T "$WORK/meta.bin" -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/meta.bin"
curl -sf -o "$WORK/nginx-root/meta.json" -H @"$AUTH_HEADER" "$HOME_URL/meta.bin"

declare -A URL PID
# NOTE: nginx's master process only waits; its one worker answers.
URL[nginx]="$NGINX/meta.json"; PID[nginx]=$(pgrep -P "$NGINX_PID" | head -n 1)
[ -n "${PID[nginx]}" ] || { echo "bench: nginx's worker process was not found" >&2; exit 1; }
URL[lading]="$HOME_URL/meta.bin"; PID[lading]=$LADING_PID
for layer in node fastify fastify-log; do
  port=$(free_port)
  "$NODE" "$BENCH_DIR/layers.mjs" "$layer" "$WORK/nginx-root/meta.json" "$port" > "$WORK/$layer.log" 2>&1 &
  PID[$layer]=$!
  PIDS+=("${PID[$layer]}")
  URL[$layer]="http://127.0.0.1:$port/api/registered/$ZONE/home/bench/meta.bin"
  wait_http "${URL[$layer]}"
done
LAYERS=(nginx node fastify fastify-log lading)

# The token reaches wrk through the environment, not argv; the peers ignore it.
cat > "$WORK/auth.lua" <<'EOF'
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
EOF

load() { # layer seconds -> "req/s µs-of-CPU-per-request"
  wrk_cpu "${PID[$1]}" "$2" "${URL[$1]}" -s "$WORK/auth.lua"
}

: > "$WORK/results"
for layer in "${LAYERS[@]}"; do load "$layer" 2 >/dev/null; done # warm-up (JIT, caches)
for r in $(seq "$ROUNDS"); do
  # NOTE: the order turns each round, so no layer always runs first after another's load.
  for i in "${!LAYERS[@]}"; do
    layer=${LAYERS[$(( (i + r) % ${#LAYERS[@]} ))]}
    out=$(load "$layer" "$DURATION")
    read -r rps us <<<"$out"
    echo "$layer $rps $us" >> "$WORK/results"
  done
  printf 'round %d of %d done\n' "$r" "$ROUNDS" >&2
done

echo
printf '%-13s %10s %12s %10s %16s\n' layer 'req/s' 'CPU µs/req' '÷ nginx' 'CPU added'
printf -- '-%.0s' {1..65}; echo
prev=
for layer in "${LAYERS[@]}"; do
  rps=$(awk -v l="$layer" '$1 == l { print $2 }' "$WORK/results" | median)
  us=$(awk -v l="$layer" '$1 == l { print $3 }' "$WORK/results" | median)
  [ "$layer" = nginx ] && n_rps=$rps
  over=$([ -n "$prev" ] && awk -v a="$us" -v b="$prev" 'BEGIN { printf "%+.1f µs", a - b }' || echo '')
  printf '%-13s %10.0f %12.1f %10.2f %16s\n' "$layer" "$rps" "$us" "$(awk -v a="$rps" -v b="$n_rps" 'BEGIN { print a / b }')" "$over"
  [ "$layer" = nginx ] || prev=$us # nginx is a peer, not a layer under node
done
echo
echo "(medians of $ROUNDS interleaved rounds of ${DURATION}s, wrk -t1 -c$CONNECTIONS; lading's metadata answer, $(stat -c %s "$WORK/nginx-root/meta.json") bytes of JSON)"
