# shellcheck shell=bash
# A real S3 server for the S3 resource tests: OpenStack Swift (Debian's packages) with the
# s3api middleware and tempauth, all on 127.0.0.1, one replica, devices in a local directory.
#
# Sourced by .ci/run (or by hand: `source .ci/services/swift.sh`). Idempotent: reuses a Swift
# already answering on $LADING_SWIFT_PORT, else writes configs and rings under $LADING_SWIFT_DIR
# (default /tmp/lading-swift) and starts memcached and the four servers there, detached, with
# their logs and pid files in that directory. Then it creates the test bucket and exports:
#   LADING_TEST_S3_ENDPOINT LADING_TEST_S3_ACCESS_KEY LADING_TEST_S3_SECRET_KEY
#   LADING_TEST_S3_REGION LADING_TEST_S3_BUCKET
# Servers run as the user who sources this script (root in CI): every directory they use is
# created by that user, so no ownership change or `swift` system user is needed.
# Fails (non-zero, with a message saying what is missing) when it cannot.
#
# The credentials below are those of a throw-away server bound to the loopback interface.

LADING_SWIFT_DIR="${LADING_SWIFT_DIR:-/tmp/lading-swift}"
LADING_SWIFT_PORT="${LADING_SWIFT_PORT:-18480}"

_lading_swift_setup() (
  set -euo pipefail
  dir="$LADING_SWIFT_DIR"
  port="$LADING_SWIFT_PORT"
  base=$((port + 1)) # object, container and account servers on the three ports after it
  memcached_port=$((port + 10))
  user="$(id -un)"

  fail() { echo "swift.sh: $*" >&2; exit 1; }
  for tool in swift-proxy-server swift-object-server swift-container-server swift-account-server swift-ring-builder memcached curl; do
    command -v "$tool" >/dev/null 2>&1 \
      || fail "'$tool' is missing: install the Debian packages swift swift-proxy swift-account swift-container swift-object memcached curl (listed in .ci/apt-packages)."
  done

  answering() { curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$port/healthcheck" 2>/dev/null; }

  if ! answering; then
    mkdir -p "$dir/srv/d1" "$dir/run" "$dir/log" "$dir/cache"
    if [ ! -f "$dir/object.ring.gz" ]; then
      cat >"$dir/swift.conf" <<EOF
[swift-hash]
swift_hash_path_prefix = lading-test
swift_hash_path_suffix = lading-test
[storage-policy:0]
name = Policy-0
default = yes
EOF
      common="[DEFAULT]
swift_dir = $dir
devices = $dir/srv
mount_check = false
bind_ip = 127.0.0.1
workers = 1
user = $user
log_level = WARNING
recon_cache_path = $dir/cache"
      i=0
      for kind in object container account; do
        kport=$((base + i))
        cat >"$dir/$kind-server.conf" <<EOF
$common
bind_port = $kport

[pipeline:main]
pipeline = $kind-server

[app:$kind-server]
use = egg:swift#$kind

[$kind-replicator]
[$kind-auditor]
[$kind-updater]
EOF
        (cd "$dir" && swift-ring-builder "$kind.builder" create 8 1 1 >/dev/null \
          && swift-ring-builder "$kind.builder" add "r1z1-127.0.0.1:$kport/d1" 1 >/dev/null \
          && swift-ring-builder "$kind.builder" rebalance >/dev/null) \
          || fail "could not build the $kind ring in $dir"
        i=$((i + 1))
      done
      cat >"$dir/proxy-server.conf" <<EOF
$common
bind_port = $port

[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk s3api tempauth copy slo dlo proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true

[filter:s3api]
use = egg:swift#s3api
location = us-east-1

[filter:tempauth]
use = egg:swift#tempauth
user_lading_tester = lading-test-key .admin

[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:$memcached_port

[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:bulk]
use = egg:swift#bulk
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
EOF
    fi

    start() { # name, command...
      local name=$1; shift
      local pidfile="$dir/run/$name.pid"
      # NOTE: a pid file left by an earlier boot may name an unrelated process now.
      if [ -f "$pidfile" ] && grep -qa -- "$name" "/proc/$(cat "$pidfile")/cmdline" 2>/dev/null; then return 0; fi
      setsid nohup "$@" >"$dir/log/$name.log" 2>&1 </dev/null &
      echo $! >"$pidfile"
      # NOTE: setsid makes the server a process-group leader, so stopping the group also stops
      # the workers it forks. Only what this run started is stopped again.
      [ -n "${LADING_CI_CLEANUP:-}" ] && echo "stop_group $! $name" >>"$LADING_CI_CLEANUP"
      return 0
    }
    start memcached memcached -l 127.0.0.1 -p "$memcached_port" -U 0 -u "$user" -m 64
    for kind in object container account; do start "$kind" "swift-$kind-server" "$dir/$kind-server.conf"; done
    start proxy swift-proxy-server "$dir/proxy-server.conf"

    for _ in $(seq 1 60); do answering && break; sleep 0.5; done
    answering || fail "Swift did not answer on 127.0.0.1:$port within 30 s; see the logs in $dir/log/."
  fi

  # NOTE: a bucket is a Swift container; creating it through the Swift API needs no S3 client.
  headers=$(curl -fsS -D - -o /dev/null --max-time 10 -H 'X-Auth-User: lading:tester' -H 'X-Auth-Key: lading-test-key' \
    "http://127.0.0.1:$port/auth/v1.0") || fail "Swift's tempauth refused the test user; see $dir/log/proxy.log."
  token=$(printf '%s' "$headers" | tr -d '\r' | sed -n 's/^[Xx]-[Aa]uth-[Tt]oken: //p')
  storage=$(printf '%s' "$headers" | tr -d '\r' | sed -n 's/^[Xx]-[Ss]torage-[Uu]rl: //p')
  [ -n "$token" ] && [ -n "$storage" ] || fail "Swift's tempauth answered without a token."
  for _ in $(seq 1 20); do
    curl -fs -o /dev/null --max-time 10 -X PUT -H "X-Auth-Token: $token" "$storage/lading-test" && exit 0
    sleep 0.5
  done
  fail "could not create the bucket 'lading-test' in Swift; see the logs in $dir/log/."
)

if _lading_swift_setup; then
  export LADING_TEST_S3_ENDPOINT="http://127.0.0.1:$LADING_SWIFT_PORT"
  export LADING_TEST_S3_ACCESS_KEY="lading:tester"
  export LADING_TEST_S3_SECRET_KEY="lading-test-key"
  export LADING_TEST_S3_REGION="us-east-1"
  export LADING_TEST_S3_BUCKET="lading-test"
  echo "Swift (S3) answering at $LADING_TEST_S3_ENDPOINT, bucket $LADING_TEST_S3_BUCKET"
else
  echo "swift.sh: the S3 server for the tests is not available (see above)." >&2
  # NOTE: `return` when sourced (so .ci/run's `set -e` stops the run), `exit` when executed.
  return 1 2>/dev/null || exit 1
fi
