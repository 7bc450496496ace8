#!/usr/bin/env bash
# Two commits of lading side by side under the metadata GET (or, with LOAD=put, under uploads
# of new data objects), to see whether a change to the request path helps: both servers run at
# once (each on its own data directory, the same object), and wrk loads them in turn in many
# short bursts, A then B, then B then A, so that the machine's slow and fast moments fall on
# both alike. Prints each pair's CPU per request, then the medians, the median of the pairs'
# ratios and a sign test (in how many pairs B used less CPU, and how likely that split is if the
# commits cost the same).
# `bench/ab.sh HEAD HEAD` is the control: how far two identical servers drift here.
#
# Usage: bench/ab.sh <commit A> <commit B>   (env: PAIRS=30 SECONDS_EACH=2 CONNECTIONS=16
#                                            LOAD=get; LOAD=put: PUTs of PUT_BYTES=15 bytes
#                                            to new names in a collection, CONNECTIONS=8)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
need wrk wrk
need git git
[ $# -eq 2 ] || { echo "usage: bench/ab.sh <commit A> <commit B>" >&2; exit 2; }

PAIRS=${PAIRS:-30}
SECONDS_EACH=${SECONDS_EACH:-2}
LOAD=${LOAD:-get}
PUT_BYTES=${PUT_BYTES:-15}
case $LOAD in
  get) CONNECTIONS=${CONNECTIONS:-16} ;;
  put) CONNECTIONS=${CONNECTIONS:-8} ;;
  *) echo "bench: LOAD is get or put, not '$LOAD'" >&2; exit 2 ;;
esac

declare -A COMMIT PID URL LUA BASE TOKEN
COMMIT[A]=$(git -C "$ROOT" rev-parse --verify --short "$1^{commit}")
COMMIT[B]=$(git -C "$ROOT" rev-parse --verify --short "$2^{commit}")
echo "lading A/B, $([ "$LOAD" = put ] && echo "PUT of $PUT_BYTES bytes" || echo 'metadata GET'): A ${COMMIT[A]}, B ${COMMIT[B]}; $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"

head -c 4096 /dev/urandom > "$WORK/meta.bin"
printf 'username=bench&password=pw' > "$WORK/login-form"
printf '{"path":"/%s/home/bench/dir"}' "$ZONE" > "$WORK/mkdir.json"

start_side() { # A|B: that commit's tree from git (node_modules shared), served with one object
  local side=$1 tree="$WORK/tree-$1" data="$WORK/data-$1" port answer token
  mkdir -p "$tree"
  git -C "$ROOT" archive "${COMMIT[$side]}" | tar -x -C "$tree"
  ln -s "$ROOT/node_modules" "$tree/node_modules"
  "$tree/bin/lading" init --data "$data" >/dev/null
  printf 'pw\n' | "$tree/bin/lading" user add bench --data "$data" >/dev/null
  port=$(free_port)
  "$tree/bin/lading" serve --data "$data" --listen "127.0.0.1:$port" > "$WORK/lading-$side.log" 2>&1 &
  PID[$side]=$!
  PIDS+=("${PID[$side]}")
  wait_http "http://127.0.0.1:$port/"
  answer=$(curl -sf -X POST "http://127.0.0.1:$port/auth/login" -d @"$WORK/login-form")
  token=$(printf '%s' "$answer" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
  [ -n "$token" ] || { echo "bench: login to $side failed: $answer" >&2; exit 1; }
  URL[$side]="http://127.0.0.1:$port/api/registered/$ZONE/home/bench/meta.bin"
  # NOTE: each side's token reaches wrk in its own script file, never in argv.
  LUA[$side]="$WORK/auth-$side.lua"
  printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$token" > "${LUA[$side]}"
  printf 'Authorization: Bearer %s\n' "$token" > "$WORK/auth-header-$side"
  curl -sf -o /dev/null -T "$WORK/meta.bin" -H 'Content-Type: application/octet-stream' -H @"$WORK/auth-header-$side" "${URL[$side]}"
  BASE[$side]="http://127.0.0.1:$port"
  TOKEN[$side]=$token
  curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H @"$WORK/auth-header-$side" --data-binary @"$WORK/mkdir.json" "${BASE[$side]}/api/registered"
}
put_lua "$WORK/put.lua"
start_side A
start_side B

burst() { # A|B seconds name -> "req/s µs-of-CPU-per-request" (name: the burst's own, for new PUT names)
  if [ "$LOAD" = put ]; then
    PUT_BYTES=$PUT_BYTES PUT_TOKEN=${TOKEN[$1]} PUT_PREFIX="/api/registered/$ZONE/home/bench/dir" PUT_RUN="$3" \
      wrk_cpu "${PID[$1]}" "$2" "${BASE[$1]}" -s "$WORK/put.lua"
  else
    wrk_cpu "${PID[$1]}" "$2" "${URL[$1]}" -s "${LUA[$1]}"
  fi
}

burst A 3 w >/dev/null; burst B 3 w >/dev/null # warm-up (JIT, caches)
printf '%5s %10s %10s %10s %10s\n' pair 'A req/s' 'A µs/req' 'B req/s' 'B µs/req'
: > "$WORK/pairs"
for i in $(seq "$PAIRS"); do
  if (( i % 2 )); then a=$(burst A "$SECONDS_EACH" "$i"); b=$(burst B "$SECONDS_EACH" "$i")
  else b=$(burst B "$SECONDS_EACH" "$i"); a=$(burst A "$SECONDS_EACH" "$i"); fi
  read -r ar au <<<"$a"; read -r br bu <<<"$b"
  printf '%5d %10s %10s %10s %10s\n' "$i" "$ar" "$au" "$br" "$bu"
  echo "$ar $au $br $bu" >> "$WORK/pairs"
done

echo
awk '{ print $2 }' "$WORK/pairs" | median > "$WORK/ma"
awk '{ print $4 }' "$WORK/pairs" | median > "$WORK/mb"
awk '{ print $4 / $2 }' "$WORK/pairs" | median > "$WORK/ratio"
awk -v ma="$(cat "$WORK/ma")" -v mb="$(cat "$WORK/mb")" -v ratio="$(cat "$WORK/ratio")" -v a="${COMMIT[A]}" -v b="${COMMIT[B]}" '
  { n++; if ($4 < $2) less++; else if ($4 > $2) more++ }
  END {
    m = less + more; k = less < more ? less : more
    # Two-sided sign test over the pairs that differ: P(a split at least this uneven | no difference).
    c = 1; tail = 0
    for (i = 0; i <= k; i++) { tail += c; c = c * (m - i) / (i + 1) }
    p = m > 0 ? 2 * tail / 2 ^ m : 1; if (p > 1) p = 1
    printf "CPU per request, median: A (%s) %.1f µs, B (%s) %.1f µs; median of the pairs B ÷ A: %.3f\n", a, ma, b, mb, ratio
    printf "B used less CPU in %d of %d pairs (more in %d); sign test p = %.3g\n", less, n, more, p
  }' "$WORK/pairs"
