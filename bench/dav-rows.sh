# The WebDAV rows: lading's /dav beside `rclone serve webdav` on the same disk, the same
# workload through both: PROPFIND of an object (Depth 0) and of a 1,000-entry collection
# (Depth 1, the properties rclone asks for), small objects created per second (PUTs of 15
# bytes to new names, $CONCURRENCY in flight), and 10 MiB and 1 GiB uploads and downloads
# (curl), each measurement interleaved between the two. lading flushes what it stores before
# answering; rclone does not. Sourced by run.sh (after its table, reusing its servers) and by
# dav.sh (alone); needs lib.sh's start_lading and start_rclone to have run.
dav_rows() {
  local DAV="$LADING/dav/$ZONE/home/bench" s r out d secs
  local rows="$WORK/dav-results"
  : > "$rows"
  davfail() { echo "bench: $*" >&2; exit 1; }
  # The properties rclone's webdav backend asks for in a listing.
  cat > "$WORK/propfind.xml" <<'XML'
<?xml version="1.0" encoding="utf-8" ?><d:propfind xmlns:d="DAV:"><d:prop><d:displayname/><d:getlastmodified/><d:getcontentlength/><d:resourcetype/><d:getcontenttype/></d:prop></d:propfind>
XML
  dav_lua() { # file depth auth?
    { echo 'wrk.method = "PROPFIND"'
      echo "wrk.headers[\"Depth\"] = \"$2\""
      echo 'wrk.headers["Content-Type"] = "application/xml"'
      printf 'wrk.body = [[%s]]\n' "$(cat "$WORK/propfind.xml")"
      if [ -n "${3:-}" ]; then echo 'wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")'; fi
    } > "$WORK/$1.lua"
  }
  dav_lua dav-d0 0 auth; dav_lua dav-d1 1 auth; dav_lua rc-d0 0; dav_lua rc-d1 1
  # A 1,000-entry collection on each, created through WebDAV itself.
  head -c 100 /dev/urandom > "$WORK/entry.bin"
  curl -sf -o /dev/null -X MKCOL -H @"$AUTH_HEADER" "$DAV/many"
  curl -sf -o /dev/null -X MKCOL "$RCLONE/many"
  for base in "$DAV/many" "$RCLONE/many"; do
    : > "$WORK/many.cfg"
    for i in $(seq 1000); do printf 'url = "%s/e%04d"\nupload-file = "%s"\noutput = "/dev/null"\n' "$base" "$i" "$WORK/entry.bin" >> "$WORK/many.cfg"; done
    if [ "$base" = "$DAV/many" ]; then set -- -H @"$AUTH_HEADER"; else set --; fi
    curl -sf --no-progress-meter --parallel --parallel-max 8 "$@" -K "$WORK/many.cfg" || davfail "creating 1,000 entries at $base failed"
  done
  curl -sf -o /dev/null -T "$WORK/meta.bin" -H @"$AUTH_HEADER" "$DAV/meta.bin"
  [ "$(curl -sf -X PROPFIND -H 'Depth: 1' -H @"$AUTH_HEADER" --data-binary @"$WORK/propfind.xml" "$DAV/many/" | grep -o '<D:response>' | wc -l)" = 1001 ] || davfail "lading's PROPFIND of the collection does not list 1,000 entries"
  for r in $(seq 0 "$ROUNDS"); do
    for s in lading rclone; do
      case $s in
        lading) d0=$(load "$DURATION" "$DAV/meta.bin" dav-d0); d1=$(WRK_TIMEOUT=30s load "$DURATION" "$DAV/many/" dav-d1) ;;
        rclone) d0=$(load "$DURATION" "$RCLONE/meta.bin" rc-d0); d1=$(WRK_TIMEOUT=30s load "$DURATION" "$RCLONE/many/" rc-d1) ;;
      esac
      # Round 0 warms both up.
      if [ "$r" -gt 0 ]; then echo "d0 $s $d0" >> "$rows"; echo "d1 $s $d1" >> "$rows"; fi
    done
  done
  echo ' WebDAV PROPFIND done' >&2
  curl -sf -o /dev/null -X MKCOL -H @"$AUTH_HEADER" "$DAV/small"
  curl -sf -o /dev/null -X MKCOL "$RCLONE/small"
  for r in $(seq 0 "$ROUNDS"); do
    for s in lading rclone; do
      case $s in
        lading) base=$LADING; prefix="/dav/$ZONE/home/bench/small"; token=$BENCH_TOKEN ;;
        rclone) base=$RCLONE; prefix=/small; token= ;;
      esac
      settle
      out=$(PUT_TOKEN=$token PUT_PREFIX=$prefix PUT_RUN="d$r" wrk -t1 -c"$CONCURRENCY" -d"$DURATION"s -s "$WORK/put.lua" "$base")
      grep -q 'Non-2xx\|Socket errors' <<<"$out" && { echo "$out" >&2; davfail "wrk WebDAV PUT $s had errors"; }
      if [ "$r" -gt 0 ]; then echo "puts $s $(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")" >> "$rows"; fi
    done
  done
  echo ' WebDAV small objects done' >&2
  davxfer() { # server up|down file -> seconds
    local size out code secs bytes
    size=$(stat -c %s "$3")
    case "$1/$2" in
      lading/up) out=$(curl -s -o "$WORK/resp" -w '%{http_code} %{time_total} %{size_upload}' -T "$3" -H @"$AUTH_HEADER" "$DAV/f") ;;
      lading/down) out=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' -H @"$AUTH_HEADER" "$DAV/f") ;;
      rclone/up) out=$(curl -s -o "$WORK/resp" -w '%{http_code} %{time_total} %{size_upload}' -T "$3" "$RCLONE/f") ;;
      rclone/down) out=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' "$RCLONE/f") ;;
    esac
    read -r code secs bytes <<<"$out"
    case "$code" in 200|201|204) ;; *) davfail "WebDAV $1 $2 answered $code: $(head -c 400 "$WORK/resp" 2>/dev/null)" ;; esac
    [ "$bytes" = "$size" ] || davfail "WebDAV $1 $2 moved $bytes bytes, expected $size"
    echo "$secs"
  }
  [ -f "$WORK/files/small" ] || { mkdir -p "$WORK/files"; head -c $((10 * 1024 * 1024)) /dev/urandom > "$WORK/files/small"; }
  head -c $((LARGE_MIB * 1024 * 1024)) /dev/urandom > "$WORK/files/large"
  for spec in "small:$ROUNDS_SMALL" "large:$ROUNDS_LARGE"; do
    IFS=: read -r key n <<<"$spec"
    for r in $(seq 0 "$n"); do
      [ "$key" = large ] && [ "$r" -eq 0 ] && continue
      for d in up down; do
        for s in $( [ $((r % 2)) = 0 ] && echo lading rclone || echo rclone lading ); do
          settle
          secs=$(davxfer "$s" "$d" "$WORK/files/$key")
          if [ "$r" -gt 0 ]; then echo "$key-$d $s $secs" >> "$rows"; fi
        done
      done
    done
  done
  rm -f "$WORK/files/large" "$WORK/rclone-root/f"
  echo ' WebDAV transfers done' >&2
  local dmed; dmed() { awk -v k="$1" -v s="$2" '$1 == k && $2 == s { print $3 }' "$rows" | median; }
  local dmbs; dmbs() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f", b / t / 1e6 }'; }
  drow() { awk -v n="$1" -v l="$2" -v r="$3" 'BEGIN { printf "| %-46s | %10s | %10s | %8s |\n", n, l, r, (r == 0 ? "-" : sprintf("%.2f", l / r)) }'; }
  echo
  printf '| %-46s | %10s | %10s | %8s |\n' 'WebDAV (more is better)' 'lading' 'rclone' '÷ rclone'
  printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..48})" ------------ ------------ ----------
  drow 'PROPFIND Depth 0 of an object, req/s' "$(dmed d0 lading)" "$(dmed d0 rclone)"
  drow 'PROPFIND Depth 1 of 1,000 entries, req/s' "$(dmed d1 lading)" "$(dmed d1 rclone)"
  drow "small objects created/s (PUT, $CONCURRENCY in flight)" "$(dmed puts lading)" "$(dmed puts rclone)"
  for spec in "small:10 MiB:$((10 * 1024 * 1024))" "large:$LARGE_MIB MiB:$((LARGE_MIB * 1024 * 1024))"; do
    IFS=: read -r key label bytes <<<"$spec"
    drow "$label upload (PUT), MB/s" "$(dmbs "$bytes" "$(dmed "$key-up" lading)")" "$(dmbs "$bytes" "$(dmed "$key-up" rclone)")"
    drow "$label download (GET), MB/s" "$(dmbs "$bytes" "$(dmed "$key-down" lading)")" "$(dmbs "$bytes" "$(dmed "$key-down" rclone)")"
  done
  echo
  echo "(A Depth 1 answer is ~360 KB; its requests may take up to 30 s before wrk counts them as errors.)"
  echo "Medians of $ROUNDS rounds of ${DURATION} s after a warm-up round (wrk -t1: PROPFIND with -c$CONNECTIONS, PUT with -c$CONCURRENCY),"
  echo "$ROUNDS_SMALL rounds of 10 MiB and $ROUNDS_LARGE of $LARGE_MIB MiB (curl). lading: /dav with a bearer token, every object flushed"
  echo "to disk before the answer; rclone serve webdav: no authentication, no flush."
}
