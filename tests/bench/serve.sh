#!/usr/bin/env bash
# Benchmark: ztensord against nginx serving the same bytes, on loopback.
#   tests/bench/serve.sh            (BENCH_BUILD, BENCH_WORK, WRK_SECONDS, ROUNDS to override;
#                                    ZTD=path/to/ztensord to measure another build)
# Prints each figure and the ratio ztensord / nginx. Figures 1-3 alternate between the two
# servers for ROUNDS rounds (default 3; figure 1: ROUNDS + 2) and print the medians, each
# round's ratio, and as "ratio" the median of the rounds' ratios: on a shared 2-core
# machine a single back-to-back pair can swing by 20% either way.
#   1. a 1 GiB component over one curl stream (GB/s)
#   2. a 4 KiB component under wrk -t2 -c64 (req/s)
#   3. the manifest JSON of two 1,000-object files under wrk, vs nginx serving the same JSON
#      file: with sha256 digests (227,749 bytes) and without (138,749 bytes); then the same
#      two with Accept-Encoding: gzip, vs nginx's gzip_static serving the same gzip bytes
#   4. peak RSS while 64 clients each download the 1 GiB component (and 256 MiB, to show it
#      does not grow with file size)
# Every wrk run must get only 2xx answers (from nginx too), or the script stops.
source "$(dirname "$0")/common.sh"
bench_build
cd "$work"
mkdir -p root static

gen() { [ -f "$2" ] && [ "$(stat -c %s "$2")" = "$1" ] || head -c "$1" /dev/urandom >"$2"; }
gen $((1 << 30)) big.bin
gen $((1 << 28)) mid.bin
gen 4096 small.bin
[ -f root/big.zt ] || "$zt" pack -o root/big.zt "big=u8:$((1 << 30)):big.bin" "mid=u8:$((1 << 28)):mid.bin" >/dev/null
[ -f root/small.zt ] || "$zt" pack -o root/small.zt "small=u8:4096:small.bin" >/dev/null
if [ ! -f root/thousand.zt ]; then
  head -c 64 small.bin >t64.bin
  args=(); for i in $(seq 0 999); do args+=("model.layers.$i.mlp.weight=f32:4x4:t64.bin"); done
  "$zt" pack -o root/thousand.zt "${args[@]}" >/dev/null
fi
if [ ! -f root/nodigest.zt ]; then
  head -c 16 small.bin >t16.bin
  args=(); for i in $(seq 0 999); do args+=("model.layers.$i.weight=f32:4:t16.bin"); done
  "$zt" pack --digest none -o root/nodigest.zt "${args[@]}" >/dev/null
fi
cp big.bin mid.bin small.bin static/

start_ztd "$work/root"
for m in thousand nodigest; do
  curl -sf "http://127.0.0.1:$zport/v1/files/$m.zt" -o "static/$m.json"
  # the same gzip bytes for nginx's gzip_static (the first request starts the compression);
  # a ztensord that does not compress manifests (ZTD=older build): gzip -6's
  for _ in $(seq 30); do
    curl -sf -H 'Accept-Encoding: gzip' -D static/h.txt "http://127.0.0.1:$zport/v1/files/$m.zt" \
      -o "static/$m.json.gz"
    grep -qi '^content-encoding: gzip' static/h.txt && break
    sleep 0.1
  done
  grep -qi '^content-encoding: gzip' static/h.txt || gzip -6 -n -c "static/$m.json" >"static/$m.json.gz"
  gzip -dc "static/$m.json.gz" | cmp -s - "static/$m.json" || { echo "gzip manifest differs"; exit 1; }
done
start_nginx "$work/static" 'gzip_static on;'
curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' "http://127.0.0.1:$nport/thousand.json" |
  grep -qi '^content-encoding: gzip' || { echo "nginx does not serve the .gz"; exit 1; }
Z="http://127.0.0.1:$zport/v1/files"
N="http://127.0.0.1:$nport"
curl -s "$Z/big.zt/objects/big/data" | cmp -s - big.bin || { echo "ztensord bytes differ"; exit 1; }
echo "ztensord $("$ztd" --version | head -1), nginx $(nginx -v 2>&1 | sed 's/.*\///'), $(nproc) cores, $(date -u +%FT%TZ)"
load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; }
echo

one_gbps() { curl_gbps "$1" 1; }
ROUNDS=$(( ${ROUNDS:-3} + 2 )) alternate "$Z/big.zt/objects/big/data" "$N/big.bin" one_gbps
printf '1. 1 GiB component, one curl stream: ztensord %s GB/s, nginx %s GB/s, ratio %s (rounds: %s)\n' \
  "$alt_a" "$alt_b" "$alt_ratio" "$alt_rounds"
echo "   ($(load))"

alternate "$Z/small.zt/objects/small/data" "$N/small.bin" wrk_rps
printf '2. 4 KiB component, wrk -t2 -c64: ztensord %s req/s, nginx %s req/s, ratio %s (rounds: %s)\n' \
  "$alt_a" "$alt_b" "$alt_ratio" "$alt_rounds"
echo "   server CPU per request: $(cpu_medians) ($(load))"

for m in thousand nodigest; do
  alternate "$Z/$m.zt" "$N/$m.json" wrk_rps
  printf '3. manifest JSON of 1,000 objects (%s bytes), wrk -t2 -c64: ztensord %s req/s, nginx %s req/s, ratio %s (rounds: %s)\n' \
    "$(stat -c %s "static/$m.json")" "$alt_a" "$alt_b" "$alt_ratio" "$alt_rounds"
  echo "   server CPU per request: $(cpu_medians) ($(load))"
done
for m in thousand nodigest; do
  WRK_HEADER='Accept-Encoding: gzip' alternate "$Z/$m.zt" "$N/$m.json" wrk_rps
  printf '3. the same with Accept-Encoding: gzip (%s bytes from nginx gzip_static): ztensord %s req/s, nginx %s req/s, ratio %s (rounds: %s)\n' \
    "$(stat -c %s "static/$m.json.gz")" "$alt_a" "$alt_b" "$alt_ratio" "$alt_rounds"
  echo "   server CPU per request: $(cpu_medians) ($(load))"
done

parallel64() { # URL; fails if any download fails
  local pids=() bad=0
  for _ in $(seq 64); do curl -sf -o /dev/null "$1" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
  [ "$bad" = 0 ] || { echo "$bad of 64 downloads failed"; return 1; }
}
stop_ztd; start_ztd "$work/root"; Z="http://127.0.0.1:$zport/v1/files"
t0=$(date +%s.%N); parallel64 "$Z/big.zt/objects/mid/data"; t1=$(date +%s.%N)
zr_mid=$(peak_rss_mib "$zpid")
stop_ztd; start_ztd "$work/root"; Z="http://127.0.0.1:$zport/v1/files"
t2=$(date +%s.%N); parallel64 "$Z/big.zt/objects/big/data"; t3=$(date +%s.%N)
zr_big=$(peak_rss_mib "$zpid")
stop_nginx; start_nginx "$work/static"; N="http://127.0.0.1:$nport"
t4=$(date +%s.%N); parallel64 "$N/big.bin"; t5=$(date +%s.%N)
workers=$(pgrep -P "$npid" | tr '\n' ' ' || true)
nr_big=$(peak_rss_mib "$npid" $workers)
agg() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.2f", n / (b - a) / 1e9 }'; }
printf '4. peak RSS, 64 clients x 1 GiB: ztensord %s MiB (64 x 256 MiB: %s MiB), nginx master+workers %s MiB\n' \
  "$zr_big" "$zr_mid" "$nr_big"
printf '   aggregate throughput: ztensord %s GB/s, nginx %s GB/s, ratio %s\n' \
  "$(agg "$t2" "$t3" $((64 << 30)))" "$(agg "$t4" "$t5" $((64 << 30)))" \
  "$(ratio "$(agg "$t2" "$t3" $((64 << 30)))" "$(agg "$t4" "$t5" $((64 << 30)))")"
echo "   ($(load))"
stop_ztd; stop_nginx
