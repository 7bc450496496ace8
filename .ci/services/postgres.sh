# shellcheck shell=bash
# PostgreSQL for the PostgreSQL catalog tests: the machine's own server on 127.0.0.1:5432
# (trust authentication for 127.0.0.1, database `test`).
#
# Sourced by .ci/run (or by hand: `source .ci/services/postgres.sh`). Checks that PostgreSQL
# answers at $LADING_TEST_PG_URL (default postgresql://postgres@127.0.0.1:5432/test); when it
# does not, starts the installed cluster with pg_ctlcluster and, when only the database is
# missing, creates it. Exports LADING_TEST_PG_URL. Each test run makes and drops its own
# schemas in that database. Fails (non-zero, with a message saying what is missing) when it cannot.

LADING_TEST_PG_URL="${LADING_TEST_PG_URL:-postgresql://postgres@127.0.0.1:5432/test}"

_lading_postgres_setup() (
  set -euo pipefail
  url="$LADING_TEST_PG_URL"
  fail() { echo "postgres.sh: $*" >&2; exit 1; }
  command -v psql >/dev/null 2>&1 || fail "'psql' is missing: install the Debian package postgresql (server and client)."
  answering() { psql "$url" -Atqc 'SELECT 1' >/dev/null 2>&1; }
  answering && exit 0

  if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
    [ -n "$version" ] || fail "no PostgreSQL cluster in /etc/postgresql: install the Debian package postgresql."
    pg_ctlcluster --skip-systemctl-redirect "$version" main start \
      || fail "could not start PostgreSQL $version (pg_ctlcluster $version main start); see /var/log/postgresql/."
    [ -n "${LADING_CI_CLEANUP:-}" ] && echo "pg_ctlcluster --skip-systemctl-redirect $version main stop" >>"$LADING_CI_CLEANUP"
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
    pg_isready -q -h 127.0.0.1 -p 5432 || fail "PostgreSQL $version started but does not answer on 127.0.0.1:5432."
  fi
  if ! answering; then
    # NOTE: the server answers but refuses the URL; the usual cause on a new machine is the
    # missing database, which the postgres superuser can create over the local socket.
    db="${url##*/}"; db="${db%%\?*}"
    if command -v runuser >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      runuser -u postgres -- psql -Atqc "SELECT 1 FROM pg_database WHERE datname = '$db'" 2>/dev/null | grep -q 1 \
        || runuser -u postgres -- createdb "$db" 2>/dev/null || true
    fi
  fi
  answering || fail "PostgreSQL answers on 127.0.0.1:5432 but refuses $url: the tests need trust authentication for 127.0.0.1 (pg_hba.conf) and a database '${url##*/}'."
)

if _lading_postgres_setup; then
  export LADING_TEST_PG_URL
  echo "PostgreSQL answering at $LADING_TEST_PG_URL"
else
  echo "postgres.sh: PostgreSQL for the tests is not available (see above)." >&2
  # NOTE: `return` when sourced (so .ci/run's `set -e` stops the run), `exit` when executed.
  return 1 2>/dev/null || exit 1
fi
