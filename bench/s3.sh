#!/usr/bin/env bash
# S3 rows: lading's S3 listener beside the Swift S3 server CI runs (.ci/services/swift.sh),
# measured with the same client (bench/s3-bench.ts, the AWS SDK for JavaScript): small
# PutObject/s, 10 MiB and LARGE_MIB up and down, and a ListObjectsV2 walk of 10,000 keys.
# lading runs on its embedded defaults (SQLite, files on this disk); Swift on its own disk
# layout on this machine. Run by bench/run.sh at its end, or alone.
#
# Usage: bench/s3.sh   (env: DURATION=5 CONCURRENCY=8 LARGE_MIB=1024)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
# shellcheck source=/dev/null
source "$ROOT/.ci/services/swift.sh" >/dev/null

S3_PORT=$(free_port)
LADING_PORT=$(free_port)
data="$WORK/lading-s3-data"
"$ROOT/bin/lading" init --data "$data" >/dev/null
printf 'pw\n' | "$ROOT/bin/lading" user add bench --data "$data" >/dev/null
LADING_S3_LISTEN="127.0.0.1:$S3_PORT" "$ROOT/bin/lading" serve --data "$data" --listen "127.0.0.1:$LADING_PORT" > "$WORK/lading-s3.log" 2>&1 &
PIDS+=("$!")
wait_http "http://127.0.0.1:$LADING_PORT/"
printf 'username=bench&password=pw' > "$WORK/login-form"
token=$(curl -sf -X POST "http://127.0.0.1:$LADING_PORT/auth/login" -d @"$WORK/login-form" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
printf 'Authorization: Bearer %s\n' "$token" > "$WORK/auth-header"
made=$(curl -sf -X POST "http://127.0.0.1:$LADING_PORT/api/s3/keys" -H @"$WORK/auth-header" -H 'content-type: application/json' -d '{}')
lading_key=$(printf '%s' "$made" | sed -n 's/.*"access_key_id":"\([^"]*\)".*/\1/p')
lading_secret=$(printf '%s' "$made" | sed -n 's/.*"secret_access_key":"\([^"]*\)".*/\1/p')

run_one() { # endpoint bucket prefix key secret
  WORK="$WORK" S3_ENDPOINT="$1" S3_BUCKET="$2" S3_PREFIX="$3" AWS_ACCESS_KEY_ID="$4" AWS_SECRET_ACCESS_KEY="$5" \
    "$NODE" --disable-warning=ExperimentalWarning "$BENCH_DIR/s3-bench.ts"
}
lading_json=$(run_one "http://127.0.0.1:$S3_PORT" bench "bench-$$/" "$lading_key" "$lading_secret")
swift_json=$(run_one "$LADING_TEST_S3_ENDPOINT" "$LADING_TEST_S3_BUCKET" "bench-$$/" "$LADING_TEST_S3_ACCESS_KEY" "$LADING_TEST_S3_SECRET_KEY")
field() { printf '%s' "$1" | sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p"; }
printf '\n%-44s %12s %12s %8s\n' 'S3 (same client for both)' 'lading S3' 'Swift S3' 'ratio'
for row in "small PutObject/s:small:more" "10 MiB PutObject, MB/s:10m_up:more" "10 MiB GetObject, MB/s:10m_down:more" \
  "${LARGE_MIB:-1024} MiB up (16 MiB parts), MB/s:large_up:more" "${LARGE_MIB:-1024} MiB GetObject, MB/s:large_down:more" \
  "ListObjectsV2 of 10,000 keys, s:list:less"; do
  IFS=: read -r name key better <<<"$row"
  l=$(field "$lading_json" "$key"); s=$(field "$swift_json" "$key")
  printf '%-44s %12.1f %12.1f %7.2fx\n' "$name" "$l" "$s" "$(awk -v l="$l" -v s="$s" -v b="$better" 'BEGIN { print (b == "more" ? l / s : s / l) }')"
done
