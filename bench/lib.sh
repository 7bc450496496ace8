# Shared by the benchmark scripts (sourced, not run): starts nginx and lading on free loopback
# ports inside one temporary directory, logs a bench user in, and tears everything down on exit.
# Talks only to 127.0.0.1; never touches the repository's own data directory.
# shellcheck shell=bash

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
NODE="$ROOT/node_modules/node/bin/node"
[ -x "$NODE" ] || NODE=node
ZONE=${LADING_ZONE:-lading}

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "bench: '$1' is missing; install it with: apt-get install $2" >&2; exit 1; }
}

# Temporary directory on the same disk as the data (TMPDIR may point elsewhere).
WORK=$(mktemp -d "${BENCH_TMP:-/tmp}/lading-bench.XXXXXX")
PIDS=()

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  "$NODE" -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

wait_http() { # url: waits up to 20 s for any HTTP answer
  local i
  for i in $(seq 200); do
    curl -s -o /dev/null --max-time 1 "$1" && return 0
    sleep 0.1
  done
  echo "bench: nothing answers at $1" >&2
  exit 1
}

# nginx with its own configuration: one worker (lading is one process too), WebDAV PUT into
# $WORK/nginx-root with its body temp files on the same file system, sendfile for GET.
start_nginx() {
  need nginx nginx
  NGINX_PORT=$(free_port)
  mkdir -p "$WORK/nginx-root" "$WORK/nginx-body" "$WORK/nginx-tmp"
  cat > "$WORK/nginx.conf" <<EOF
daemon off;
worker_processes 1;
user root root;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 1024; }
http {
  default_type application/octet-stream;
  types { application/json json; }
  access_log $WORK/nginx-access.log;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  proxy_temp_path $WORK/nginx-tmp/proxy;
  fastcgi_temp_path $WORK/nginx-tmp/fastcgi;
  uwsgi_temp_path $WORK/nginx-tmp/uwsgi;
  scgi_temp_path $WORK/nginx-tmp/scgi;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $WORK/nginx-root;
    location / {
      dav_methods PUT;
      create_full_put_path on;
      client_max_body_size 0;
      client_body_temp_path $WORK/nginx-body;
    }
  }
}
EOF
  nginx -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" &
  NGINX_PID=$!
  PIDS+=("$NGINX_PID")
  NGINX="http://127.0.0.1:$NGINX_PORT"
  wait_http "$NGINX/"
}

# rclone serve webdav (Debian's rclone) on $WORK/rclone-root, no authentication, no VFS cache
# (writes go straight to the directory, as nginx's do); sets RCLONE (base URL) and RCLONE_PID.
rclone_command() { # port -> the command line, for start_rclone and for timing its start
  echo rclone serve webdav "$WORK/rclone-root" --addr "127.0.0.1:$1" --config "$WORK/rclone.conf" --log-level ERROR
}
start_rclone() {
  need rclone rclone
  RCLONE_PORT=$(free_port)
  mkdir -p "$WORK/rclone-root"
  : > "$WORK/rclone.conf"
  # shellcheck disable=SC2046
  $(rclone_command "$RCLONE_PORT") 2> "$WORK/rclone.log" &
  RCLONE_PID=$!
  PIDS+=("$RCLONE_PID")
  RCLONE="http://127.0.0.1:$RCLONE_PORT"
  wait_http "$RCLONE/"
}

# bench/bare-node.mjs on $WORK/node-root: a bare node:http server that hashes and flushes what it
# stores as lading does, with nothing else (Node's own ceiling); sets BARE (base URL) and BARE_PID.
bare_command() { # port -> the command line, for start_bare and for timing its start
  echo "$NODE" "$BENCH_DIR/bare-node.mjs" "$WORK/node-root" "$1"
}
start_bare() {
  BARE_PORT=$(free_port)
  mkdir -p "$WORK/node-root"
  # shellcheck disable=SC2046
  $(bare_command "$BARE_PORT") 2> "$WORK/bare-node.log" &
  BARE_PID=$!
  PIDS+=("$BARE_PID")
  BARE="http://127.0.0.1:$BARE_PORT"
  wait_http "$BARE/"
}

# lading on a fresh data directory with user `bench`; sets LADING (base URL), LADING_PID (the
# node process: bin/lading execs it) and AUTH_HEADER (a file holding the Authorization header,
# so the token never appears in argv).
start_lading() {
  LADING_PORT=$(free_port)
  local data="$WORK/lading-data"
  "$ROOT/bin/lading" init --data "$data" >/dev/null
  printf 'pw\n' | "$ROOT/bin/lading" user add bench --data "$data" >/dev/null
  "$ROOT/bin/lading" serve --data "$data" --listen "127.0.0.1:$LADING_PORT" > "$WORK/lading.log" 2>&1 &
  LADING_PID=$!
  PIDS+=("$LADING_PID")
  LADING="http://127.0.0.1:$LADING_PORT"
  wait_http "$LADING/"
  printf 'username=bench&password=pw' > "$WORK/login-form"
  local answer
  answer=$(curl -sf -X POST "$LADING/auth/login" -d @"$WORK/login-form")
  BENCH_TOKEN=$(printf '%s' "$answer" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
  [ -n "$BENCH_TOKEN" ] || { echo "bench: login failed: $answer" >&2; exit 1; }
  export BENCH_TOKEN
  AUTH_HEADER="$WORK/auth-header"
  printf 'Authorization: Bearer %s\n' "$BENCH_TOKEN" > "$AUTH_HEADER"
  HOME_URL="$LADING/api/registered/$ZONE/home/bench"
}

# A wrk script of PUTs to <PUT_PREFIX>/<PUT_RUN>-<n>, a new name for every request, with a
# body of PUT_BYTES (default 15) and, when PUT_TOKEN is set, a bearer token: all from the
# environment, so the token never reaches argv.
put_lua() { # file
  cat > "$1" <<'LUA'
wrk.method = "PUT"
wrk.body = string.rep("x", tonumber(os.getenv("PUT_BYTES") or "15"))
wrk.headers["Content-Type"] = "application/octet-stream"
local token = os.getenv("PUT_TOKEN")
if token and token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
local prefix, run, n = os.getenv("PUT_PREFIX"), os.getenv("PUT_RUN"), 0
request = function()
  n = n + 1
  return wrk.format(nil, prefix .. "/" .. run .. "-" .. n)
end
LUA
}

cpu_ticks() { # pid -> user + system clock ticks of all its threads
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# wrk -t1 -c$CONNECTIONS (default 16) for `seconds` against `url`, counting the CPU process `pid`
# spends meanwhile; prints "req/s µs-of-CPU-per-request"; fails on errors or non-2xx answers.
wrk_cpu() { # pid seconds url [wrk args…]
  local pid=$1 secs=$2 url=$3 before after out requests
  shift 3
  before=$(cpu_ticks "$pid")
  out=$(wrk -t1 -c"${CONNECTIONS:-16}" -d"${secs}s" "$@" "$url")
  after=$(cpu_ticks "$pid")
  if grep -q 'Non-2xx\|Socket errors' <<<"$out"; then
    echo "bench: $url had errors:" >&2; echo "$out" >&2; exit 1
  fi
  requests=$(awk '/ requests in / { print $1 }' <<<"$out")
  awk -v r="$requests" -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" \
    '/^Requests\/sec:/ { printf "%.0f %.1f\n", $2, t / hz * 1e6 / r }' <<<"$out"
}

median() { # numbers on stdin -> median
  sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit } if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
