#!/usr/bin/env bash
# The pull-through cache (--upstream) against the local path, all figures from the same
# run (not a test). Builds in Release (build-bench-cache/), makes a 1 GiB model in two
# files (components from 4 MiB to 512 MiB, each of its own random bytes, sha256 each), serves it from an origin
# ztensord on loopback, and measures, RUNS rounds interleaved so that load changes hit
# every case alike:
#   - direct: zt pull from the origin (a local root: the reference);
#   - cold:   zt pull through a tier ztensord (--upstream the origin) with an empty cache;
#   - warm:   the same pull again, from the tier's cache;
#   - curl of the 768 MiB file's /raw and of its 512 MiB component from the origin and
#     from the warm tier (GB/s: the server side alone; zt pull is bound by its sha256).
# Every timed pull starts after sync (outside the timing), with no dirty pages.
# Then once: a tier and eight node sidecars, all cold, eight zt pulls at once: the time
# until all eight have the model, and the origin's and the tier's egress (/metrics).
# Target: warm pull >= 0.95x the direct pull (time_direct / time_warm).
#   tests/bench/cache.sh [RUNS]      (default 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${ZT_BENCH_BUILD:-$root/build-bench-cache}
runs=${1:-3}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZT_BUILD_TESTS=OFF \
  -DZT_BUILD_SERVER=ON -DZT_SANITIZE=OFF -DZT_FUZZ=OFF >/dev/null
cmake --build "$build" --target ztensord zt >/dev/null
ztd=$build/server/ztensord zt=$build/cli/zt
data=$build/bench-cache
MiB=$((1 << 20))
mkdir -p "$data/root/m" "$data/empty"
if [ ! -s "$data/root/m/b.zt" ]; then
  # Every component has bytes of its own: the cache stores a sha256 once, so repeated
  # bytes would be fetched once and the egress figures would flatter it.
  # a: 512 MiB + 4 x 64 MiB. b: 64 x 4 MiB.
  args=()
  head -c $((512 * MiB)) /dev/urandom >"$data/w.raw"
  for i in 0 1 2 3; do
    head -c $((64 * MiB)) /dev/urandom >"$data/x$i.raw"
    args+=("x$i=u8:$((64 * MiB)):$data/x$i.raw")
  done
  "$zt" pack -o "$data/root/m/a.zt" "w=u8:$((512 * MiB)):$data/w.raw" "${args[@]}" >/dev/null
  args=()
  for i in $(seq 64); do
    head -c $((4 * MiB)) /dev/urandom >"$data/t$i.raw"
    args+=("t$i=u8:$((4 * MiB)):$data/t$i.raw")
  done
  "$zt" pack -o "$data/root/m/b.zt" "${args[@]}" >/dev/null
  rm -f "$data"/*.raw
fi
files=(m/a.zt m/b.zt)
model=$(cat "$data/root/m/a.zt" "$data/root/m/b.zt" | wc -c)

declare -A pid port
# start NAME ROOT [ARGS...]: a ztensord on an ephemeral port, ready.
start() {
  local name=$1 r=$2 p=
  shift 2
  "$ztd" --root "$r" --listen 127.0.0.1:0 --access-log off "$@" 2>"$data/$name.log" &
  pid[$name]=$!
  for _ in $(seq 200); do
    p=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$data/$name.log")
    [ -n "$p" ] && curl -sf "http://127.0.0.1:$p/readyz" >/dev/null && break
    sleep 0.05
  done
  [ -n "$p" ] || { echo "$name did not start"; cat "$data/$name.log"; exit 1; }
  port[$name]=$p
}
stop() { kill "${pid[$1]}" 2>/dev/null; wait "${pid[$1]}" 2>/dev/null || true; }
trap 'for n in "${!pid[@]}"; do kill "${pid[$n]}" 2>/dev/null || true; done; wait; rm -rf "$data"/out* "$data"/cache*' EXIT
url() { echo "http://127.0.0.1:${port[$1]}"; }
# sent NAME: body bytes the daemon sent on its file routes, once it is quiet.
sent() {
  local m n prev=-1
  for _ in $(seq 100); do
    m=$(curl -s "$(url "$1")/metrics")
    n=$(awk '/^ztensord_response_bytes_total/ && !/"(metrics|healthz|readyz|none)"/ {s += $2} END {printf "%.0f", s}' <<<"$m")
    grep -qx 'ztensord_requests_in_flight 1' <<<"$m" && [ "$n" = "$prev" ] && break
    prev=$n
    sleep 0.2
  done
  echo "$n"
}
# timed LIST CMD...: wall seconds of CMD appended to $data/LIST. Each starts with the
# last output removed and no dirty pages (outside the timing): a pull that follows
# another one's 1 GiB of fsynced writes would otherwise pay for that write-back.
timed() {
  local list=$1 t0 t1
  shift
  rm -rf "$data/out"
  sync
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>"$data/err.tmp" || { echo "$list failed:"; cat "$data/err.tmp"; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >>"$data/$list"
}
# pull BASE OUT: zt pull of both files into a new OUT.
pull() { rm -rf "$2"; mkdir -p "$2"; "$zt" pull --quiet -o "$2" "$1/v1/files/m/a.zt" "$1/v1/files/m/b.zt"; }
same() { for f in "${files[@]}"; do cmp -s "$1/$(basename "$f")" "$data/root/$f" || { echo "differs: $1 $f"; exit 1; }; done; }
gbps() { curl -s -o /dev/null -w '%{speed_download}' "$1" | awk '{ printf "%.3f\n", $1 / 1e9 }'; }
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

start origin "$data/root"
cat "$data"/root/m/*.zt >/dev/null # the origin's bytes in the page cache
rm -f "$data"/direct "$data"/cold "$data"/warm "$data"/curl_* "$data"/comp_*
echo "# $(date -u +%FT%TZ) $(uname -srm), $(nproc) cores, load at start $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
  timed direct pull "$(url origin)" "$data/out"
  same "$data/out"
  rm -rf "$data/cache.tier"
  start tier "$data/empty" --upstream "$(url origin)" --cache-dir "$data/cache.tier"
  timed cold pull "$(url tier)" "$data/out"
  same "$data/out"
  timed warm pull "$(url tier)" "$data/out"
  same "$data/out"
  rm -rf "$data/out"
  gbps "$(url origin)/v1/files/m/a.zt/raw" >>"$data/curl_origin"
  gbps "$(url tier)/v1/files/m/a.zt/raw" >>"$data/curl_warm"
  gbps "$(url origin)/v1/files/m/a.zt/objects/w/data" >>"$data/comp_origin"
  gbps "$(url tier)/v1/files/m/a.zt/objects/w/data" >>"$data/comp_warm"
  stop tier
  echo "# round $i: direct $(tail -1 "$data/direct") s, cold $(tail -1 "$data/cold") s, warm $(tail -1 "$data/warm") s; load $(cut -d' ' -f1-3 /proc/loadavg)"
done
td=$(median "$data/direct") tc=$(median "$data/cold") tw=$(median "$data/warm")
co=$(median "$data/curl_origin") cw=$(median "$data/curl_warm")
po=$(median "$data/comp_origin") pw=$(median "$data/comp_warm")
echo "model: 2 files, $model bytes, components 4 MiB to 512 MiB; medians of $runs rounds"
awk -v t="$td" -v b="$model" 'BEGIN { printf "zt pull from the origin (local root):  %.2f s = %.2f GB/s\n", t, b / t / 1e9 }'
awk -v t="$tc" -v b="$model" 'BEGIN { printf "zt pull through a cold tier:          %.2f s = %.2f GB/s\n", t, b / t / 1e9 }'
awk -v t="$tw" -v b="$model" 'BEGIN { printf "zt pull through a warm tier:          %.2f s = %.2f GB/s\n", t, b / t / 1e9 }'
awk -v d="$td" -v w="$tw" 'BEGIN { printf "warm / local root (throughput): %.2fx (target >= 0.95)\n", d / w }'
awk -v d="$td" -v c="$tc" 'BEGIN { printf "cold / local root (throughput): %.2fx\n", d / c }'
echo "curl of a.zt/raw (768 MiB): origin $co GB/s, warm tier $cw GB/s ($(awk -v a="$cw" -v b="$co" 'BEGIN { printf "%.2f", a / b }')x)"
echo "curl of component w (512 MiB): origin $po GB/s, warm tier $pw GB/s ($(awk -v a="$pw" -v b="$po" 'BEGIN { printf "%.2f", a / b }')x)"

# ---- eight nodes at once behind one tier, everything cold
rm -rf "$data"/cache.*
o0=$(sent origin)
start tier "$data/empty" --upstream "$(url origin)" --cache-dir "$data/cache.tier"
for n in $(seq 8); do
  start "node$n" "$data/empty" --upstream "$(url tier)" --cache-dir "$data/cache.node$n"
done
t0=$(date +%s.%N)
pids=()
for n in $(seq 8); do
  pull "$(url "node$n")" "$data/out$n" >/dev/null 2>"$data/pull$n.err" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "a node's pull failed"; cat "$data"/pull*.err; exit 1; }; done
t8=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
for n in $(seq 8); do same "$data/out$n"; rm -rf "$data/out$n"; done
o1=$(sent origin)
tt=$(sent tier)
echo "eight nodes, cold, at once: all eight have the model after $t8 s ($(awk -v t="$t8" -v b="$model" 'BEGIN { printf "%.2f", 8 * b / t / 1e9 }') GB/s delivered in all)"
echo "origin egress: $((o1 - o0)) bytes = $(awk -v a=$((o1 - o0)) -v b="$model" 'BEGIN { printf "%.3f", a / b }') copies; tier egress: $tt bytes = $(awk -v a="$tt" -v b="$model" 'BEGIN { printf "%.3f", a / b }') copies"
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
