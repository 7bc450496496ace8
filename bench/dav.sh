#!/usr/bin/env bash
# The WebDAV rows of run.sh alone (see dav-rows.sh): lading's /dav beside `rclone serve webdav`
# on the same disk. Talks only to 127.0.0.1 and cleans up after itself.
#
# Usage: bench/dav.sh   (about 2 minutes; env: ROUNDS=2 DURATION=5 CONNECTIONS=16 CONCURRENCY=8
#                        ROUNDS_SMALL=5 ROUNDS_LARGE=2 LARGE_MIB=1024)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/dav-rows.sh"
need curl curl
need wrk wrk
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-16}
CONCURRENCY=${CONCURRENCY:-8}
ROUNDS_SMALL=${ROUNDS_SMALL:-5}
ROUNDS_LARGE=${ROUNDS_LARGE:-2}
LARGE_MIB=${LARGE_MIB:-1024}
echo "lading WebDAV benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), work dir $WORK"
start_lading
start_rclone
settle() { sync; }
load() { # duration url script -> req/s (fails on errors or non-2xx answers)
  local out
  out=$(wrk -t1 -c"$CONNECTIONS" -d"$1s" --timeout "${WRK_TIMEOUT:-2s}" -s "$WORK/$3.lua" "$2")
  grep -q 'Non-2xx\|Socket errors' <<<"$out" && { echo "$out" >&2; echo "bench: wrk $3 $2 had errors" >&2; exit 1; }
  awk '/^Requests\/sec:/ { print $2 }' <<<"$out"
}
put_lua "$WORK/put.lua"
head -c 4096 /dev/urandom > "$WORK/meta.bin"
curl -sf -o /dev/null -T "$WORK/meta.bin" "$RCLONE/meta.bin"
dav_rows
