# Shared by the PostgreSQL benches (pg-metadata.sh, pg-ceiling.sh), sourced after lib.sh: a
# database of the bench's own, $DB (created here and dropped on exit, so pg_stat_database counts
# only the node's statements; pg_database makes more), nodes started in the background, and the PostgreSQL side's
# counters: statements, tuples read, WAL written, and the CPU of the backends serving the node
# (those whose application_name is the bench's). NOTE: a backend reports its statistics at most
# once a second, when idle, and one that listens (a node's LISTEN connections) only after 10 s
# idle: read pg_stat at least 11 s after a run.
need psql postgresql-client

PG_URL=${PG_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
DB="lading_bench_$$"
APP="lading-bench-$$"
BENCH_DB_URL="${PG_URL%/*}/$DB"
BENCH_DBS=()
pg_database() { # name: creates the database `name`, dropped again on exit
  psql -qAt "$PG_URL" -c "CREATE DATABASE $1" >/dev/null
  BENCH_DBS+=("$1")
}
drop_dbs() {
  local d
  for d in "${BENCH_DBS[@]}"; do psql -qAt "$PG_URL" -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1 || true; done
}
trap 'cleanup; drop_dbs' EXIT
pg_database "$DB"

cat > "$WORK/auth.lua" <<'LUA'
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
LUA

# One node: start_lading with the environment given, one small object `meta.bin`; its pid, URL
# and token are written to $WORK/<name>.node. LIB_DIR names the bench/ of the checkout to run
# (this one by default).
node_up() { # name [VAR=value…]
  local name=$1
  shift
  env "$@" bash -c "source '${LIB_DIR:-$BENCH_DIR}/lib.sh'; WORK='$WORK/$name'; mkdir -p \"\$WORK\"; trap - EXIT;
    start_lading; echo \"\$LADING_PID \$HOME_URL \$BENCH_TOKEN\" > '$WORK/$name.node'; wait" &
  PIDS+=("$!")
  local i
  for i in $(seq 300); do [ -s "$WORK/$name.node" ] && break; sleep 0.1; done
  [ -s "$WORK/$name.node" ] || { echo "bench: the $name node did not start" >&2; exit 1; }
  read -r pid url token < "$WORK/$name.node"
  PIDS+=("$pid")
  head -c 4096 /dev/urandom > "$WORK/meta.bin"
  curl -sf -o /dev/null -T "$WORK/meta.bin" -H 'Content-Type: application/octet-stream' -H "@-" "$url/meta.bin" <<<"Authorization: Bearer $token"
}

# The node on PostgreSQL: environment for node_up.
PG_NODE_ENV=(LADING_CATALOG_DRIVER=postgres "LADING_CATALOG_URL=$BENCH_DB_URL?application_name=$APP" LADING_CATALOG_SCHEMA=bench)

pg_stat() { # [database] -> "transactions tuples-read" of that database (the bench's) so far
  local d=${1:-$DB}
  psql -qAt -F' ' "${PG_URL%/*}/$d" -c "SELECT xact_commit + xact_rollback, tup_returned + tup_fetched FROM pg_stat_database WHERE datname = '$d'"
}
wal_lsn() { # -> the WAL position, in bytes
  psql -qAt "$BENCH_DB_URL" -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint"
}
backend_ticks() { # [database] -> "pid ticks" lines: the CPU ticks of each PostgreSQL backend serving the bench's node there
  local d=${1:-$DB} p t
  for p in $(psql -qAt "${PG_URL%/*}/$d" -c "SELECT pid FROM pg_stat_activity WHERE application_name = '$APP' AND datname = '$d'"); do
    t=$(cpu_ticks "$p" 2>/dev/null) && echo "$p $t"
  done
  return 0
}
# The backends' CPU ticks between two backend_ticks samples: a backend in both counts its
# difference, one that started between them all its ticks; one that ended between them cannot
# be read any more, so the figure is then a lower bound (a warning says so).
backend_ticks_between() { # before-file after-file -> ticks
  awk 'NR == FNR { start[$1] = $2; next } { total += ($1 in start) ? $2 - start[$1] : $2; seen[$1] = 1 }
    END { for (p in start) if (!(p in seen)) lost++
          if (lost) printf "bench: %d PostgreSQL backend(s) ended during a run: its CPU figure is a lower bound\n", lost > "/dev/stderr"
          print total + 0 }' "$1" "$2"
}
