#!/usr/bin/env bash
# zt pull against aria2c and curl, all figures from the same run (not a test).
# Builds in Release (build-bench-pull/), makes a 4 GiB model in 4 files with
# components from 16 KiB to 1 GiB (sha256 each), serves it with ztensord on
# loopback, and pulls it RUNS times with each client into a directory on disk
# (removed between runs):
#   - zt pull of the prefix, every sha256 checked, files fsynced and renamed;
#   - aria2c -x8 -s8 -j4 of the four /raw URLs (checks nothing, no fsync);
#   - curl, one file after the other (checks nothing, no fsync).
# Then a 1 GiB file of 100,000 objects against a 1 GiB file of one object,
# both with zt pull. Prints medians, ratios and zt pull's peak RSS.
#   tests/bench/pull.sh [RUNS]      (default 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${ZT_BENCH_BUILD:-$root/build-bench-pull}
runs=${1:-3}
command -v aria2c >/dev/null || apt-get install -y -qq aria2 >/dev/null
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZT_BUILD_TESTS=ON \
  -DZT_BUILD_SERVER=ON -DZT_SANITIZE=OFF -DZT_FUZZ=OFF >/dev/null
cmake --build "$build" --target ztensord zt gen_many >/dev/null
zt=$build/cli/zt gen=$build/tests/remote/gen_many
data=$build/bench-pull
mkdir -p "$data/root/model" "$data/root/many"
MiB=$((1 << 20))
if [ ! -s "$data/root/model/d.zt" ]; then
  head -c $((1024 * MiB)) /dev/urandom >"$data/r.raw"
  # a: one 1 GiB component. b: 256 MiB x 3 + 64 MiB x 4. c: 1024 x 1 MiB. d: 65536 x 16 KiB.
  "$zt" pack -o "$data/root/model/a.zt" "w=u8:$((1024 * MiB)):$data/r.raw" >/dev/null
  head -c $((256 * MiB)) "$data/r.raw" >"$data/q.raw"
  head -c $((64 * MiB)) "$data/r.raw" >"$data/s.raw"
  "$zt" pack -o "$data/root/model/b.zt" "x0=u8:$((256 * MiB)):$data/q.raw" \
    "x1=u8:$((256 * MiB)):$data/q.raw" "x2=u8:$((256 * MiB)):$data/q.raw" \
    "y0=u8:$((64 * MiB)):$data/s.raw" "y1=u8:$((64 * MiB)):$data/s.raw" \
    "y2=u8:$((64 * MiB)):$data/s.raw" "y3=u8:$((64 * MiB)):$data/s.raw" >/dev/null
  "$gen" "$data/root/model/c.zt" 1024 $MiB
  "$gen" "$data/root/model/d.zt" 65536 16384
  "$gen" "$data/root/many/many.zt" 100000 10737
  cp "$data/root/model/a.zt" "$data/root/many/one.zt"
  rm -f "$data/r.raw" "$data/q.raw" "$data/s.raw"
fi
"$build/server/ztensord" --root "$data/root" --listen 127.0.0.1:0 --access-log off 2>"$data/ztd.log" &
zpid=$!
trap 'kill $zpid 2>/dev/null; wait $zpid 2>/dev/null; rm -rf "$data/out"' EXIT
for _ in $(seq 100); do
  port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$data/ztd.log" 2>/dev/null || true) # the log may not exist yet
  [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
  sleep 0.1
done
url=http://127.0.0.1:$port/v1/files
cat "$data"/root/model/*.zt >/dev/null # the origin's bytes in the page cache
out=$data/out
# timed NAME CMD...: wall seconds (and peak RSS in KiB) of CMD appended to $data/NAME.
timed() {
  local name=$1
  shift
  rm -rf "$out"
  mkdir -p "$out"
  sync
  /usr/bin/time -f '%e %M' -o "$data/t.tmp" "$@" >/dev/null 2>"$data/err.tmp" ||
    { echo "$name failed:"; cat "$data/err.tmp"; exit 1; }
  cat "$data/t.tmp" >>"$data/$name"
}
median() { sort -n "$1" | awk '{t[NR]=$1; m[NR]=$2} END {i=int((NR+1)/2); printf "%.2f %d", t[i], m[i]}'; }
check_same() {
  for f in "$@"; do cmp -s "$out/$(basename "$f")" "$f" || { echo "differs: $f"; exit 1; }; done
}
rm -f "$data"/zt "$data"/aria "$data"/curl "$data"/many "$data"/one
for f in a b c d; do printf '%s\n  out=%s\n' "$url/model/$f.zt/raw" "$f.zt"; done >"$data/aria.txt"
echo "# $(date -u +%FT%TZ) $(uname -srm), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do # interleaved, so load changes hit every client alike
  timed zt "$zt" pull --quiet "$url/model/" -o "$out"
  check_same "$data"/root/model/*.zt
  timed aria aria2c --console-log-level=error --summary-interval=0 -x8 -s8 -j4 \
    --file-allocation=none --allow-overwrite=true -d "$out" -i "$data/aria.txt"
  check_same "$data"/root/model/*.zt
  timed curl sh -c "for f in a b c d; do curl -sf -o $out/\$f.zt $url/model/\$f.zt/raw || exit 1; done"
  timed one "$zt" pull --quiet "$url/many/one.zt" -o "$out"
  timed many "$zt" pull --quiet "$url/many/many.zt" -o "$out"
  check_same "$data/root/many/many.zt"
done
read -r tz rz <<<"$(median "$data/zt")"
read -r ta _ <<<"$(median "$data/aria")"
read -r tc _ <<<"$(median "$data/curl")"
read -r to ro <<<"$(median "$data/one")"
read -r tm rm_ <<<"$(median "$data/many")"
gb=$(du -cb "$data"/root/model/*.zt | tail -1 | cut -f1)
echo "model: 4 files, $(awk -v b="$gb" 'BEGIN{printf "%.2f GiB", b/2^30}'), components 16 KiB to 1 GiB; medians of $runs runs"
awk -v t="$tz" -v b="$gb" -v r="$rz" 'BEGIN{printf "zt pull (every sha256 checked, fsync): %.2f s = %.2f GB/s, peak RSS %.0f MiB\n", t, b/t/1e9, r/1024}'
awk -v t="$ta" -v b="$gb" 'BEGIN{printf "aria2c -x8 -s8 -j4 (no check):        %.2f s = %.2f GB/s\n", t, b/t/1e9}'
awk -v t="$tc" -v b="$gb" 'BEGIN{printf "curl, one file at a time (no check):  %.2f s = %.2f GB/s\n", t, b/t/1e9}'
awk -v z="$tz" -v a="$ta" 'BEGIN{printf "zt pull / aria2c: %.2fx (target <= 1.0)\n", z/a}'
awk -v m="$tm" -v o="$to" -v r1="$ro" -v r2="$rm_" 'BEGIN{printf "1 GiB of 100,000 objects: %.2f s (RSS %.0f MiB); 1 GiB of one object: %.2f s (RSS %.0f MiB); ratio %.2fx (target < 2)\n", m, r2/1024, o, r1/1024, m/o}'
