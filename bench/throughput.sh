#!/usr/bin/env bash
# Transfer benchmark: lading's /api/registered upload and download against nginx (WebDAV PUT,
# sendfile GET) on the same machine, for a 10 MiB and a 1 GiB file of random bytes. Runs are
# interleaved (the first server alternates each round) so both see the same background load;
# reports median seconds, MB/s (10^6 bytes per second) and the lading/nginx throughput ratio,
# plus lading's peak RSS per size. Talks only to 127.0.0.1 and cleans up after itself.
#
# Usage: bench/throughput.sh            (env: ROUNDS_SMALL=15 ROUNDS_LARGE=5 LARGE_MIB=1024;
#                                        any LADING_<KEY>, e.g. LADING_RESOURCE_FSYNC=false)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl

ROUNDS_SMALL=${ROUNDS_SMALL:-15}
ROUNDS_LARGE=${ROUNDS_LARGE:-5}
LARGE_MIB=${LARGE_MIB:-1024}

echo "lading throughput benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, work dir $WORK"
env | grep '^LADING_' | sed 's/^/  /' || true

start_nginx
start_lading

mkdir -p "$WORK/files"
head -c $((10 * 1024 * 1024)) /dev/urandom > "$WORK/files/small"
head -c $((LARGE_MIB * 1024 * 1024)) /dev/urandom > "$WORK/files/large"

NGINX_WORKER=$(cat "/proc/$NGINX_PID/task/$NGINX_PID/children" | awk '{ print $1 }')
[ -n "$NGINX_WORKER" ] || { echo "bench: no nginx worker process found" >&2; exit 1; }

RESULTS="$WORK/results"
: > "$RESULTS"

fail() { echo "bench: $*" >&2; exit 1; }

# Each transfer prints its seconds (curl's time_total) after checking status and size.
transfer() { # server direction file
  local server=$1 dir=$2 file=$3 size out code secs bytes
  size=$(stat -c %s "$file")
  case "$server/$dir" in
    lading/up)
      out=$(curl -s -o "$WORK/resp" -w '%{http_code} %{time_total} %{size_upload}' -T "$file" \
        -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/f?force=true") ;;
    nginx/up)
      out=$(curl -s -o "$WORK/resp" -w '%{http_code} %{time_total} %{size_upload}' -T "$file" "$NGINX/f") ;;
    lading/down)
      out=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' -H @"$AUTH_HEADER" "$HOME_URL/f?download=true") ;;
    nginx/down)
      out=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' "$NGINX/f") ;;
  esac
  read -r code secs bytes <<<"$out"
  case "$code" in 200|201|204) ;; *) fail "$server $dir answered $code: $(head -c 400 "$WORK/resp" 2>/dev/null)" ;; esac
  [ "$bytes" = "$size" ] || fail "$server $dir moved $bytes bytes, expected $size"
  echo "$secs"
}

# CPU time (user + system, all threads, in clock ticks) a server has used so far: less
# sensitive than wall time to other work on the machine.

rss_sampler() { # pid out: VmRSS in KiB every 100 ms until the process or the sampler ends
  while awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; do sleep 0.1; done > "$2"
}

run_size() { # label file rounds
  local label=$1 file=$2 rounds=$3 r dir first second server sampler secs spid t0 t1
  # Warm-up round (untimed): JIT, page cache, first-time directory creation.
  for dir in up down; do transfer lading "$dir" "$file" >/dev/null; transfer nginx "$dir" "$file" >/dev/null; done
  echo 5 > "/proc/$LADING_PID/clear_refs" 2>/dev/null || true # resets VmHWM
  rss_sampler "$LADING_PID" "$WORK/rss-$label" &
  sampler=$!
  PIDS+=("$sampler")
  for r in $(seq "$rounds"); do
    if (( r % 2 )); then first=lading second=nginx; else first=nginx second=lading; fi
    for dir in up down; do
      for server in "$first" "$second"; do
        if [ "$server" = lading ]; then spid=$LADING_PID; else spid=$NGINX_WORKER; fi
        t0=$(cpu_ticks "$spid")
        secs=$(transfer "$server" "$dir" "$file")
        t1=$(cpu_ticks "$spid")
        echo "$label $dir $server $secs $((t1 - t0))" >> "$RESULTS"
      done
    done
    printf '.' >&2
  done
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  HWM[$label]=$(awk '/^VmHWM/ { print $2 }' "/proc/$LADING_PID/status")
  printf ' %s done\n' "$label" >&2
}

declare -A HWM
IDLE_RSS=$(awk '/^VmRSS/ { print $2 }' "/proc/$LADING_PID/status")
run_size 10MiB "$WORK/files/small" "$ROUNDS_SMALL"
run_size "${LARGE_MIB}MiB" "$WORK/files/large" "$ROUNDS_LARGE"

secs_of() { awk -v l="$1" -v d="$2" -v s="$3" '$1 == l && $2 == d && $3 == s { print $4 }' "$RESULTS" | median; }
# Mean CPU milliseconds per transfer (clock ticks are too coarse for a median of one transfer).
cpu_of() { awk -v l="$1" -v d="$2" -v s="$3" -v hz="$(getconf CLK_TCK)" '$1 == l && $2 == d && $3 == s { t += $5; n++ } END { printf "%.0f", 1000 * t / hz / n }' "$RESULTS"; }

echo
printf '%-8s %-9s %6s | %9s %8s %7s | %9s %8s %7s | %6s %s\n' size direction rounds 'lading s' 'MB/s' 'cpu ms' 'nginx s' 'MB/s' 'cpu ms' ratio verdict
printf '%s\n' '-----------------------------------------------------------------------------------------------------'
for spec in "10MiB:$WORK/files/small:$ROUNDS_SMALL" "${LARGE_MIB}MiB:$WORK/files/large:$ROUNDS_LARGE"; do
  IFS=: read -r label file rounds <<<"$spec"
  bytes=$(stat -c %s "$file")
  for dir in up down; do
    ls=$(secs_of "$label" "$dir" lading)
    ns=$(secs_of "$label" "$dir" nginx)
    lc=$(cpu_of "$label" "$dir" lading)
    nc=$(cpu_of "$label" "$dir" nginx)
    awk -v l="$label" -v d="$dir" -v r="$rounds" -v b="$bytes" -v ls="$ls" -v ns="$ns" -v lc="$lc" -v nc="$nc" 'BEGIN {
      lm = b / ls / 1e6; nm = b / ns / 1e6; ratio = lm / nm
      printf "%-8s %-9s %6d | %9.4f %8.1f %7d | %9.4f %8.1f %7d | %6.2f %s\n", l, (d == "up" ? "upload" : "download"), r, ls, lm, lc, ns, nm, nc, ratio, (ratio >= 0.9 ? "ok" : "MISS (< 0.9)")
    }'
  done
done
echo
printf 'lading RSS (MiB): idle after start %.1f\n' "$(awk -v k="$IDLE_RSS" 'BEGIN { print k / 1024 }')"
printf '%-8s %16s %16s %s\n' size 'peak (sampled)' 'peak (VmHWM)' verdict
for label in 10MiB "${LARGE_MIB}MiB"; do
  peak=$(sort -n "$WORK/rss-$label" | tail -1)
  awk -v l="$label" -v p="$peak" -v h="${HWM[$label]}" 'BEGIN {
    printf "%-8s %16.1f %16.1f %s\n", l, p / 1024, h / 1024, (h / 1024 < 128 ? "ok (< 128 MiB)" : "MISS (>= 128 MiB)")
  }'
done
echo "(seconds: median of the timed rounds after one warm-up round; cpu ms: mean CPU time the server"
echo " process used per transfer, all threads; ratio = lading MB/s / nginx MB/s, >= 1: lading is as fast;"
echo " load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
