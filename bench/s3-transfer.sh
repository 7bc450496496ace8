#!/usr/bin/env bash
# Large transfers through lading's S3 resource driver against the same transfer straight to the
# store (not a test): one lading node on its embedded catalog (SQLite) with its bytes in the
# Swift S3 server CI runs (.ci/services/swift.sh); a BIG_MIB file of random bytes uploaded and
# downloaded through lading's HTTP API, and the same file sent straight to Swift with
# @aws-sdk/lib-storage (8 MiB parts, 4 in flight) and fetched back with one GetObject, the two
# paths alternated round by round so both see the same background load. Prints each round's
# seconds, the medians, their ratio (direct time / lading time: 1.00 is lading as fast as the
# store's own rate), and the CPU seconds lading, Swift and the client spent per round.
# Talks only to 127.0.0.1; the bearer token goes through the environment, never argv.
#
# BASE_ROOT=<another checkout with its node_modules> adds a second lading node run from there
# (e.g. main, for a before/after table), alternated with the others round by round.
#
# PIN=1 gives Swift (its servers and memcached) the last core and everything else (lading, the
# client) the others, as a deployment has the store on machines of its own: the ratio then says
# whether the node keeps up with the store, not how the two share this machine's cores.
#
# Usage: bench/s3-transfer.sh   (env: BIG_MIB=1024 ROUNDS=3 BASE_ROOT= PIN=)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
# shellcheck source=/dev/null
source "$ROOT/.ci/services/swift.sh" >/dev/null
# NOTE: the machine's cores, also once re-run under taskset (where nproc counts only those left to it).
CORES=${S3_TRANSFER_CORES:-$(nproc)}
SHARED="All share $CORES cores: lading, Swift (proxy and object server, one worker each), memcached and the client."
if [ -n "${PIN:-}" ] && [ -z "${S3_TRANSFER_PINNED:-}" ]; then
  need taskset util-linux
  [ "$CORES" -ge 2 ] || { echo "bench: PIN=1 needs at least 2 cores" >&2; exit 1; }
  for pid in $(pgrep -f "${LADING_SWIFT_DIR:-/tmp/lading-swift}/" || true) $(pgrep -f "memcached .*-p $((LADING_SWIFT_PORT + 10))\b" || true); do
    taskset -a -cp $((CORES - 1)) "$pid" >/dev/null
  done
  S3_TRANSFER_CORES=$CORES S3_TRANSFER_PINNED="Swift and memcached on core $((CORES - 1)); lading and the client on the other $((CORES - 1)) (0-$((CORES - 2)))." \
    exec taskset -c "0-$((CORES - 2))" bash "$0" "$@"
fi
[ -n "${S3_TRANSFER_PINNED:-}" ] && SHARED=$S3_TRANSFER_PINNED
BIG_MIB=${BIG_MIB:-1024}
ROUNDS=${ROUNDS:-3}
TAG="lading-s3-transfer-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')/"

export LADING_RESOURCE_DRIVER=s3 LADING_RESOURCE_S3_ENDPOINT="$LADING_TEST_S3_ENDPOINT" LADING_RESOURCE_S3_BUCKET="$LADING_TEST_S3_BUCKET"
export LADING_RESOURCE_S3_REGION="$LADING_TEST_S3_REGION" LADING_RESOURCE_S3_PREFIX="$TAG"
export LADING_RESOURCE_S3_ACCESS_KEY_ID="$LADING_TEST_S3_ACCESS_KEY" LADING_RESOURCE_S3_SECRET_ACCESS_KEY="$LADING_TEST_S3_SECRET_KEY"
export LADING_LOG_LEVEL=warn
declare -A URL TOKEN PID
start_node() { # name root: a node on a fresh data directory with user bench
  local name=$1 root=$2 port data="$WORK/data-$1" answer
  port=$(free_port)
  # NOTE: swift.sh's own variables are no configuration of lading's, which would warn of them.
  env -u LADING_SWIFT_DIR -u LADING_SWIFT_PORT "$root/bin/lading" init --data "$data" >/dev/null
  printf 'pw\n' | env -u LADING_SWIFT_DIR -u LADING_SWIFT_PORT "$root/bin/lading" user add bench --data "$data" >/dev/null
  env -u LADING_SWIFT_DIR -u LADING_SWIFT_PORT "$root/bin/lading" serve --data "$data" --listen "127.0.0.1:$port" > "$WORK/$name.log" 2>&1 &
  PID[$name]=$!
  PIDS+=("$!")
  wait_http "http://127.0.0.1:$port/"
  answer=$(curl -sf -X POST "http://127.0.0.1:$port/auth/login" --data-binary 'username=bench&password=pw')
  TOKEN[$name]=$(sed -n 's/.*"token":"\([^"]*\)".*/\1/p' <<<"$answer")
  URL[$name]="http://127.0.0.1:$port/api/registered/$ZONE/home/bench/big.bin"
}
PATHS=(lading direct)
start_node lading "$ROOT"
if [ -n "${BASE_ROOT:-}" ]; then
  start_node base "$BASE_ROOT"
  PATHS=(base lading direct)
fi

# CPU clock ticks of every Swift server process (their command lines name its directory).
swift_ticks() {
  local total=0 pid
  for pid in $(pgrep -f "${LADING_SWIFT_DIR:-/tmp/lading-swift}/" || true); do
    total=$((total + $(cpu_ticks "$pid" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
field() { sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" <<<"$1"; }
secs() { awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }'; }

echo "lading on S3 vs S3 direct, $(date -u '+%Y-%m-%d %H:%M UTC'), $CORES cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
head -c $((BIG_MIB * 1024 * 1024)) /dev/urandom > "$WORK/big"
declare -A T CPU
for r in $(seq "$ROUNDS"); do
  for path in "${PATHS[@]}"; do
    node=${PID[$path]:-${PID[lading]}}
    l0=$(cpu_ticks "$node"); s0=$(swift_ticks)
    if [ "$path" = direct ]; then
      out=$("$NODE" --disable-warning=ExperimentalWarning "$BENCH_DIR/scale-out-client.ts" s3-big "${TAG}direct-big.bin" "$WORK/big")
    else
      out=$(BENCH_TOKEN=${TOKEN[$path]} "$NODE" --disable-warning=ExperimentalWarning "$BENCH_DIR/scale-out-client.ts" lading-big "${URL[$path]}" "$WORK/big")
    fi
    l1=$(cpu_ticks "$node"); s1=$(swift_ticks)
    T[$path,up]+=" $(field "$out" upload)"; T[$path,down]+=" $(field "$out" download)"
    client=$(awk -v a="$(field "$out" uploadCpuMs)" -v b="$(field "$out" downloadCpuMs)" 'BEGIN { printf "%.1f", (a + b) / 1000 }')
    CPU[$path]+=" $(secs $((l1 - l0)))/$(secs $((s1 - s0)))/$client"
  done
done

med() { tr ' ' '\n' | sed '/^$/d' | median; }
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "${BIG_MIB} MiB; seconds of each round; ratio = median direct time / median time (1.00: as fast as the store's own rate)"
for dir in up down; do
  dm=$(med <<<"${T[direct,$dir]}")
  for path in "${PATHS[@]}"; do
    m=$(med <<<"${T[$path,$dir]}")
    printf '%-5s %-7s %-26s %6.2fx  %4.0f MB/s\n' "$dir" "$path" "${T[$path,$dir]# }" "$(awk -v l="$m" -v d="$dm" 'BEGIN { print d / l }')" \
      "$(awk -v l="$m" -v b=$((BIG_MIB * 1024 * 1024)) 'BEGIN { print b / l / 1e6 }')"
  done
done
echo
echo "CPU seconds per round (upload + download), node/Swift/client (direct: the node idles):"
for path in "${PATHS[@]}"; do printf '  %-7s %s\n' "$path" "${CPU[$path]# }"; done
echo "$SHARED"

# Leaves nothing in the bucket: the lading object's blobs and anything else under the prefix.
"$NODE" --disable-warning=ExperimentalWarning "$BENCH_DIR/s3-clear.ts" "$TAG" || true
