#!/usr/bin/env bash
# libztensor-remote loading components into memory from ztensord on
# loopback, against curl fetching the same bytes to /dev/null. Builds in
# Release (build-bench/), packs one MIB-MiB raw component with a sha256
# digest and the same without a digest, and runs bench_remote RUNS times per
# connection count.
#   tests/bench/remote.sh [MIB] [RUNS]          (default 512 MiB, 5 runs)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${ZT_BENCH_BUILD:-$root/build-bench}
mib=${1:-512} runs=${2:-5}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZT_BUILD_TESTS=ON -DZT_BUILD_SERVER=ON \
  -DZT_SANITIZE=OFF -DZT_FUZZ=OFF >/dev/null
cmake --build "$build" --target bench_remote ztensord zt >/dev/null
data=$build/bench-remote
mkdir -p "$data/root"
if [ ! -s "$data/root/sha.zt" ]; then
  head -c $((mib << 20)) /dev/urandom >"$data/w.raw"
  "$build/cli/zt" pack -o "$data/root/sha.zt" "w=u8:$((mib << 20)):$data/w.raw" >/dev/null
  "$build/cli/zt" pack --digest none -o "$data/root/none.zt" "w=u8:$((mib << 20)):$data/w.raw" >/dev/null
  rm -f "$data/w.raw"
fi
"$build/server/ztensord" --root "$data/root" --listen 127.0.0.1:0 --access-log off 2>"$data/ztd.log" &
zpid=$!
trap 'kill $zpid 2>/dev/null; wait $zpid 2>/dev/null' EXIT
for _ in $(seq 100); do
  port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$data/ztd.log")
  [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
  sleep 0.1
done
echo "# $(date -u +%FT%TZ) $(uname -srm), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
  curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/v1/files/sha.zt/raw"
done | sort -n | awk -v b=$((mib << 20)) '{t[NR]=$1} END {m=t[int((NR+1)/2)]; printf "curl to /dev/null: median %.3f s = %.2f GB/s\n", m, b/m/1e9}'
"$build/tests/bench/bench_remote" "http://127.0.0.1:$port/v1/files/sha.zt" "$runs" 1 4 8
"$build/tests/bench/bench_remote" "http://127.0.0.1:$port/v1/files/none.zt" "$runs" 1 4
