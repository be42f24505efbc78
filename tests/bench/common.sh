# Shared by the benchmark scripts: build, start/stop ztensord and nginx, helpers.
# Not a test: these print figures and ratios measured in one run.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bdir=${BENCH_BUILD:-$top/build-bench-serve}
work=${BENCH_WORK:-$bdir/bench-data}

bench_build() {
  command -v wrk >/dev/null && command -v nginx >/dev/null || {
    SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get install -y -qq wrk nginx-light >/dev/null
  }
  if [ -n "${ZTD:-}" ]; then # another build (e.g. an older commit's) to compare
    ztd=$(realpath "$ZTD") zt=$(realpath "${ZT:-$(dirname "$ZTD")/../cli/zt}")
  else
    cmake -S "$top" -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZT_BUILD_TESTS=OFF -DZT_BUILD_SERVER=ON >/dev/null
    cmake --build "$bdir" >/dev/null
    ztd=$bdir/server/ztensord zt=$bdir/cli/zt
  fi
  mkdir -p "$work"
  chmod 755 "$work"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_ztd ROOT [ARGS...]: sets zpid and zport
start_ztd() {
  local root=$1; shift
  "$ztd" --root "$root" --listen 127.0.0.1:0 --access-log off "$@" >/dev/null \
    2>"$work/ztd.log" &
  zpid=$!
  for _ in $(seq 600); do # up to 60 s: a root of 20,000 files on a loaded machine
    zport=$(grep -o 'listening on http://[^ ]*' "$work/ztd.log" 2>/dev/null | sed 's/.*://') || true
    [ -n "$zport" ] && curl -sf "http://127.0.0.1:$zport/readyz" >/dev/null && return 0
    sleep 0.1
  done
  echo "ztensord did not start:"; cat "$work/ztd.log"; exit 1
}
# wait_digests: until ztensord's background verifier has hashed every component and every
# file it hashes whole (at most 300 s), so that its hashing is not measured with what a
# benchmark measures
wait_digests() {
  local m
  for _ in $(seq 3000); do
    m=$(curl -s "http://127.0.0.1:$zport/metrics")
    grep -qx 'ztensord_digest_components{state="pending"} 0' <<<"$m" &&
      grep -qx 'ztensord_files_hashed{state="pending"} 0' <<<"$m" && return 0
    sleep 0.1
  done
  echo "ztensord: digests still pending after 300 s" >&2
}
stop_ztd() { kill "$zpid" 2>/dev/null; wait "$zpid" 2>/dev/null || true; }

# start_nginx ROOT [EXTRA_LOCATION_DIRECTIVES [MAIN_DIRECTIVES]]: sets npid and nport
# (2 workers, sendfile)
start_nginx() {
  local root=$1 extra=${2:-} main=${3:-}
  nport=$(free_port)
  mkdir -p "$work/nginx"
  cat >"$work/nginx.conf" <<NGX
daemon off;
worker_processes 2;
$main
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on; tcp_nopush on; tcp_nodelay on;
  keepalive_requests 1000000;
  client_body_temp_path $work/nginx/body; proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fcgi; uwsgi_temp_path $work/nginx/uwsgi; scgi_temp_path $work/nginx/scgi;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:$nport;
    root $root;
    location / { $extra }
  }
}
NGX
  nginx -p "$work/nginx" -c "$work/nginx.conf" >/dev/null 2>"$work/nginx.err" &
  npid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$nport/" && return 0; sleep 0.05; done
  echo "nginx did not start"; cat "$work/nginx.err"; exit 1
}
stop_nginx() { kill "$npid" 2>/dev/null; wait "$npid" 2>/dev/null || true; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'; }
# best of N curl downloads, in GB/s
curl_gbps() {
  local url=$1 n=${2:-3} best=0 s
  for _ in $(seq "$n"); do
    s=$(curl -sf -o /dev/null -w '%{speed_download}' "$url")
    best=$(awk -v a="$s" -v b="$best" 'BEGIN { print (a > b) ? a : b }')
  done
  awk -v s="$best" 'BEGIN { printf "%.2f", s / 1e9 }'
}
# wrk_rps URL: requests per second (WRK_HEADER: one request header to add). Stops the
# script unless every answer was 2xx: a server answering errors fast is not faster.
# Also appends the server's CPU time per request (user + system, microseconds; nginx: its
# workers) to $work/cpu.PORT, which cpu_medians reads: a figure that moves less than
# requests per second when other jobs load the machine.
wrk_rps() {
  local out port c0 c1
  port=$(sed -E 's#^http://[^:/]+:([0-9]+)/.*#\1#' <<<"$1")
  c0=$(server_ticks "$port")
  out=$(wrk -t2 -c64 -d"${WRK_SECONDS:-8}"s ${WRK_HEADER:+-H "$WRK_HEADER"} "$1")
  c1=$(server_ticks "$port")
  if grep -q 'Non-2xx' <<<"$out" || ! grep -q 'Requests/sec' <<<"$out"; then
    echo "wrk $1: not every answer was 2xx:" >&2; echo "$out" >&2; exit 1
  fi
  awk -v c=$((c1 - c0)) -v t="$(getconf CLK_TCK)" '/requests in/ { printf "%.1f\n", c / t * 1e6 / $1 }' \
    <<<"$out" >>"$work/cpu.$port"
  awk '/Requests\/sec/ { print $2 }' <<<"$out"
}
# server_ticks PORT: CPU ticks (utime + stime) of ztensord, or of nginx's workers
server_ticks() {
  local pids t=0 p
  if [ "$1" = "${zport:-}" ]; then pids=$zpid; else pids=$(pgrep -P "$npid" | tr '\n' ' '); fi
  for p in $pids; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done
  echo "$t"
}
# cpu_medians: "ztensord X us, nginx Y us" (medians of the wrk runs since the last call)
cpu_medians() {
  printf 'ztensord %s us, nginx %s us' "$(tr '\n' ' ' <"$work/cpu.$zport" | median)" \
    "$(tr '\n' ' ' <"$work/cpu.$nport" | median)"
  rm -f "$work/cpu.$zport" "$work/cpu.$nport"
}
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# alternate URL_A URL_B MEASURE: ROUNDS (default 3) rounds of MEASURE on A then B, alternating
# so that a load change on the shared machine hits both; sets alt_a and alt_b (medians),
# alt_rounds (each round's ratio a/b) and alt_ratio (the median of those: each round pairs
# the two measurements closest in time).
alternate() {
  local a=() b=() r=() x y
  for _ in $(seq "${ROUNDS:-3}"); do
    x=$("$3" "$1"); y=$("$3" "$2")
    a+=("$x"); b+=("$y"); r+=("$(ratio "$x" "$y")")
  done
  alt_a=$(echo "${a[*]}" | median); alt_b=$(echo "${b[*]}" | median); alt_rounds="${r[*]}"
  alt_ratio=$(echo "${r[*]}" | median)
}
# peak RSS (VmHWM) of a process and its children, in MiB
peak_rss_mib() {
  local total=0 kb
  for p in "$@"; do
    kb=$(awk '/VmHWM/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)
    total=$((total + ${kb:-0}))
  done
  awk -v k="$total" 'BEGIN { printf "%.1f", k / 1024 }'
}
