#!/usr/bin/env bash
# Two commits of lading side by side under the metadata GET (or, with LOAD=put, under uploads
# of new data objects), to see whether a change to the request path helps: both servers run at
# once (each on its own data directory, the same object), and wrk loads them in turn in many
# short bursts, A then B, then B then A, so that the machine's slow and fast moments fall on
# both alike. Every PAIRS_EACH pairs both servers are started again: one process can settle
# for its whole life a few per cent faster or slower than another of the same commit (where
# its code was optimised, where its memory lies), and two lone processes then look like two
# commits (bench/README.md). Prints each pair's CPU per request, then the medians, the median
# of the pairs' ratios with a sign test over the pairs, and each pair of processes' median
# ratio with a sign test over those: in how many B used less CPU, and how likely that split is
# if the commits cost the same. The second test is the one to trust.
# `bench/ab.sh HEAD HEAD` is the control: how far two identical servers drift here. ENV_A and
# ENV_B give one side's server settings of its own, e.g. what the metrics cost:
# `ENV_B=LADING_METRICS_LISTEN=127.0.0.1:0 bench/ab.sh HEAD HEAD`.
#
# Usage: bench/ab.sh <commit A> <commit B>   (env: PAIRS=30 PAIRS_EACH=3 SECONDS_EACH=2
#                                            WARMUP=5 CONNECTIONS=16 LOAD=get; LOAD=put: PUTs of
#                                            PUT_BYTES=15 bytes to new names in a collection,
#                                            CONNECTIONS=8; ENV_A, ENV_B: VAR=value … for one side)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
need wrk wrk
need git git
[ $# -eq 2 ] || { echo "usage: bench/ab.sh <commit A> <commit B>" >&2; exit 2; }

PAIRS=${PAIRS:-30}
PAIRS_EACH=${PAIRS_EACH:-3}
# NOTE: well under the reclaimer's 5 s of idleness before its settled collection, which each
# side waits through while the other is loaded (see the warm-up below).
SECONDS_EACH=${SECONDS_EACH:-2}
# NOTE: a started lading answers at half its pace for its first ~3 s under load, while V8
# compiles its request path. Seconds per side, taken in 1-s turns.
WARMUP=${WARMUP:-5}
if [ "${SECONDS_EACH%.*}" -ge 5 ]; then
  echo "bench: SECONDS_EACH must stay under 5: each side waits through the other's burst, and lading collects fully after 5 s idle" >&2
  exit 2
fi
LOAD=${LOAD:-get}
PUT_BYTES=${PUT_BYTES:-15}
case $LOAD in
  get) CONNECTIONS=${CONNECTIONS:-16} ;;
  put) CONNECTIONS=${CONNECTIONS:-8} ;;
  *) echo "bench: LOAD is get or put, not '$LOAD'" >&2; exit 2 ;;
esac

declare -A COMMIT PID URL LUA BASE TOKEN STORED
COMMIT[A]=$(git -C "$ROOT" rev-parse --verify --short "$1^{commit}")
COMMIT[B]=$(git -C "$ROOT" rev-parse --verify --short "$2^{commit}")
echo "lading A/B, $([ "$LOAD" = put ] && echo "PUT of $PUT_BYTES bytes" || echo 'metadata GET'): A ${COMMIT[A]}, B ${COMMIT[B]}; $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"

head -c 4096 /dev/urandom > "$WORK/meta.bin"
printf 'username=bench&password=pw' > "$WORK/login-form"
printf '{"path":"/%s/home/bench/dir"}' "$ZONE" > "$WORK/mkdir.json"

make_side() { # A|B: that commit's tree from git (node_modules shared) and a data directory
  local side=$1 tree="$WORK/tree-$1" data="$WORK/data-$1"
  mkdir -p "$tree"
  git -C "$ROOT" archive "${COMMIT[$side]}" | tar -x -C "$tree"
  ln -s "$ROOT/node_modules" "$tree/node_modules"
  "$tree/bin/lading" init --data "$data" >/dev/null
  printf 'pw\n' | "$tree/bin/lading" user add bench --data "$data" >/dev/null
}

serve_side() { # A|B: (re)starts that side's server and logs in; the first start also stores the object
  local side=$1 tree="$WORK/tree-$1" data="$WORK/data-$1" port answer token
  if [ -n "${PID[$side]:-}" ]; then kill "${PID[$side]}"; wait "${PID[$side]}" 2>/dev/null || true; fi
  port=$(free_port)
  local extra="ENV_$side"
  # shellcheck disable=SC2086 # ENV_A and ENV_B are lists of VAR=value words
  env ${!extra:-} "$tree/bin/lading" serve --data "$data" --listen "127.0.0.1:$port" >> "$WORK/lading-$side.log" 2>&1 &
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
  BASE[$side]="http://127.0.0.1:$port"
  TOKEN[$side]=$token
  if [ -z "${STORED[$side]:-}" ]; then
    curl -sf -o /dev/null -T "$WORK/meta.bin" -H 'Content-Type: application/octet-stream' -H @"$WORK/auth-header-$side" "${URL[$side]}"
    curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H @"$WORK/auth-header-$side" --data-binary @"$WORK/mkdir.json" "${BASE[$side]}/api/registered"
    STORED[$side]=1
  fi
}
put_lua "$WORK/put.lua"
make_side A
make_side B

burst() { # A|B seconds name -> "req/s µs-of-CPU-per-request" (name: the burst's own, for new PUT names)
  if [ "$LOAD" = put ]; then
    PUT_BYTES=$PUT_BYTES PUT_TOKEN=${TOKEN[$1]} PUT_PREFIX="/api/registered/$ZONE/home/bench/dir" PUT_RUN="$3" \
      wrk_cpu "${PID[$1]}" "$2" "${BASE[$1]}" -s "$WORK/put.lua"
  else
    wrk_cpu "${PID[$1]}" "$2" "${URL[$1]}" -s "${LUA[$1]}"
  fi
}

printf '%5s %7s %10s %10s %10s %10s\n' pair process 'A req/s' 'A µs/req' 'B req/s' 'B µs/req'
: > "$WORK/pairs"
for i in $(seq "$PAIRS"); do
  if (( (i - 1) % PAIRS_EACH == 0 )); then
    # A new process on each side, warmed up (JIT, caches) before its first pair, in 1-s bursts
    # taken in turn: a side warmed up in one go would then wait for the other's whole warm-up,
    # and a server idle for 5 s runs its settled collection, which slows its next seconds
    # (src/wiring/reclaimer.ts): the side warmed up first measured up to 1.35 times the CPU of the
    # same commit (bench/README.md). No side waits longer than one burst of the other.
    serve_side A; serve_side B
    for w in $(seq "$WARMUP"); do
      burst A 1 "w$i-$w" >/dev/null; burst B 1 "w$i-$w" >/dev/null
    done
  fi
  g=$(( (i - 1) / PAIRS_EACH + 1 ))
  if (( i % 2 )); then a=$(burst A "$SECONDS_EACH" "$i"); b=$(burst B "$SECONDS_EACH" "$i")
  else b=$(burst B "$SECONDS_EACH" "$i"); a=$(burst A "$SECONDS_EACH" "$i"); fi
  read -r ar au <<<"$a"; read -r br bu <<<"$b"
  printf '%5d %7d %10s %10s %10s %10s\n' "$i" "$g" "$ar" "$au" "$br" "$bu"
  echo "$ar $au $br $bu $g" >> "$WORK/pairs"
done

echo
awk '{ print $2 }' "$WORK/pairs" | median > "$WORK/ma"
awk '{ print $4 }' "$WORK/pairs" | median > "$WORK/mb"
awk '{ print $4 / $2 }' "$WORK/pairs" | median > "$WORK/ratio"
: > "$WORK/processes"
for g in $(awk '{ print $5 }' "$WORK/pairs" | sort -nu); do
  awk -v g="$g" '$5 == g { print $4 / $2 }' "$WORK/pairs" | median >> "$WORK/processes"
done
# Two-sided sign test: P(a split at least this uneven | no difference), over the values that differ from 1.
sign_test='
  function sign_test(less, more,   m, k, c, tail, i, p) {
    m = less + more; k = less < more ? less : more
    c = 1; tail = 0
    for (i = 0; i <= k; i++) { tail += c; c = c * (m - i) / (i + 1) }
    p = m > 0 ? 2 * tail / 2 ^ m : 1
    return p > 1 ? 1 : p
  }'
awk -v ma="$(cat "$WORK/ma")" -v mb="$(cat "$WORK/mb")" -v ratio="$(cat "$WORK/ratio")" -v a="${COMMIT[A]}" -v b="${COMMIT[B]}" "$sign_test"'
  { n++; if ($4 < $2) less++; else if ($4 > $2) more++ }
  END {
    printf "CPU per request, median: A (%s) %.1f µs, B (%s) %.1f µs; median of the pairs B ÷ A: %.3f\n", a, ma, b, mb, ratio
    printf "B used less CPU in %d of %d pairs (more in %d); sign test p = %.3g\n", less, n, more, sign_test(less, more)
  }' "$WORK/pairs"
sort -g "$WORK/processes" | awk "$sign_test"'
  { v[++n] = $1; if ($1 < 1) less++; else if ($1 > 1) more++ }
  END {
    printf "Per pair of processes (median of its pairs), B ÷ A: %.3f", v[1]; for (i = 2; i <= n; i++) printf ", %.3f", v[i]; print ""
    printf "B used less CPU in %d of %d pairs of processes (more in %d); sign test p = %.3g\n", less, n, more, sign_test(less, more)
  }'
