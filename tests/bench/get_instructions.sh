#!/usr/bin/env bash
# Instructions per 4 KiB GET, counted by callgrind: a figure that does not move
# with the load of a shared machine, unlike requests per second.
#   tests/bench/get_instructions.sh [ZTENSORD]   (default: a Release build in BENCH_BUILD)
# Runs ztensord (one thread, access log off) under callgrind twice, serving N
# and 2N keep-alive GETs of a 4 KiB component on one connection, and prints
# (Ir(2N) - Ir(N)) / N: the cost of one request, start-up and shutdown
# cancelled out. Also for the manifest and for a 404.
source "$(dirname "$0")/common.sh"
command -v valgrind >/dev/null || { echo "needs valgrind"; exit 1; }
if [ $# -ge 1 ]; then
  ztd=$(realpath "$1") zt=$(realpath "${ZT:-$(dirname "$1")/../cli/zt}")
  mkdir -p "$work"
else
  bench_build
fi
N=${N:-2000}
cd "$work"
mkdir -p cg-root
[ -f cg-small.bin ] || head -c 4096 /dev/urandom >cg-small.bin
[ -f cg-root/small.zt ] || "$zt" pack -o cg-root/small.zt "small=u8:4096:cg-small.bin" >/dev/null

# ir URL COUNT: total instructions of a server run that answers COUNT GETs of URL
ir() {
  local url=$1 count=$2 out=cg.out.$$ port
  rm -f "$out" cg.log
  valgrind --tool=callgrind --callgrind-out-file="$out" "$ztd" --root "$work/cg-root" \
    --listen 127.0.0.1:0 --threads 1 --access-log off --no-verify-digests 2>cg.log &
  local vpid=$!
  for _ in $(seq 600); do
    port=$(grep -o 'listening on http://[^ ]*' cg.log 2>/dev/null | sed 's/.*://') || true
    [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "ztensord did not start under valgrind"; cat cg.log; exit 1; }
  for _ in $(seq "$count"); do echo "url = \"http://127.0.0.1:$port$url\""; echo "output = /dev/null"; done >cg.curl
  curl -s -K cg.curl
  kill "$vpid"; wait "$vpid" 2>/dev/null || true
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }'
  rm -f "$out" cg.curl
}

per_request() { # URL
  local a b
  a=$(ir "$1" "$N"); b=$(ir "$1" $((2 * N)))
  awk -v a="$a" -v b="$b" -v n="$N" 'BEGIN { printf "%.0f", (b - a) / n }'
}
echo "instructions per request (N=$N keep-alive GETs, one connection, $("$ztd" --version | head -1)):"
echo "  4 KiB component: $(per_request /v1/files/small.zt/objects/small/data)"
echo "  manifest:        $(per_request /v1/files/small.zt)"
echo "  404 (no file):   $(per_request /v1/files/none.zt)"
