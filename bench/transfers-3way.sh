#!/usr/bin/env bash
# One transfer size, three servers, many rounds: lading's upload and download beside nginx's
# (WebDAV PUT, sendfile GET) and the bare node:http server's (bench/bare-node.mjs, which hashes
# and flushes as lading does), interleaved round by round; prints each server's median MB/s and
# lading's ratios. Quicker than run.sh for comparing a change to the upload path.
#
# Usage: bench/transfers-3way.sh   (env: R=8 rounds, MIB=10 size; any LADING_<KEY>)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
start_nginx; start_lading; start_bare
R=${R:-8}; MIB=${MIB:-10}
head -c $((MIB * 1024 * 1024)) /dev/urandom > "$WORK/f.bin"
: > "$WORK/t"
for _ in $(seq "$R"); do
  for s in lading nginx node; do
    case $s in
      lading) u="$HOME_URL/f?force=true"; d="$HOME_URL/f?download=true"; h=(-H @"$AUTH_HEADER") ;;
      nginx) u="$NGINX/f"; d=$u; h=() ;;
      node) u="$BARE/f"; d=$u; h=() ;;
    esac
    up=$(curl -sf -o /dev/null -w '%{time_total}' -T "$WORK/f.bin" -H 'Content-Type: application/octet-stream' "${h[@]}" "$u")
    down=$(curl -sf -o /dev/null -w '%{time_total}' "${h[@]}" "$d")
    echo "$s $up $down" >> "$WORK/t"
  done
done
declare -A UP DOWN
for s in lading nginx node; do
  UP[$s]=$(awk -v s=$s '$1 == s { print $2 }' "$WORK/t" | median)
  DOWN[$s]=$(awk -v s=$s '$1 == s { print $3 }' "$WORK/t" | median)
  awk -v s=$s -v u="${UP[$s]}" -v d="${DOWN[$s]}" -v m="$MIB" 'BEGIN { printf "%-7s up %6.0f MB/s  down %6.0f MB/s\n", s, m * 1048576 / u / 1e6, m * 1048576 / d / 1e6 }'
done
awk -v lu="${UP[lading]}" -v nu="${UP[nginx]}" -v bu="${UP[node]}" -v ld="${DOWN[lading]}" -v nd="${DOWN[nginx]}" -v bd="${DOWN[node]}" \
  'BEGIN { printf "lading ÷ nginx: up %.2f down %.2f; ÷ node: up %.2f down %.2f (%s MiB, medians)\n", nu / lu, nd / ld, bu / lu, bd / ld, ENVIRON["MIB"] ? ENVIRON["MIB"] : 10 }'
