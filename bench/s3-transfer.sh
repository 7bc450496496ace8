#!/usr/bin/env bash
# Large transfers through lading's S3 resource driver against the same transfer straight to the
# store (not a test): one lading node on its embedded catalog (SQLite) with its bytes in the
# Swift S3 server CI runs (.ci/services/swift.sh); a BIG_MIB file of random bytes uploaded and
# downloaded through lading's HTTP API, and the same file sent straight to Swift with
# @aws-sdk/lib-storage (8 MiB parts, 4 in flight) and fetched back with one GetObject, the two
# paths alternated round by round so both see the same background load. Prints each round's
# seconds, the medians, their ratio (direct time / lading time: 1.00 is lading as fast as the
# store's own rate), and the CPU seconds lading, Swift and the client spent per round.
# Talks only to 127.0.0.1; the bearer token goes through the environment, never argv.
#
# Usage: bench/s3-transfer.sh   (env: BIG_MIB=1024 ROUNDS=3)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl curl
# shellcheck source=/dev/null
source "$ROOT/.ci/services/swift.sh" >/dev/null
BIG_MIB=${BIG_MIB:-1024}
ROUNDS=${ROUNDS:-3}
TAG="lading-s3-transfer-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')/"

export LADING_RESOURCE_DRIVER=s3 LADING_RESOURCE_S3_ENDPOINT="$LADING_TEST_S3_ENDPOINT" LADING_RESOURCE_S3_BUCKET="$LADING_TEST_S3_BUCKET"
export LADING_RESOURCE_S3_REGION="$LADING_TEST_S3_REGION" LADING_RESOURCE_S3_PREFIX="$TAG"
export LADING_RESOURCE_S3_ACCESS_KEY_ID="$LADING_TEST_S3_ACCESS_KEY" LADING_RESOURCE_S3_SECRET_ACCESS_KEY="$LADING_TEST_S3_SECRET_KEY"
export LADING_LOG_LEVEL=warn
start_lading

# CPU clock ticks of every Swift server process (their command lines name its directory).
swift_ticks() {
  local total=0 pid
  for pid in $(pgrep -f "${LADING_SWIFT_DIR:-/tmp/lading-swift}/" || true); do
    total=$((total + $(cpu_ticks "$pid" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
field() { sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" <<<"$1"; }
secs() { awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }'; }

echo "lading on S3 vs S3 direct, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
head -c $((BIG_MIB * 1024 * 1024)) /dev/urandom > "$WORK/big"
declare -A T CPU
for r in $(seq "$ROUNDS"); do
  for path in lading direct; do
    l0=$(cpu_ticks "$LADING_PID"); s0=$(swift_ticks)
    if [ "$path" = lading ]; then
      out=$("$NODE" --disable-warning=ExperimentalWarning "$BENCH_DIR/scale-out-client.ts" lading-big "$HOME_URL/big.bin" "$WORK/big")
    else
      out=$("$NODE" --disable-warning=ExperimentalWarning "$BENCH_DIR/scale-out-client.ts" s3-big "${TAG}direct-big.bin" "$WORK/big")
    fi
    l1=$(cpu_ticks "$LADING_PID"); s1=$(swift_ticks)
    T[$path,up]+=" $(field "$out" upload)"; T[$path,down]+=" $(field "$out" download)"
    client=$(awk -v a="$(field "$out" uploadCpuMs)" -v b="$(field "$out" downloadCpuMs)" 'BEGIN { printf "%.1f", (a + b) / 1000 }')
    CPU[$path]+=" $(secs $((l1 - l0)))/$(secs $((s1 - s0)))/$client"
  done
done

med() { tr ' ' '\n' | sed '/^$/d' | median; }
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '\n%-10s %-24s %-24s %-10s %s\n' "${BIG_MIB} MiB" "lading s (each round)" "direct s (each round)" "ratio" "MB/s lading vs direct (medians)"
for dir in up down; do
  lm=$(med <<<"${T[lading,$dir]}"); dm=$(med <<<"${T[direct,$dir]}")
  printf '%-10s %-24s %-24s %-10s %s\n' "$dir" "${T[lading,$dir]# }" "${T[direct,$dir]# }" \
    "$(awk -v l="$lm" -v d="$dm" 'BEGIN { printf "%.2fx", d / l }')" \
    "$(awk -v l="$lm" -v d="$dm" -v b=$((BIG_MIB * 1024 * 1024)) 'BEGIN { printf "%.0f vs %.0f", b / l / 1e6, b / d / 1e6 }')"
done
echo
echo "CPU seconds per round (upload + download), lading/Swift/client:"
echo "  through lading: ${CPU[lading]# }"
echo "  direct:         ${CPU[direct]# }"
echo "All share $(nproc) cores: lading, Swift (proxy and object server, one worker each), memcached and the client."

# Leaves nothing in the bucket: the lading object's blobs and anything else under the prefix.
"$NODE" --disable-warning=ExperimentalWarning -e '
  const { S3Client, ListObjectsV2Command, DeleteObjectCommand } = await import("@aws-sdk/client-s3");
  const e = process.env;
  const c = new S3Client({ endpoint: e.LADING_TEST_S3_ENDPOINT, region: e.LADING_TEST_S3_REGION, forcePathStyle: true,
    credentials: { accessKeyId: e.LADING_TEST_S3_ACCESS_KEY, secretAccessKey: e.LADING_TEST_S3_SECRET_KEY },
    requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED" });
  let token;
  do {
    const page = await c.send(new ListObjectsV2Command({ Bucket: e.LADING_TEST_S3_BUCKET, Prefix: process.argv[1], ContinuationToken: token }));
    await Promise.all((page.Contents ?? []).map((o) => c.send(new DeleteObjectCommand({ Bucket: e.LADING_TEST_S3_BUCKET, Key: o.Key }))));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  c.destroy();
' "$TAG" || true
