#!/usr/bin/env bash
# The figures a cluster on one PostgreSQL is sized from: for a metadata GET, a small upload and
# a listing, on one node with the PostgreSQL catalog (bytes on its local disk), the requests per
# second (wrk -t1), the CPU the node spends per request, the CPU its PostgreSQL backends spend
# per request, the statements and tuples read per request, and the WAL written per request; the
# three workloads alternate round by round, so they see the same background load. Then the
# ceiling model of bench/README.md ("How many nodes one PostgreSQL serves") from those figures:
# the requests per second PostgreSQL's cores bound a whole cluster to, how many nodes reach that
# bound, and the WAL and connections it takes.
#
# Usage: bench/pg-ceiling.sh   (env: PG_URL=postgresql://postgres@127.0.0.1:5432/postgres
#          ROUNDS=3 DURATION=8 WARMUP=3 CONNECTIONS=16 PUT_CONNECTIONS=8 LIST_ENTRIES=100
#          PRELOAD=100000: data objects put into the catalog first, so PostgreSQL plans as
#          for a catalog in use, not a near-empty one (where it rightly prefers scanning tables);
#          PG_CORES=16 NODE_CORES=2 POOL=10 MAX_CONNECTIONS=100: the machines to size for)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
need wrk wrk

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8}
WARMUP=${WARMUP:-3}
CONNECTIONS=${CONNECTIONS:-16}
PUT_CONNECTIONS=${PUT_CONNECTIONS:-8}
LIST_ENTRIES=${LIST_ENTRIES:-100}
PRELOAD=${PRELOAD:-100000}
PG_CORES=${PG_CORES:-16}
NODE_CORES=${NODE_CORES:-2}
POOL=${POOL:-10}
MAX_CONNECTIONS=${MAX_CONNECTIONS:-100}
source "$BENCH_DIR/pg-lib.sh"

echo "lading on PostgreSQL: the cost of a GET, a small upload and a listing, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
node_up postgres "${PG_NODE_ENV[@]}"
read -r PID URL TOKEN < "$WORK/postgres.node"
export BENCH_TOKEN=$TOKEN

# The upload's collection, and the listing's collection of LIST_ENTRIES small objects.
for c in dir list; do
  printf '{"path":"/%s/home/bench/%s"}' "$ZONE" "$c" > "$WORK/mkdir.json"
  curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H "@-" --data-binary @"$WORK/mkdir.json" "${URL%/"$ZONE"/home/bench}" <<<"Authorization: Bearer $TOKEN"
done
printf 'x' > "$WORK/one.bin"
for i in $(seq "$LIST_ENTRIES"); do
  printf 'url = "%s/list/e%05d"\nupload-file = "%s"\noutput = "/dev/null"\n' "$URL" "$i" "$WORK/one.bin"
done > "$WORK/list.cfg"
curl -sf --no-progress-meter --parallel --parallel-max 8 -H 'Content-Type: application/octet-stream' -H "@-" -K "$WORK/list.cfg" <<<"Authorization: Bearer $TOKEN" \
  || { echo "bench: creating $LIST_ENTRIES objects failed" >&2; exit 1; }
[ "$(curl -sf -H "@-" "$URL/list/" <<<"Authorization: Bearer $TOKEN" | grep -o '"e[0-9]*"' | wc -l)" -ge "$LIST_ENTRIES" ] \
  || echo "bench: note: the listing does not name $LIST_ENTRIES entries as \"eNNNNN\"; check the listing URL" >&2
# NOTE: straight into the table (as a bulk import would), in a collection of their own.
printf '{"path":"/%s/home/bench/preload"}' "$ZONE" > "$WORK/mkdir.json"
curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H "@-" --data-binary @"$WORK/mkdir.json" "${URL%/"$ZONE"/home/bench}" <<<"Authorization: Bearer $TOKEN"
psql -qAt "$BENCH_DB_URL" -c "INSERT INTO bench.entities (uid, path, parent, name, kind, owner, size, checksum, created_at, modified_at)
  SELECT gen_random_uuid()::text, '/$ZONE/home/bench/preload/p' || g, '/$ZONE/home/bench/preload', 'p' || g, 'dataobject', 'bench', 1,
    'sha2:LXEWQrcmsEQBYnyp+6wy9chTD7GQPMTbAiWHF5IaSIE=', 0, 0 FROM generate_series(1, $PRELOAD) g; ANALYZE" >/dev/null
put_lua "$WORK/put.lua"

# NOTE: PUT_PREFIX must be a path: the URL less its scheme and host, with its leading slash.
URL_PATH="/${URL#http://*/}"
run() { # workload round -> "req/s node-µs" (wrk_cpu)
  case $1 in
    get) wrk_cpu "$PID" "$DURATION" "$URL/meta.bin" -s "$WORK/auth.lua" ;;
    list) wrk_cpu "$PID" "$DURATION" "$URL/list/" -s "$WORK/auth.lua" ;;
    put) CONNECTIONS=$PUT_CONNECTIONS PUT_TOKEN=$TOKEN PUT_PREFIX="$URL_PATH/dir" PUT_RUN="r$2" \
      wrk_cpu "$PID" "$DURATION" "${URL%%/api/*}" -s "$WORK/put.lua" ;;
  esac
}

# NOTE: every workload once before the rounds, so the node's pool has opened its connections.
for w in get put list; do DURATION=$WARMUP run "$w" warm > /dev/null; done
: > "$WORK/rows"
hz=$(getconf CLK_TCK)
for r in $(seq "$ROUNDS"); do
  for w in get put list; do
    sleep 1.5
    read -r tx0 tup0 < <(pg_stat); wal0=$(wal_lsn); backend_ticks > "$WORK/ticks0"
    read -r rps node_us < <(run "$w" "$r")
    backend_ticks > "$WORK/ticks1"
    # NOTE: the node's LISTEN connection (its barriers) reports its statistics only after 10 s idle.
    sleep 11
    read -r tx1 tup1 < <(pg_stat); wal1=$(wal_lsn)
    # the counters' own queries: pg_stat, wal_lsn and backend_ticks are one transaction each
    # NOTE: WAL is the whole cluster's: run with nothing else writing to it.
    awk -v w="$w" -v r="$r" -v rps="$rps" -v nu="$node_us" -v t="$(backend_ticks_between "$WORK/ticks0" "$WORK/ticks1")" -v hz="$hz" -v d="$DURATION" \
      -v tx=$((tx1 - tx0 - 3)) -v tup=$((tup1 - tup0)) -v wal=$((wal1 - wal0)) -v la="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
      n = rps * d
      printf "round %d %-4s %7.0f req/s, node %6.1f µs/req, PostgreSQL %6.1f µs/req, %5.2f statements/req, %6.1f tuples/req, %7.0f WAL bytes/req (load %s)\n",
        r, w, rps, nu, t / hz * 1e6 / n, tx / n, tup / n, wal / n, la
      print w, rps, nu, t / hz * 1e6 / n, tx / n, tup / n, wal / n > "/dev/stderr"
    }' 2>> "$WORK/rows"
  done
done

col() { awk -v w="$1" -v c="$2" '$1 == w { print $c }' "$WORK/rows" | median; }
echo
printf '%-26s %9s %11s %11s %10s %9s %10s\n' 'median of rounds' 'req/s' 'node µs' 'PG µs' 'stmts' 'tuples' 'WAL B'
for w in get put list; do
  printf '%-26s %9.0f %11.1f %11.1f %10.2f %9.1f %10.0f\n' "$w" "$(col "$w" 2)" "$(col "$w" 3)" "$(col "$w" 4)" "$(col "$w" 5)" "$(col "$w" 6)" "$(col "$w" 7)"
done
echo "(get: one object's metadata, $CONNECTIONS connections; put: 15 bytes to a new name, $PUT_CONNECTIONS in flight; list: a collection of $LIST_ENTRIES, $CONNECTIONS connections; $PRELOAD other objects in the catalog)"
echo
echo "ceiling model: PostgreSQL on $PG_CORES cores, nodes of $NODE_CORES cores, $POOL pool connections a node, max_connections $MAX_CONNECTIONS"
for w in get put list; do
  awk -v w="$w" -v nu="$(col "$w" 3)" -v pu="$(col "$w" 4)" -v wal="$(col "$w" 7)" -v pc="$PG_CORES" -v nc="$NODE_CORES" 'BEGIN {
    cap = pc * 1e6 / pu; node = nc * 1e6 / nu
    printf "  %-4s a cluster is bound at %8.0f req/s by PostgreSQL'"'"'s CPU; one node gives %7.0f req/s, so %5.1f nodes reach it; WAL then %6.1f MB/s\n",
      w, cap, node, cap / node, cap * wal / 1e6
  }'
done
awk -v p="$POOL" -v m="$MAX_CONNECTIONS" 'BEGIN { printf "  connections: %d nodes of %d pooled connections and two LISTEN (job events, memory barriers) each fill max_connections %d (less the superuser reserve of 3)\n", int((m - 3) / (p + 2)), p, m }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
