#!/usr/bin/env bash
# The lifecycle paths: a collection downloaded as one ZIP (`?download=zip`) against the same
# bytes downloaded as one data object from lading and as one file from nginx (sendfile, one
# worker); the ZIP of a collection of 1,000 small objects; a server-side copy of that
# collection into another; a move of it (and of one data object) into another collection and
# back. Medians of ROUNDS rounds, with the CPU time lading's process used. Talks only to
# 127.0.0.1 and cleans up after itself.
#
# Usage: bench/lifecycle.sh   (about 1 minute; env: ROUNDS=5 ZIP_FILES=64 ZIP_FILE_MIB=4
#                              OBJECTS=1000 PARALLEL=8; any LADING_<KEY>)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl

ROUNDS=${ROUNDS:-5}
ZIP_FILES=${ZIP_FILES:-64}
ZIP_FILE_MIB=${ZIP_FILE_MIB:-4}
OBJECTS=${OBJECTS:-1000}
PARALLEL=${PARALLEL:-8}

echo "lading lifecycle benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
env | grep '^LADING_' | sed 's/^/  /' || true
start_nginx
start_lading
fail() { echo "bench: $*" >&2; exit 1; }
Z="/$ZONE/home/bench"
mkcol() { # path
  printf '{"path":"%s"}' "$1" > "$WORK/mkdir.json"
  curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H @"$AUTH_HEADER" --data-binary @"$WORK/mkdir.json" "$LADING/api/registered" || fail "cannot create $1"
}
json_call() { # method url json -> seconds (fails unless 2xx)
  local out code secs
  printf '%s' "$3" > "$WORK/call.json"
  out=$(curl -s -o "$WORK/resp" -w '%{http_code} %{time_total}' -X "$1" -H 'Content-Type: application/json' -H @"$AUTH_HEADER" --data-binary @"$WORK/call.json" "$2")
  read -r code secs <<<"$out"
  case "$code" in 2??) ;; *) fail "$1 $2 answered $code: $(head -c 400 "$WORK/resp")" ;; esac
  echo "$secs"
}
get() { # url auth? -> "seconds bytes"
  local out code secs bytes
  if [ "$2" = auth ]; then out=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' -H @"$AUTH_HEADER" "$1")
  else out=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' "$1"); fi
  read -r code secs bytes <<<"$out"
  [ "$code" = 200 ] || fail "GET $1 answered $code"
  echo "$secs $bytes"
}
RES="$WORK/results"
: > "$RES"
timed() { # key command… : runs the command, records "key seconds cpu-ticks-of-lading"
  local t0 t1 secs
  t0=$(cpu_ticks "$LADING_PID")
  secs=$("${@:2}")
  t1=$(cpu_ticks "$LADING_PID")
  echo "$1 ${secs%% *} $((t1 - t0)) ${secs#* }" >> "$RES"
}

# --- the data: ZIP_FILES files of ZIP_FILE_MIB MiB in a collection, the same bytes as one file
# (lading and nginx), and a collection of OBJECTS small objects.
mkdir -p "$WORK/files"
mkcol "$Z/set"
: > "$WORK/files/single"
for i in $(seq -w 1 "$ZIP_FILES"); do
  head -c $((ZIP_FILE_MIB * 1024 * 1024)) /dev/urandom > "$WORK/files/part"
  cat "$WORK/files/part" >> "$WORK/files/single"
  curl -sf -o /dev/null -T "$WORK/files/part" -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/set/part-$i.bin" || fail "upload part $i"
done
curl -sf -o /dev/null -T "$WORK/files/single" -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/single.bin" || fail 'upload single'
cp "$WORK/files/single" "$WORK/nginx-root/single.bin"
BYTES=$(stat -c %s "$WORK/files/single")
rm -f "$WORK/files/part" "$WORK/files/single"
mkcol "$Z/many"; mkcol "$Z/a"; mkcol "$Z/b"; mkcol "$Z/copies"
printf 'small object\n' > "$WORK/files/small"
seq -w 1 "$OBJECTS" | xargs -P "$PARALLEL" -I{} curl -sf -o /dev/null -T "$WORK/files/small" -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/many/o{}.txt" \
  || fail 'upload of the small objects'
curl -sf -o /dev/null -T "$WORK/files/small" -H 'Content-Type: application/octet-stream' -H @"$AUTH_HEADER" "$HOME_URL/a/one.txt"
curl -sf -o /dev/null -X PATCH -H 'Content-Type: application/json' -H @"$AUTH_HEADER" --data-binary "{\"destination\":\"$Z/a\"}" "$HOME_URL/many" || fail 'move many into a'
echo 'data ready' >&2

# --- rounds, interleaved. Warm-up round 0 is not recorded.
for r in $(seq 0 "$ROUNDS"); do
  rec() { if [ "$r" -gt 0 ]; then timed "$@"; else "${@:2}" >/dev/null; fi; }
  rec zip get "$HOME_URL/set?download=zip" auth
  rec single get "$HOME_URL/single.bin?download=true" auth
  rec nginx get "$NGINX/single.bin" none
  from=a; to=b; [ $((r % 2)) -eq 1 ] && { from=b; to=a; }
  rec zipmany get "$HOME_URL/$from/many?download=zip" auth
  rec movecoll json_call PATCH "$HOME_URL/$from/many" "{\"destination\":\"$Z/$to\"}"
  rec moveone json_call PATCH "$HOME_URL/$from/one.txt" "{\"destination\":\"$Z/$to\"}"
  rec copycoll json_call POST "$LADING/api/registered$Z/$to/many" "{\"copy_to\":\"$Z/copies\",\"newname\":\"many-$r\"}"
  # NOTE: the next round moves them back; the copies stay, each round's under its own name.
  printf '.' >&2
done
echo ' done' >&2
n=$(curl -sf -H @"$AUTH_HEADER" "$HOME_URL/copies/many-1/?max_keys=5000" | grep -o '"o[0-9]*\.txt"' | sort -u | wc -l)
[ "$n" = "$OBJECTS" ] || fail "the copy has $n objects, not $OBJECTS"

med() { awk -v k="$1" '$1 == k { print $2 }' "$RES" | median; }
cpu() { awk -v k="$1" -v hz="$(getconf CLK_TCK)" '$1 == k { t += $3; n++ } END { printf "%.0f", 1000 * t / hz / n }' "$RES"; }
mbs() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f", b / t / 1e6 }'; }
ms() { awk -v t="$1" 'BEGIN { printf "%.0f", t * 1000 }'; }
zip_bytes=$(awk '$1 == "zip" { print $4; exit }' "$RES")
echo
printf '| %-62s | %10s | %12s |\n' '' 'median' 'lading cpu ms'
printf '|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..64})" ------------ --------------
printf '| %-62s | %6s MB/s | %12s |\n' "ZIP of $ZIP_FILES × $ZIP_FILE_MIB MiB (payload MB/s; $zip_bytes bytes on the wire)" "$(mbs "$BYTES" "$(med zip)")" "$(cpu zip)"
printf '| %-62s | %6s MB/s | %12s |\n' "the same $((ZIP_FILES * ZIP_FILE_MIB)) MiB as one object (download=true)" "$(mbs "$BYTES" "$(med single)")" "$(cpu single)"
printf '| %-62s | %6s MB/s | %12s |\n' "the same $((ZIP_FILES * ZIP_FILE_MIB)) MiB as one file from nginx (sendfile)" "$(mbs "$BYTES" "$(med nginx)")" '-'
printf '| %-62s | %9s ms | %12s |\n' "ZIP of a collection of $OBJECTS objects of 13 bytes" "$(ms "$(med zipmany)")" "$(cpu zipmany)"
printf '| %-62s | %9s ms | %12s |\n' "server-side copy of the $OBJECTS-object collection" "$(ms "$(med copycoll)")" "$(cpu copycoll)"
printf '| %-62s | %9s ms | %12s |\n' "move of the $OBJECTS-object collection into another" "$(ms "$(med movecoll)")" "$(cpu movecoll)"
printf '| %-62s | %9s ms | %12s |\n' 'move of one data object into another collection' "$(ms "$(med moveone)")" "$(cpu moveone)"
echo
echo "Medians of $ROUNDS rounds after a warm-up round; curl's time_total; lading's CPU (user + system) per operation."
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
