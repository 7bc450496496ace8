#!/usr/bin/env bash
# Client benchmark: `lading put`/`lading get` against the same lading server as curl (one large
# file) and as bench's own small-upload loop (create-objects.ts, 8 in flight, many small files),
# with rclone side by side twice: against `rclone serve webdav` on the same disk, and against
# lading's own WebDAV front (`/dav`, the same server, bearer token from the environment).
# Prints seconds, MB/s (10^6 bytes per second), the CPU seconds of the client (user + system,
# all threads) and of the lading server for each transfer, and the ratios lading/curl and
# lading/bench. A script, not a test: run it by hand on a quiet machine (CPU seconds vary far
# less with other load than wall time does). Talks only to 127.0.0.1.
#
# Usage: bench/client.sh        (env: LARGE_MIB=1024 SMALL_FILES=10000 SMALL_KIB=4 ROUNDS=1)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
need rclone rclone

LARGE_MIB=${LARGE_MIB:-1024}
SMALL_FILES=${SMALL_FILES:-10000}
SMALL_KIB=${SMALL_KIB:-4}
ROUNDS=${ROUNDS:-1}

echo "lading client benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), work dir $WORK"
start_lading
export LADING_URL="$LADING" LADING_TOKEN="$BENCH_TOKEN" XDG_STATE_HOME="$WORK/state" XDG_CONFIG_HOME="$WORK/config"
HOME_PATH="/$ZONE/home/bench"

# rclone's WebDAV server on its own directory, on the same disk.
RCLONE_PORT=$(free_port)
mkdir -p "$WORK/rclone-root"
rclone serve webdav "$WORK/rclone-root" --addr "127.0.0.1:$RCLONE_PORT" --log-level ERROR > "$WORK/rclone.log" 2>&1 &
PIDS+=("$!")
RCLONE_REMOTE=":webdav,url='http://127.0.0.1:$RCLONE_PORT':"
wait_http "http://127.0.0.1:$RCLONE_PORT/"
# rclone's webdav backend against lading's /dav: the token reaches rclone through its
# environment (RCLONE_WEBDAV_BEARER_TOKEN), never argv.
LDAV_REMOTE=":webdav,url='$LADING/dav/$ZONE/home/bench':"
ldav() { RCLONE_WEBDAV_BEARER_TOKEN="$BENCH_TOKEN" rclone "$@"; }

mkdir -p "$WORK/large" "$WORK/small"
head -c $((LARGE_MIB * 1024 * 1024)) /dev/urandom > "$WORK/large/file"
"$NODE" -e 'const fs=require("node:fs"),c=require("node:crypto");for(let i=0;i<+process.argv[1];i++)fs.writeFileSync(`${process.argv[3]}/f${String(i).padStart(5,"0")}`,c.randomBytes(+process.argv[2]*1024))' "$SMALL_FILES" "$SMALL_KIB" "$WORK/small"
LARGE_BYTES=$((LARGE_MIB * 1024 * 1024))
SMALL_BYTES=$((SMALL_FILES * SMALL_KIB * 1024))

TICK=$(getconf CLK_TCK)
# CPU ticks (user + system) of the waited-for children of the shell with pid $1, and of the lading server.
children_cpu() { awk '{ print $16 + $17 }' "/proc/$1/stat"; }
server_cpu() { awk '{ print $14 + $15 }' "/proc/$LADING_PID/stat"; }
secs() { # command...: runs it, prints wall seconds:its CPU seconds:the lading server's CPU seconds
  local t0 t1 c0 c1 s0 s1 me=$BASHPID
  c0=$(children_cpu "$me"); s0=$(server_cpu)
  t0=$(date +%s.%N)
  "$@" > "$WORK/out" 2> "$WORK/err" || { echo "bench: failed: $* ($(tail -c 400 "$WORK/err"))" >&2; exit 1; }
  t1=$(date +%s.%N)
  c1=$(children_cpu "$me"); s1=$(server_cpu)
  echo "$(echo "$t1 - $t0" | bc -l):$(echo "scale=2; ($c1 - $c0) / $TICK" | bc -l):$(echo "scale=2; ($s1 - $s0) / $TICK" | bc -l)"
}
mbs() { echo "scale=1; $1 / $2 / 1000000" | bc -l; }
ratio() { echo "scale=2; $1 / $2" | bc -l; } # time_other time_lading -> throughput ratio lading/other

declare -A T
for r in $(seq "$ROUNDS"); do
  rm -rf "$WORK/back" "$WORK/rclone-root"/* "$WORK/rclone-back"; mkdir -p "$WORK/back"
  T[curl_up]+="$(secs curl -sf -o /dev/null -T "$WORK/large/file" -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/curl-large?force=true") "
  T[lading_up]+="$(secs "$ROOT/bin/lading" put -q --force "$WORK/large/file" "$HOME_PATH/lading-large") "
  T[rclone_up]+="$(secs rclone copyto "$WORK/large/file" "$RCLONE_REMOTE/large" --transfers 4) "
  T[davrc_up]+="$(secs ldav copyto "$WORK/large/file" "$LDAV_REMOTE/dav-large-$r" --transfers 4) "
  T[curl_down]+="$(secs curl -sf -o "$WORK/back/curl" -H @"$AUTH_HEADER" "$HOME_URL/lading-large?download=true") "
  T[lading_down]+="$(secs "$ROOT/bin/lading" get -q --force "$HOME_PATH/lading-large" "$WORK/back/lading") "
  T[rclone_down]+="$(secs rclone copyto "$RCLONE_REMOTE/large" "$WORK/rclone-back/large") "
  T[davrc_down]+="$(secs ldav copyto "$LDAV_REMOTE/dav-large-$r" "$WORK/rclone-back/dav-large") "
  cmp -s "$WORK/large/file" "$WORK/rclone-back/dav-large" || { echo "bench: rclone got other bytes from lading's /dav" >&2; exit 1; }
  cmp -s "$WORK/large/file" "$WORK/back/lading" || { echo "bench: lading get returned other bytes" >&2; exit 1; }
  curl -sf -o /dev/null -H @"$AUTH_HEADER" -H 'Content-Type: application/json' -d "{\"path\": \"$HOME_PATH/bench-small-$r\"}" "$LADING/api/registered"
  T[bench_small]+="$(secs "$NODE" "$BENCH_DIR/create-objects.ts" "$HOME_URL/bench-small-$r" "$SMALL_FILES" 8) "
  T[lading_small_up]+="$(secs "$ROOT/bin/lading" put -q -r -j 8 "$WORK/small" "$HOME_PATH/lading-small-$r") "
  T[rclone_small_up]+="$(secs rclone copy "$WORK/small" "$RCLONE_REMOTE/small-$r" --transfers 8) "
  T[davrc_small_up]+="$(secs ldav copy "$WORK/small" "$LDAV_REMOTE/dav-small-$r" --transfers 8) "
  T[lading_small_down]+="$(secs "$ROOT/bin/lading" get -q -r -j 8 "$HOME_PATH/lading-small-$r" "$WORK/back/small-$r") "
  T[rclone_small_down]+="$(secs rclone copy "$RCLONE_REMOTE/small-$r" "$WORK/rclone-back/small-$r" --transfers 8) "
  T[davrc_small_down]+="$(secs ldav copy "$LDAV_REMOTE/dav-small-$r" "$WORK/rclone-back/dav-small-$r" --transfers 8) "
done
med() { # key [field: 1 wall s, 2 client CPU s, 3 lading server CPU s]
  tr ' ' '\n' <<<"${T[$1]}" | grep -v '^$' | cut -d: -f"${2:-1}" | median
}
row() { # key label bytes
  local srv='-'
  [[ $1 == rclone_* ]] || srv=$(printf '%.2f' "$(med "$1" 3)")
  printf '%-34s %9.2f %9s %9.2f %9s\n' "$2" "$(med "$1")" "$(mbs "$3" "$(med "$1")")" "$(med "$1" 2)" "$srv"
}

printf '\n%-34s %9s %9s %9s %9s\n' "transfer (median of $ROUNDS)" seconds MB/s 'cpu s' 'srv cpu s'
for k in curl_up lading_up rclone_up davrc_up curl_down lading_down rclone_down davrc_down; do row "$k" "$k ${LARGE_MIB} MiB" "$LARGE_BYTES"; done
for k in bench_small lading_small_up rclone_small_up davrc_small_up lading_small_down rclone_small_down davrc_small_down; do row "$k" "$k ${SMALL_FILES}x${SMALL_KIB} KiB" "$SMALL_BYTES"; done
echo "(cpu s: the client's user + system seconds, all threads; srv cpu s: the lading server's;"
echo " rclone_*: rclone against rclone serve webdav; davrc_*: rclone against lading's /dav)"
echo
echo "ratios (throughput, lading / other; target >= 0.9 vs curl, >= 0.8 vs bench small uploads):"
echo "  put ${LARGE_MIB} MiB / curl:             $(ratio "$(med curl_up)" "$(med lading_up)")"
echo "  get ${LARGE_MIB} MiB / curl:             $(ratio "$(med curl_down)" "$(med lading_down)")"
echo "  put ${SMALL_FILES} small / bench create:    $(ratio "$(med bench_small)" "$(med lading_small_up)")"
echo "  put ${LARGE_MIB} MiB / rclone webdav:    $(ratio "$(med rclone_up)" "$(med lading_up)")"
echo "  get ${LARGE_MIB} MiB / rclone webdav:    $(ratio "$(med rclone_down)" "$(med lading_down)")"
echo "  put ${SMALL_FILES} small / rclone webdav:   $(ratio "$(med rclone_small_up)" "$(med lading_small_up)")"
echo "  get ${SMALL_FILES} small / rclone webdav:   $(ratio "$(med rclone_small_down)" "$(med lading_small_down)")"
echo "  lading's /dav with rclone / rclone serve webdav with rclone (same client, server vs server):"
echo "    put ${LARGE_MIB} MiB: $(ratio "$(med rclone_up)" "$(med davrc_up)")   get ${LARGE_MIB} MiB: $(ratio "$(med rclone_down)" "$(med davrc_down)")   put small: $(ratio "$(med rclone_small_up)" "$(med davrc_small_up)")   get small: $(ratio "$(med rclone_small_down)" "$(med davrc_small_down)")"
echo "(lading's seconds include starting the CLI: $(secs "$ROOT/bin/lading" --version | cut -d: -f1-2 | sed 's/:/ s, CPU /') s for lading --version)"
