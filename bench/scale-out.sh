#!/usr/bin/env bash
# Scale-out benchmark (not a test): lading nodes on one PostgreSQL catalog and one S3 store
# (Swift), behind nginx round-robin.
#  1. uploads/s (64 KiB bodies, 16 in flight, bench/scale-out-client.ts) and metadata GETs/s
#     (wrk, 2 threads, 32 connections) through nginx with 1, 2 and 3 nodes, side by side;
#  2. one 1 GiB upload and download through one lading node (S3 driver) against the same
#     transfer straight to the S3 endpoint with @aws-sdk/lib-storage at lading's part size and
#     queue; prints the ratio (lading's overhead).
# Uses `.ci/services/postgres.sh` and `.ci/services/swift.sh` (which start or reuse the
# servers), a fresh schema and S3 key prefix, and cleans all of it up on exit. Talks only to
# 127.0.0.1. The bearer token goes through the environment, never argv.
#
# Usage: bench/scale-out.sh   (env: ROUNDS=3 SECONDS_PER_RUN=10 BIG_MIB=1024 BIG_ROUNDS=2)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
NODE="$ROOT/node_modules/node/bin/node"
[ -x "$NODE" ] || NODE=node
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
BIG_MIB=${BIG_MIB:-1024}
BIG_ROUNDS=${BIG_ROUNDS:-2}
ROUNDS=${ROUNDS:-3}
ZONE=bench
for tool in nginx wrk curl psql; do
  command -v "$tool" >/dev/null 2>&1 || { echo "scale-out: '$tool' is missing (Debian packages nginx wrk curl postgresql-client)" >&2; exit 1; }
done
# shellcheck source=/dev/null
source .ci/services/postgres.sh >/dev/null
# shellcheck source=/dev/null
source .ci/services/swift.sh >/dev/null

WORK=$(mktemp -d /tmp/lading-scale-out.XXXXXX)
TAG="lading_bench_$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
PIDS=()
NGINX_PID=""
cleanup() {
  set +e
  [ -n "$NGINX_PID" ] && kill -QUIT "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
  psql "$LADING_TEST_PG_URL" -qc "DROP SCHEMA IF EXISTS \"$TAG\" CASCADE" >/dev/null 2>&1
  "$NODE" --disable-warning=ExperimentalWarning "$ROOT/bench/s3-clear.ts" "$TAG/" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export LADING_ZONE=$ZONE LADING_LOG_LEVEL=warn
export LADING_CATALOG_DRIVER=postgres LADING_CATALOG_URL="$LADING_TEST_PG_URL" LADING_CATALOG_SCHEMA="$TAG"
export LADING_RESOURCE_DRIVER=s3 LADING_RESOURCE_S3_ENDPOINT="$LADING_TEST_S3_ENDPOINT" LADING_RESOURCE_S3_BUCKET="$LADING_TEST_S3_BUCKET"
export LADING_RESOURCE_S3_REGION="$LADING_TEST_S3_REGION" LADING_RESOURCE_S3_PREFIX="$TAG/"
export LADING_RESOURCE_S3_ACCESS_KEY_ID="$LADING_TEST_S3_ACCESS_KEY" LADING_RESOURCE_S3_SECRET_ACCESS_KEY="$LADING_TEST_S3_SECRET_KEY"
export LADING_TRUST_PROXY=true

free_port() { "$NODE" -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
wait_http() { for _ in $(seq 300); do curl -s -o /dev/null --max-time 1 "$1" && return 0; sleep 0.1; done; echo "scale-out: nothing answers at $1" >&2; exit 1; }

NODE_URLS=()
start_node() { # index
  local i=$1 data="$WORK/node$1" port
  port=$(free_port)
  if [ "$i" -gt 1 ]; then
    # NOTE: every node needs the CA and master key node 1 created; nothing else is shared locally.
    mkdir -p -m 700 "$data"
    cp -a "$WORK/node1/ca" "$WORK/node1/keys" "$data/"
  fi
  # NOTE: swift.sh's own variables are no configuration of lading's, which would warn of them.
  env -u LADING_SWIFT_DIR -u LADING_SWIFT_PORT "$ROOT/bin/lading" serve --data "$data" --listen "127.0.0.1:$port" >"$WORK/node$i.log" 2>&1 &
  PIDS+=($!)
  NODE_URLS+=("http://127.0.0.1:$port")
  wait_http "http://127.0.0.1:$port/api/status"
}

LB_PORT=$(free_port)
LB="http://127.0.0.1:$LB_PORT"
export LADING_PUBLIC_URL="$LB"
start_nginx() { # number of nodes
  local n=$1 servers="" u
  for u in "${NODE_URLS[@]:0:$n}"; do servers+="    server ${u#http://};"$'\n'; done
  mkdir -p "$WORK/nginx"
  cat >"$WORK/nginx/nginx.conf" <<EOF
$( [ "$(id -u)" = 0 ] && echo 'user root;' )
worker_processes 1;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  fastcgi_temp_path $WORK/nginx/fastcgi;
  uwsgi_temp_path $WORK/nginx/uwsgi;
  scgi_temp_path $WORK/nginx/scgi;
  upstream lading {
$servers    keepalive 64;
  }
  server {
    listen 127.0.0.1:$LB_PORT;
    client_max_body_size 0;
    location / {
      proxy_pass http://lading;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto \$scheme;
      proxy_request_buffering off;
      proxy_buffering off;
      proxy_next_upstream error timeout;
    }
  }
}
EOF
  nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/error.log" &
  NGINX_PID=$!
  wait_http "$LB/api/status"
}
stop_nginx() { kill -QUIT "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null || true; NGINX_PID=""; }

echo "lading scale-out benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'username=bench&password=pw' >"$WORK/login-form"
start_node 1
printf 'pw\n' | env -u LADING_SWIFT_DIR -u LADING_SWIFT_PORT "$ROOT/bin/lading" user add bench --data "$WORK/node1" >/dev/null
start_node 2
start_node 3

cat >"$WORK/wrk.lua" <<'EOF'
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
EOF

declare -A UPS GETS FAILS
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "n/a"; exit } if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for round in $(seq "$ROUNDS"); do
  # NOTE: 1, 2 and 3 nodes interleaved round by round, so all see the same background load.
  for n in 1 2 3; do
    start_nginx "$n"
    answer=$(curl -sf -X POST "$LB/auth/login" --data-binary @"$WORK/login-form")
    BENCH_TOKEN=$(printf '%s' "$answer" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
    export BENCH_TOKEN
    home="$LB/api/registered/$ZONE/home/bench"
    up=$("$NODE" --disable-warning=ExperimentalWarning bench/scale-out-client.ts uploads "$home" "$SECONDS_PER_RUN" 16 65536)
    UPS[$n]+=" $(sed -n 's/.*"perSecond":\([0-9.]*\).*/\1/p' <<<"$up")"
    FAILS[$n]=$(( ${FAILS[$n]:-0} + $(sed -n 's/.*"failed":\([0-9]*\).*/\1/p' <<<"$up") ))
    curl -sf -o /dev/null -X PUT -H @<(printf 'Authorization: Bearer %s\n' "$BENCH_TOKEN") -H 'Content-Type: application/octet-stream' \
      --data-binary 'metadata target' "$home/meta.txt?force=true"
    out=$(wrk -t2 -c32 -d"${SECONDS_PER_RUN}s" -s "$WORK/wrk.lua" "$home/meta.txt")
    GETS[$n]+=" $(printf '%s\n' "$out" | awk '/^Requests\/sec/ { print $2 }')"
    bad=$(printf '%s\n' "$out" | awk '/Non-2xx/ { print $NF }')
    FAILS[$n]=$(( ${FAILS[$n]} + ${bad:-0} ))
    stop_nginx
  done
done

echo
echo "Through nginx: median of $ROUNDS runs of ${SECONDS_PER_RUN} s (uploads: 64 KiB bodies, 16 in flight; GETs: wrk -t2 -c32, one object's metadata)"
printf '%-22s %10s %10s %10s    %s\n' "" "1 node" "2 nodes" "3 nodes" "(each run: 1 | 2 | 3 nodes)"
printf '%-22s %10s %10s %10s    %s\n' "uploads/s" "$(median <<<"${UPS[1]}")" "$(median <<<"${UPS[2]}")" "$(median <<<"${UPS[3]}")" "${UPS[1]# } |${UPS[2]} |${UPS[3]}"
printf '%-22s %10s %10s %10s    %s\n' "metadata GETs/s" "$(median <<<"${GETS[1]}")" "$(median <<<"${GETS[2]}")" "$(median <<<"${GETS[3]}")" "${GETS[1]# } |${GETS[2]} |${GETS[3]}"
printf '%-22s %10s %10s %10s\n' "failed requests" "${FAILS[1]}" "${FAILS[2]}" "${FAILS[3]}"

echo
echo "${BIG_MIB} MiB of random bytes, ${BIG_ROUNDS} rounds each, alternated: through lading node 1 (S3 driver, no nginx) vs straight to the S3 endpoint"
head -c $((BIG_MIB * 1024 * 1024)) /dev/urandom >"$WORK/big"
answer=$(curl -sf -X POST "${NODE_URLS[0]}/auth/login" --data-binary @"$WORK/login-form")
BENCH_TOKEN=$(printf '%s' "$answer" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
export BENCH_TOKEN
L_UP=(); L_DOWN=(); S_UP=(); S_DOWN=()
for r in $(seq "$BIG_ROUNDS"); do
  # NOTE: alternated, so both paths see the same background load.
  l=$("$NODE" --disable-warning=ExperimentalWarning bench/scale-out-client.ts lading-big "${NODE_URLS[0]}/api/registered/$ZONE/home/bench/big.bin" "$WORK/big")
  s=$("$NODE" --disable-warning=ExperimentalWarning bench/scale-out-client.ts s3-big "$TAG/direct-big.bin" "$WORK/big")
  L_UP+=("$(sed -n 's/.*"upload":\([0-9.]*\).*/\1/p' <<<"$l")"); L_DOWN+=("$(sed -n 's/.*"download":\([0-9.]*\).*/\1/p' <<<"$l")")
  S_UP+=("$(sed -n 's/.*"upload":\([0-9.]*\).*/\1/p' <<<"$s")"); S_DOWN+=("$(sed -n 's/.*"download":\([0-9.]*\).*/\1/p' <<<"$s")")
done
best() { printf '%s\n' "$@" | sort -g | head -n1; }
mbs() { awk -v b=$((BIG_MIB * 1024 * 1024)) -v s="$1" 'BEGIN { printf "%.0f", b / s / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf '%-12s %-28s %-28s %s\n' "" "lading (s, each round)" "S3 direct (s, each round)" "best lading/S3 time"
printf '%-12s %-28s %-28s %s\n' "upload" "${L_UP[*]}" "${S_UP[*]}" "$(ratio "$(best "${L_UP[@]}")" "$(best "${S_UP[@]}")") ($(mbs "$(best "${L_UP[@]}")") vs $(mbs "$(best "${S_UP[@]}")") MB/s)"
printf '%-12s %-28s %-28s %s\n' "download" "${L_DOWN[*]}" "${S_DOWN[*]}" "$(ratio "$(best "${L_DOWN[@]}")" "$(best "${S_DOWN[@]}")") ($(mbs "$(best "${L_DOWN[@]}")") vs $(mbs "$(best "${S_DOWN[@]}")") MB/s)"
echo
echo "All processes share $(nproc) cores: nodes, nginx, Swift, PostgreSQL and the load generators."
