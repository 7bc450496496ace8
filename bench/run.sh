#!/usr/bin/env bash
# The whole table in one run: lading beside nginx (WebDAV PUT, sendfile GET, one worker),
# `rclone serve webdav` (Debian's rclone on a local directory, no VFS cache) and a bare
# node:http server that hashes and flushes what it stores (bench/bare-node.mjs: Node's own
# ceiling), all on this machine and on the same disk: metadata requests per second, small objects created per second,
# 10 MiB and 1 GiB uploads and downloads, memory idle and at its peak during the 1 GiB
# transfers, and the time from start to the first answer (for lading also `--help`, a client
# command and an admin command). Every measurement is interleaved across the three servers, so
# they see the same background load; each row shows the figures side by side and lading's
# ratio to each peer. Then the WebDAV rows (dav-rows.sh; alone: dav.sh): lading's /dav beside
# rclone serve webdav, PROPFIND of an object and of 1,000 entries, small PUTs, 10 MiB and 1 GiB.
# Talks only to 127.0.0.1 and cleans up after itself.
#
# Then the S3 rows of bench/s3.sh (lading's S3 listener beside the Swift S3 server).
#
# Usage: bench/run.sh   (about 4 minutes; env: ROUNDS=2 DURATION=5 WARMUP=5 CONNECTIONS=16
#                        CONCURRENCY=8 ROUNDS_SMALL=5 ROUNDS_LARGE=2
#                        LARGE_MIB=1024 START_ROUNDS=3 LIST_OBJECTS=1000 LIST_CONNECTIONS=4
#                        ACCEPT_ENCODING='br, gzip'; any LADING_<KEY>, e.g.
#                        LADING_COMPRESS=false for the metadata and listing rows uncompressed)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
need wrk wrk

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5}
# Seconds of metadata GETs before the metadata rounds. NOTE: a started lading answers them at
# half its pace for its first ~3 s under load, while V8 compiles its request path (~800
# functions); the rounds measure a warm server. The small objects' warm-up stays at 1 s: their
# rate is bound by the flushes, and longer rounds of them leave more garbage behind for the
# memory rows that follow (bench/README.md).
WARMUP=${WARMUP:-5}
CONNECTIONS=${CONNECTIONS:-16}
CONCURRENCY=${CONCURRENCY:-8}
ROUNDS_SMALL=${ROUNDS_SMALL:-5}
ROUNDS_LARGE=${ROUNDS_LARGE:-2}
LARGE_MIB=${LARGE_MIB:-1024}
START_ROUNDS=${START_ROUNDS:-3}
LIST_OBJECTS=${LIST_OBJECTS:-1000}
# NOTE: a listing of 1,000 takes lading ~25 ms of CPU: 16 at once would queue for 0.4 s.
LIST_CONNECTIONS=${LIST_CONNECTIONS:-4}
# NOTE: what a browser sends; lading compresses what is 1 KiB or more (not a metadata answer),
# nginx (gzip off, as in throughput.sh) ignores it. '' sends none.
export BENCH_ACCEPT_ENCODING=${ACCEPT_ENCODING-br, gzip}
SERVERS=(lading nginx rclone node)

echo "lading benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), work dir $WORK"
env | grep '^LADING_' | sed 's/^/  /' || true

start_nginx
start_lading
start_rclone
start_bare
NGINX_WORKER=$(awk '{ print $1 }' "/proc/$NGINX_PID/task/$NGINX_PID/children")
[ -n "$NGINX_WORKER" ] || { echo "bench: no nginx worker process found" >&2; exit 1; }
fail() { echo "bench: $*" >&2; exit 1; }
# NOTE: nginx and rclone never flush what they store, so the kernel writes their files back
# later, during whichever server runs next; lading and node flush theirs and would wait behind
# that writeback. Every timed round of a writing row starts with nothing left to write back.
settle() { sync; }
pid_of() { case $1 in lading) echo "$LADING_PID" ;; nginx) echo "$NGINX_WORKER" ;; rclone) echo "$RCLONE_PID" ;; node) echo "$BARE_PID" ;; esac; }
kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
declare -A IDLE SETTLED BUSY BEFORE PEAK
for s in "${SERVERS[@]}"; do IDLE[$s]=$(kib "$(pid_of "$s")" VmRSS); done
# NOTE: lading's figure above is taken about a second after its login, whose garbage V8 frees
# only once its memory reducer sees the process idle, a few seconds later; this one is taken
# when the servers have been idle for 10 s.
sleep 10
for s in "${SERVERS[@]}"; do SETTLED[$s]=$(kib "$(pid_of "$s")" VmRSS); done

# --- metadata: lading's metadata GET (bearer token), nginx's GET of the same JSON as a static
# file, rclone's PROPFIND (Depth: 0) of the object. NOTE: no HEAD row: wrk 4.1 waits for a body
# after every HEAD answer that announces a length, so it cannot time HEAD.
head -c 4096 /dev/urandom > "$WORK/meta.bin"
curl -sf -o /dev/null -T "$WORK/meta.bin" -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/meta.bin"
curl -sf -o "$WORK/nginx-root/meta.json" -H @"$AUTH_HEADER" "$HOME_URL/meta.bin"
# NOTE: through rclone itself: it caches directory listings, so a file put beside it is not seen.
curl -sf -o /dev/null -T "$WORK/meta.bin" "$RCLONE/meta.bin"
curl -sf -o /dev/null -T "$WORK/meta.bin" "$BARE/meta.bin"
lua() { # file method [auth] : a wrk script (the token comes from the environment, never argv)
  { echo "wrk.method = \"$2\""
    if [ "$2" = PROPFIND ]; then echo 'wrk.headers["Depth"] = "0"'; fi
    if [ -n "${3:-}" ]; then echo 'wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")'; fi
    if [ -n "$BENCH_ACCEPT_ENCODING" ]; then echo 'wrk.headers["Accept-Encoding"] = os.getenv("BENCH_ACCEPT_ENCODING")'; fi
  } > "$WORK/$1.lua"
}
lua lading-get GET auth; lua get GET; lua propfind PROPFIND
load() { # duration url script [connections] -> req/s (fails on errors or non-2xx answers)
  local out
  out=$(wrk -t1 -c"${4:-$CONNECTIONS}" -d"$1s" --timeout "${WRK_TIMEOUT:-10s}" -s "$WORK/$3.lua" "$2")
  grep -q 'Non-2xx\|Socket errors' <<<"$out" && { echo "$out" >&2; fail "wrk $3 $2 had errors"; }
  awk '/^Requests\/sec:/ { print $2 }' <<<"$out"
}
RES="$WORK/results"
: > "$RES"
meta_round() { # duration record?
  local s
  for s in "${SERVERS[@]}"; do
    case $s in
      lading) g=$(load "$1" "$HOME_URL/meta.bin" lading-get) ;;
      nginx) g=$(load "$1" "$NGINX/meta.json" get) ;;
      rclone) g=$(load "$1" "$RCLONE/meta.bin" propfind) ;;
      node) g=$(load "$1" "$BARE/meta.bin?meta" get) ;;
    esac
    if [ "$2" = record ]; then echo "meta $s $g" >> "$RES"; fi
  done
  return 0
}
meta_round "$WARMUP" warm-up
for r in $(seq "$ROUNDS"); do meta_round "$DURATION" record; printf '.' >&2; done
echo ' metadata done' >&2

# --- listing: lading's listing of a collection of LIST_OBJECTS objects (JSON, one page), and
# nginx's GET of the same JSON as a static file; with BENCH_ACCEPT_ENCODING, as a browser asks.
printf '{"path":"/%s/home/bench/list"}' "$ZONE" > "$WORK/mkdir.json"
curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H @"$AUTH_HEADER" --data-binary @"$WORK/mkdir.json" "$LADING/api/registered"
printf 'listed object\n' > "$WORK/listed"
seq -w 1 "$LIST_OBJECTS" | xargs -P "$CONCURRENCY" -I{} curl -sf -o /dev/null -T "$WORK/listed" -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/list/object-{}.csv" \
  || fail 'upload of the listed objects'
curl -sf -o "$WORK/nginx-root/list.json" -H @"$AUTH_HEADER" "$HOME_URL/list/?max_keys=$LIST_OBJECTS"
LIST_PLAIN=$(stat -c %s "$WORK/nginx-root/list.json")
LIST_WIRE=$(curl -sf -o /dev/null -w '%{size_download}' -H @"$AUTH_HEADER" -H "Accept-Encoding: ${BENCH_ACCEPT_ENCODING:-identity}" "$HOME_URL/list/?max_keys=$LIST_OBJECTS")
list_round() { # duration record?
  local s g
  for s in lading nginx; do
    case $s in
      lading) g=$(load "$1" "$HOME_URL/list/?max_keys=$LIST_OBJECTS" lading-get "$LIST_CONNECTIONS") ;;
      nginx) g=$(load "$1" "$NGINX/list.json" get "$LIST_CONNECTIONS") ;;
    esac
    if [ "$2" = record ]; then echo "list $s $g" >> "$RES"; fi
  done
  return 0
}
list_round 2 warm-up
for r in $(seq "$ROUNDS"); do list_round "$DURATION" record; printf '.' >&2; done
echo ' listing done' >&2

# --- small objects: 15-byte PUTs of new names into a collection for $DURATION s per round,
# $CONCURRENCY in flight, through wrk (C) as the metadata row: on 2 cores a Node.js client
# spends ~0.6 ms of CPU per request itself, ~2,100 requests/s at most against a server that
# does nothing (bench/README.md), which would hide the servers' differences.
printf '{"path":"/%s/home/bench/dir"}' "$ZONE" > "$WORK/mkdir.json"
curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H @"$AUTH_HEADER" --data-binary @"$WORK/mkdir.json" "$LADING/api/registered"
curl -sf -o /dev/null -X MKCOL "$RCLONE/dir/"
mkdir -p "$WORK/nginx-root/dir"
put_lua "$WORK/put.lua"
small_round() { # round duration record?
  local s base prefix token out n t0 t1
  for s in "${SERVERS[@]}"; do
    case $s in
      lading) base=$LADING; prefix="/api/registered/$ZONE/home/bench/dir"; token=$BENCH_TOKEN ;;
      nginx) base=$NGINX; prefix=/dir; token= ;;
      rclone) base=$RCLONE; prefix=/dir; token= ;;
      node) base=$BARE; prefix=/dir; token= ;;
    esac
    settle
    t0=$(cpu_ticks "$(pid_of "$s")")
    out=$(PUT_TOKEN=$token PUT_PREFIX=$prefix PUT_RUN="r$1" wrk -t1 -c"$CONCURRENCY" -d"$2s" -s "$WORK/put.lua" "$base")
    t1=$(cpu_ticks "$(pid_of "$s")")
    grep -q 'Non-2xx\|Socket errors' <<<"$out" && { echo "$out" >&2; fail "wrk PUT $s had errors"; }
    n=$(awk '/ requests in / { print $1 }' <<<"$out")
    if [ "$3" = record ]; then
      awk -v s="$s" -v n="$n" -v r="$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")" -v c=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" \
        'BEGIN { printf "objects %s %.1f\nobjcpu %s %.3f\n", s, r, s, 1000 * c / hz / n }' >> "$RES"
    fi
  done
}
small_round 0 1 warm-up
for r in $(seq "$ROUNDS"); do small_round "$r" "$DURATION" record; printf '.' >&2; done
echo ' small objects done' >&2

# --- transfers: 10 MiB and 1 GiB up and down, the first server rotating each round.
mkdir -p "$WORK/files"
head -c $((10 * 1024 * 1024)) /dev/urandom > "$WORK/files/small"
head -c $((LARGE_MIB * 1024 * 1024)) /dev/urandom > "$WORK/files/large"
transfer() { # server up|down file -> seconds (checks status and size)
  local size out code secs bytes
  size=$(stat -c %s "$3")
  case "$1/$2" in
    lading/up) out=$(curl -s -o "$WORK/resp" -w '%{http_code} %{time_total} %{size_upload}' -T "$3" -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/f?force=true") ;;
    lading/down) out=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' -H @"$AUTH_HEADER" "$HOME_URL/f?download=true") ;;
    nginx/up) out=$(curl -s -o "$WORK/resp" -w '%{http_code} %{time_total} %{size_upload}' -T "$3" "$NGINX/f") ;;
    nginx/down) out=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' "$NGINX/f") ;;
    rclone/up) out=$(curl -s -o "$WORK/resp" -w '%{http_code} %{time_total} %{size_upload}' -T "$3" "$RCLONE/f") ;;
    rclone/down) out=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' "$RCLONE/f") ;;
    node/up) out=$(curl -s -o "$WORK/resp" -w '%{http_code} %{time_total} %{size_upload}' -T "$3" "$BARE/f") ;;
    node/down) out=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' "$BARE/f") ;;
  esac
  read -r code secs bytes <<<"$out"
  case "$code" in 200|201|204) ;; *) fail "$1 $2 answered $code: $(head -c 400 "$WORK/resp" 2>/dev/null)" ;; esac
  [ "$bytes" = "$size" ] || fail "$1 $2 moved $bytes bytes, expected $size"
  echo "$secs"
}
run_size() { # label file rounds
  local r i s d t0 t1 secs
  for r in $(seq 0 "$3"); do
    for d in up down; do
      for i in "${!SERVERS[@]}"; do
        s=${SERVERS[$(( (r + i) % ${#SERVERS[@]} ))]}
        settle
        t0=$(cpu_ticks "$(pid_of "$s")")
        secs=$(transfer "$s" "$d" "$2")
        t1=$(cpu_ticks "$(pid_of "$s")")
        # Round 0 is a warm-up for the small size only; the large one is too long to repeat.
        if [ "$r" -gt 0 ] || [ "$1" != small ]; then echo "$1-$d $s $secs $((t1 - t0))" >> "$WORK/transfers"; fi
      done
    done
    printf '.' >&2
    [ "$1" != small ] && [ "$r" -eq $(( $3 - 1 )) ] && break
  done
  return 0
}
: > "$WORK/transfers"
run_size small "$WORK/files/small" "$ROUNDS_SMALL"
echo ' 10 MiB done' >&2
for s in "${SERVERS[@]}"; do BUSY[$s]=$(kib "$(pid_of "$s")" VmRSS); done
# NOTE: a server's memory right after the rounds above holds their garbage, which some give
# back once idle for a few seconds; the large transfers start 6 s later, so that their peak is
# read against what stays.
sleep 6
for s in "${SERVERS[@]}"; do
  BEFORE[$s]=$(kib "$(pid_of "$s")" VmRSS)
  echo 5 > "/proc/$(pid_of "$s")/clear_refs" 2>/dev/null || true # resets VmHWM
done
run_size large "$WORK/files/large" "$ROUNDS_LARGE"
for s in "${SERVERS[@]}"; do PEAK[$s]=$(kib "$(pid_of "$s")" VmHWM); done
echo ' 1 GiB done' >&2
rm -f "$WORK/files/large" "$WORK/nginx-root/f" "$WORK/rclone-root/f" "$WORK/node-root/f"

# --- start to first answer: lading's kinds of command (startup.ts), and the peers' starts.
NGINX_START_PORT=$(free_port)
sed -e "s/127.0.0.1:$NGINX_PORT/127.0.0.1:$NGINX_START_PORT/" -e "s#$WORK/nginx.pid#$WORK/nginx-start.pid#" "$WORK/nginx.conf" > "$WORK/nginx-start.conf"
RCLONE_START_PORT=$(free_port)
START_PORT=$(free_port)
read -r _ help _ client _ admin _ serve _ fresh_rss < <("$NODE" --disable-warning=ExperimentalWarning "$BENCH_DIR/startup.ts" "$ROOT" "$WORK/lading-data" "$LADING" "$START_PORT" "$START_ROUNDS")
nginx_start=$("$NODE" --disable-warning=ExperimentalWarning "$BENCH_DIR/startup.ts" --peer "http://127.0.0.1:$NGINX_START_PORT/" "$START_ROUNDS" \
  nginx -p "$WORK" -c "$WORK/nginx-start.conf" -e "$WORK/nginx-error.log")
# shellcheck disable=SC2046
rclone_start=$("$NODE" --disable-warning=ExperimentalWarning "$BENCH_DIR/startup.ts" --peer "http://127.0.0.1:$RCLONE_START_PORT/" "$START_ROUNDS" \
  $(rclone_command "$RCLONE_START_PORT"))
BARE_START_PORT=$(free_port)
# shellcheck disable=SC2046
bare_start=$("$NODE" --disable-warning=ExperimentalWarning "$BENCH_DIR/startup.ts" --peer "http://127.0.0.1:$BARE_START_PORT/" "$START_ROUNDS" \
  $(bare_command "$BARE_START_PORT"))
echo 'start-up done' >&2

# --- the table
med() { awk -v k="$1" -v s="$2" '$1 == k && $2 == s { print $3 }' "$RES" | median; }
tmed() { awk -v k="$1" -v s="$2" '$1 == k && $2 == s { print $3 }' "$WORK/transfers" | median; }
tcpu() { awk -v k="$1" -v s="$2" -v hz="$(getconf CLK_TCK)" '$1 == k && $2 == s { t += $4; n++ } END { printf "%.0f", 1000 * t / hz / n }' "$WORK/transfers"; }
mbs() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f", b / t / 1e6 }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
row() { # name better lading nginx rclone node   (better: "more" or "less"; "-" for no figure)
  awk -v n="$1" -v b="$2" -v l="$3" -v g="$4" -v r="$5" -v o="${6:--}" 'BEGIN {
    rn = (g == "-" || g == 0) ? "-" : sprintf("%.2f", l / g); rr = (r == "-" || r == 0) ? "-" : sprintf("%.2f", l / r)
    ro = (o == "-" || o == 0) ? "-" : sprintf("%.2f", l / o)
    printf "| %-44s | %10s | %10s | %10s | %10s | %8s | %8s | %8s | %-5s |\n", n, l, g, r, o, rn, rr, ro, b }'
}
SMALL=$(stat -c %s "$WORK/files/small")
LARGE=$((LARGE_MIB * 1024 * 1024))
echo
printf '| %-44s | %10s | %10s | %10s | %10s | %8s | %8s | %8s | %-5s |\n' '' lading nginx rclone node '÷ nginx' '÷ rclone' '÷ node' better
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..46})" ------------ ------------ ------------ ------------ ---------- ---------- ---------- -------
row 'metadata req/s (JSON / file / PROPFIND 0 / stat)' more "$(med meta lading)" "$(med meta nginx)" "$(med meta rclone)" "$(med meta node)"
row "listing of $LIST_OBJECTS objects req/s (JSON / file)" more "$(med list lading)" "$(med list nginx)" - -
row "listing of $LIST_OBJECTS objects, KiB on the wire" less "$(mib "$LIST_WIRE")" "$(mib "$LIST_PLAIN")" - -
row "small objects created/s ($CONCURRENCY in flight)" more "$(med objects lading)" "$(med objects nginx)" "$(med objects rclone)" "$(med objects node)"
row 'small object: server cpu ms each' less "$(med objcpu lading)" "$(med objcpu nginx)" "$(med objcpu rclone)" "$(med objcpu node)"
for spec in "small:10 MiB:$SMALL" "large:$LARGE_MIB MiB:$LARGE"; do
  IFS=: read -r key label bytes <<<"$spec"
  for d in up down; do
    name="$label $([ "$d" = up ] && echo upload || echo download)"
    row "$name, MB/s" more "$(mbs "$bytes" "$(tmed "$key-$d" lading)")" "$(mbs "$bytes" "$(tmed "$key-$d" nginx)")" "$(mbs "$bytes" "$(tmed "$key-$d" rclone)")" "$(mbs "$bytes" "$(tmed "$key-$d" node)")"
    row "$name, server cpu ms" less "$(tcpu "$key-$d" lading)" "$(tcpu "$key-$d" nginx)" "$(tcpu "$key-$d" rclone)" "$(tcpu "$key-$d" node)"
  done
done
row 'RSS idle after start and login, MiB' less "$(mib "${IDLE[lading]}")" "$(mib "${IDLE[nginx]}")" "$(mib "${IDLE[rclone]}")" "$(mib "${IDLE[node]}")"
row 'RSS idle 10 s later, MiB' less "$(mib "${SETTLED[lading]}")" "$(mib "${SETTLED[nginx]}")" "$(mib "${SETTLED[rclone]}")" "$(mib "${SETTLED[node]}")"
row 'RSS right after the small objects and 10 MiB, MiB' less "$(mib "${BUSY[lading]}")" "$(mib "${BUSY[nginx]}")" "$(mib "${BUSY[rclone]}")" "$(mib "${BUSY[node]}")"
row "RSS before the $LARGE_MIB MiB transfers (idle 6 s), MiB" less "$(mib "${BEFORE[lading]}")" "$(mib "${BEFORE[nginx]}")" "$(mib "${BEFORE[rclone]}")" "$(mib "${BEFORE[node]}")"
row "RSS peak during the $LARGE_MIB MiB transfers, MiB" less "$(mib "${PEAK[lading]}")" "$(mib "${PEAK[nginx]}")" "$(mib "${PEAK[rclone]}")" "$(mib "${PEAK[node]}")"
row 'start to first answer, ms' less "$serve" "$nginx_start" "$rclone_start" "$bare_start"
row 'lading --help, ms' less "$help" - -
row 'client command (lading ls), ms' less "$client" - -
row 'admin command (lading user list), ms' less "$admin" - -
row 'RSS of a fresh idle server after 1 s, MiB' less "$fresh_rss" - -
echo
echo "Medians: metadata of $ROUNDS rounds of ${DURATION} s after a warm-up of $WARMUP s (wrk -t1 -c$CONNECTIONS), small objects of $ROUNDS rounds of ${DURATION} s"
echo "(wrk -t1 -c$CONCURRENCY, a PUT of 15 bytes to a new name each), transfers of $ROUNDS_SMALL (10 MiB, after a"
echo "warm-up) and $ROUNDS_LARGE ($LARGE_MIB MiB) rounds, starts of $START_ROUNDS. cpu ms: CPU time (user + system, all threads)"
echo "the server process used (nginx: its worker), mean per transfer or object. lading flushes every"
echo "object to disk before answering, as the bare node:http server (node) does; nginx and rclone do not."
echo "Metadata: lading's JSON record (bearer token), nginx's static file of it, rclone's PROPFIND, node's stat as JSON."
echo "Listing: one page of $LIST_OBJECTS entries (wrk -t1 -c$LIST_CONNECTIONS); nginx serves the same JSON uncompressed. Accept-Encoding: '${BENCH_ACCEPT_ENCODING}'; LADING_COMPRESS=${LADING_COMPRESS:-true}."
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."

# --- WebDAV: lading's /dav beside rclone serve webdav, on the servers above (dav-rows.sh).
echo
source "$BENCH_DIR/dav-rows.sh"
dav_rows

# The S3 rows: lading's S3 listener beside the Swift S3 server (bench/s3.sh; S3_BENCH=0 skips them).
if [ "${S3_BENCH:-1}" != 0 ]; then
  LARGE_MIB="$LARGE_MIB" DURATION="$DURATION" CONCURRENCY="$CONCURRENCY" "$BENCH_DIR/s3.sh"
fi
