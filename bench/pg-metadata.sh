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
# Usage: bench/pg-metadata.sh   (env: PG_URL=postgresql://postgres@127.0.0.1:5432/postgres
#                                ROUNDS=3 DURATION=10 WARMUP=5 CONNECTIONS=16 BEFORE=)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
need wrk wrk

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-5}
CONNECTIONS=${CONNECTIONS:-16}
BEFORE=${BEFORE:-}

echo "lading metadata GET, SQLite and PostgreSQL catalogs, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
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

BENCH_TOKEN=$SQ_TOKEN wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/auth.lua" "$SQ_URL/meta.bin" >/dev/null
BENCH_TOKEN=$PG_TOKEN wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/auth.lua" "$PG_URL_NODE/meta.bin" >/dev/null
[ -z "$BEFORE" ] || BENCH_TOKEN=$BF_TOKEN wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/auth.lua" "$BF_URL/meta.bin" >/dev/null

hz=$(getconf CLK_TCK)
# One PostgreSQL node's round: "req/s node-µs backend-µs statements tuples" per request.
pg_round() { # pid url token database
  local tx0 tup0 tx1 tup1 out rps cpu reqs
  read -r tx0 tup0 < <(pg_stat "$4")
  backend_ticks "$4" > "$WORK/ticks0"
  out=$(BENCH_TOKEN=$3 wrk_cpu "$1" "$DURATION" "$2/meta.bin" -s "$WORK/auth.lua")
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
  echo "round $r: sqlite $sq_rps req/s $sq_cpu µs/req | postgres $pr req/s, node $pc µs/req, backends $pb µs/req, $ps statements/req, $pt tuples/req${BEFORE:+ | before: $bf} (load $(cut -d' ' -f1 /proc/loadavg))"
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
