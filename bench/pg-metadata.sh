#!/usr/bin/env bash
# The metadata GET of one data object (bearer token, warm) on a node with the SQLite catalog
# and on a node with the PostgreSQL catalog, one after the other on this machine: requests per
# second (wrk -t1), the CPU the node spends per request, and, for PostgreSQL, the CPU its
# backends serving the node spend per request and the statements (transactions) and tuples
# read per request, from pg_stat_database of a database of the bench's own (created and
# dropped here, so nobody else's statements are counted). The backends are those whose
# application_name is the bench's. The SQLite node and the PostgreSQL node are measured in
# alternate rounds, so they see the same background load; the load average is printed with
# the figures.
#
# With BEFORE=<another checkout of lading> (its node_modules installed), a third node, on
# PostgreSQL too, runs that checkout's code in a database of its own and is measured in the
# same rounds: a before/after comparison in one run.
#
# With OBJECTS=N the GETs go round N objects (obj-0 … obj-N-1, uploaded to every node first)
# instead of one; with UPLOADS=R a second client uploads a new 1-byte object to the node being
# measured about R times a second (one curl at a time, a pause of 1/R s between) while the GETs
# run: what a node's memory of the catalog keeps while others write, reads of many paths
# among uploads, as a data centre's nodes see them. The uploads each round made are printed.
#
# Usage: bench/pg-metadata.sh   (env: PG_URL=postgresql://postgres@127.0.0.1:5432/postgres
#                                ROUNDS=3 DURATION=10 WARMUP=5 CONNECTIONS=16 BEFORE=
#                                OBJECTS=1 UPLOADS=0)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
need wrk wrk

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-5}
CONNECTIONS=${CONNECTIONS:-16}
BEFORE=${BEFORE:-}
OBJECTS=${OBJECTS:-1}
UPLOADS=${UPLOADS:-0}

echo "lading metadata GET, SQLite and PostgreSQL catalogs, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$OBJECTS" = 1 ] && [ "$UPLOADS" = 0 ] || echo "GETs round $OBJECTS objects; about $UPLOADS uploads a second to the PostgreSQL node measured (their statements and backend CPU count in the per-GET figures)"
source "$BENCH_DIR/pg-lib.sh"
[ -z "$BEFORE" ] || pg_database "${DB}_before"

node_up sqlite
read -r SQ_PID SQ_URL SQ_TOKEN < "$WORK/sqlite.node"
node_up postgres "${PG_NODE_ENV[@]}"
read -r PG_PID PG_URL_NODE PG_TOKEN < "$WORK/postgres.node"
if [ -n "$BEFORE" ]; then
  LIB_DIR="$BEFORE/bench" node_up before LADING_CATALOG_DRIVER=postgres \
    LADING_CATALOG_URL="${PG_URL%/*}/${DB}_before?application_name=$APP" LADING_CATALOG_SCHEMA=bench
  read -r BF_PID BF_URL BF_TOKEN < "$WORK/before.node"
fi

# The objects the GETs read: meta.bin, or obj-0 … obj-N-1 in turn (the URL's path is the prefix).
if [ "$OBJECTS" -gt 1 ]; then
  for node in "$SQ_URL $SQ_TOKEN" "$PG_URL_NODE $PG_TOKEN" ${BEFORE:+"$BF_URL $BF_TOKEN"}; do
    read -r url token <<<"$node"
    for i in $(seq 0 $((OBJECTS - 1))); do
      curl -sf -o /dev/null -X PUT --data-binary "o$i" -H 'Content-Type: application/octet-stream' -H "@-" "$url/obj-$i" <<<"Authorization: Bearer $token" \
        || { echo "bench: uploading obj-$i to $url failed" >&2; exit 1; }
    done
  done
  cat >> "$WORK/auth.lua" <<'LUA'
local n, i = tonumber(os.getenv("BENCH_OBJECTS")), 0
request = function()
  i = (i + 1) % n
  return wrk.format(nil, wrk.path:gsub("/meta%.bin$", "") .. "/obj-" .. i)
end
LUA
fi
export BENCH_OBJECTS=$OBJECTS
# About UPLOADS new objects a second to `url` until `stop-file` is gone; the count goes to `count-file`.
uploader() { # url token stop-file count-file
  local n=0 pause
  pause=$(awk -v r="$UPLOADS" 'BEGIN { printf "%.3f", 1 / r }')
  while [ -e "$3" ]; do
    curl -sf -o /dev/null -X PUT --data-binary x -H 'Content-Type: application/octet-stream' -H "@-" "$1/up-$$-$RANDOM-$n" <<<"Authorization: Bearer $2" && n=$((n + 1))
    sleep "$pause"
  done
  echo "$n" > "$4"
}

BENCH_TOKEN=$SQ_TOKEN wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/auth.lua" "$SQ_URL/meta.bin" >/dev/null
BENCH_TOKEN=$PG_TOKEN wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/auth.lua" "$PG_URL_NODE/meta.bin" >/dev/null
[ -z "$BEFORE" ] || BENCH_TOKEN=$BF_TOKEN wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/auth.lua" "$BF_URL/meta.bin" >/dev/null

hz=$(getconf CLK_TCK)
# One PostgreSQL node's round: "req/s node-µs backend-µs statements tuples" per request.
pg_round() { # pid url token database
  local tx0 tup0 tx1 tup1 out rps cpu reqs
  read -r tx0 tup0 < <(pg_stat "$4")
  backend_ticks "$4" > "$WORK/ticks0"
  if [ "$UPLOADS" != 0 ]; then
    touch "$WORK/uploading"
    uploader "$2" "$3" "$WORK/uploading" "$WORK/uploads-$4" &
  fi
  out=$(BENCH_TOKEN=$3 wrk_cpu "$1" "$DURATION" "$2/meta.bin" -s "$WORK/auth.lua")
  if [ "$UPLOADS" != 0 ]; then
    rm -f "$WORK/uploading"
    wait $!
  fi
  backend_ticks "$4" > "$WORK/ticks1"
  read -r rps cpu <<<"$out"
  # NOTE: a backend reports its statistics at most once a second, when idle; one that
  # listens (the node's LISTEN connections), only after 10 s idle.
  sleep 11
  read -r tx1 tup1 < <(pg_stat "$4")
  reqs=$(awk -v r="$rps" -v d="$DURATION" 'BEGIN { printf "%d", r * d }')
  # the two pg_stat queries themselves: one transaction each (the first one's is counted)
  awk -v pr="$rps" -v pc="$cpu" -v t="$(backend_ticks_between "$WORK/ticks0" "$WORK/ticks1")" -v hz="$hz" -v n="$reqs" -v tx="$((tx1 - tx0 - 1))" -v tup="$((tup1 - tup0))" \
    'BEGIN { printf "%s %s %.1f %.2f %.1f\n", pr, pc, t / hz * 1e6 / n, tx / n, tup / n }'
}

: > "$WORK/rows"
for r in $(seq "$ROUNDS"); do
  read -r sq_rps sq_cpu < <(BENCH_TOKEN=$SQ_TOKEN wrk_cpu "$SQ_PID" "$DURATION" "$SQ_URL/meta.bin" -s "$WORK/auth.lua")
  sleep 1.5
  pg=$(pg_round "$PG_PID" "$PG_URL_NODE" "$PG_TOKEN" "$DB")
  bf='- - - - -'
  [ -z "$BEFORE" ] || bf=$(pg_round "$BF_PID" "$BF_URL" "$BF_TOKEN" "${DB}_before")
  echo "$sq_rps $sq_cpu $pg $bf" >> "$WORK/rows"
  read -r pr pc pb ps pt <<<"$pg"
  ups=''
  [ "$UPLOADS" = 0 ] || ups=" | uploads meanwhile: postgres $(cat "$WORK/uploads-$DB")${BEFORE:+, before $(cat "$WORK/uploads-${DB}_before")}"
  echo "round $r: sqlite $sq_rps req/s $sq_cpu µs/req | postgres $pr req/s, node $pc µs/req, backends $pb µs/req, $ps statements/req, $pt tuples/req${BEFORE:+ | before: $bf}$ups (load $(cut -d' ' -f1 /proc/loadavg))"
done

col() { awk -v c="$1" '{ print $c }' "$WORK/rows" | median; }
echo
printf '%-34s %10s %12s %14s %10s %9s %8s\n' 'metadata GET (median of rounds)' 'req/s' 'node µs/req' 'backend µs/req' 'stmts/req' 'tuples' '÷ SQLite'
printf '%-34s %10.0f %12.1f %14s %10s %9s %8s\n' 'SQLite catalog' "$(col 1)" "$(col 2)" '-' '-' '-' '1'
row() { # label first-column
  local c=$2
  printf '%-34s %10.0f %12.1f %14.1f %10.2f %9.1f %8.2f\n' "$1" "$(col "$c")" "$(col $((c + 1)))" "$(col $((c + 2)))" \
    "$(col $((c + 3)))" "$(col $((c + 4)))" "$(awk -v s="$(col 1)" -v p="$(col "$c")" 'BEGIN { print p / s }')"
}
row 'PostgreSQL catalog' 3
[ -z "$BEFORE" ] || row "PostgreSQL catalog, $(basename "$BEFORE")" 8
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
