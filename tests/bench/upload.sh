#!/usr/bin/env bash
# Benchmark: uploads on loopback, next to nginx's WebDAV PUT of the same bytes.
#   tests/bench/upload.sh          (BENCH_BUILD, BENCH_WORK to override; data on disk, not tmpfs)
# Prints throughput and ztensord's peak RSS for:
#   1. a whole-file PUT of 1 GiB (full validation + sha256 of every component, fsync, rename):
#      one 1 GiB component, then 64 components of 16 MiB (verified on all cores)
#   2. a session of 8 components of 128 MiB each (sha256 computed by the writer), then commit
#   3. nginx WebDAV PUT of the same 1 GiB file (client_body_temp on the same disk)
#   4. peak RSS for a 4 GiB whole-file PUT
#   5. the same 8 x 128 MiB through 2 and 4 sessions at once (each its own stream, so
#      SHA-256 runs on every core): what more parallelism buys on this machine
source "$(dirname "$0")/common.sh"
bench_build
cd "$work"
mkdir -p up-root dav-root src
gen() { [ -f "$2" ] && [ "$(stat -c %s "$2")" = "$1" ] || head -c "$1" /dev/urandom >"$2"; }
gen $((1 << 30)) src/1g.bin
gen $((128 << 20)) src/128m.bin
[ -f src/1g.zt ] || "$zt" pack -o src/1g.zt "w=u8:$((1 << 30)):src/1g.bin" >/dev/null
if [ ! -f src/64x16m.zt ]; then
  split -b $((16 << 20)) -d -a 2 src/1g.bin src/part.
  args=(); for i in $(seq -w 0 63); do args+=("layer.$i=u8:$((16 << 20)):src/part.$i"); done
  "$zt" pack -o src/64x16m.zt "${args[@]}" >/dev/null
  rm -f src/part.*
fi
if [ ! -f src/4g.zt ]; then
  cat src/1g.bin src/1g.bin src/1g.bin src/1g.bin >src/4g.bin
  "$zt" pack -o src/4g.zt "w=u8:$((4 << 30)):src/4g.bin" >/dev/null
  rm -f src/4g.bin
fi
cat src/1g.zt src/64x16m.zt >/dev/null # page cache, for both servers alike
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
gbps() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.2f", n / t / 1e9 }'; }
# timed_put FILE URL: sets put_code and put_secs
timed_put() {
  local t0 t1
  t0=$(date +%s.%N)
  put_code=$(curl -s -o /dev/null -w '%{http_code}' -T "$1" "$2")
  t1=$(date +%s.%N)
  put_secs=$(secs "$t0" "$t1")
}

rm -rf up-root/* up-root/.ztensord-staging
start_ztd "$work/up-root" --allow-anonymous-writes --disk-reserve 0
Z="http://127.0.0.1:$zport"
size=$(stat -c %s src/1g.zt)
timed_put src/1g.zt "$Z/v1/files/1g.zt"
[ "$put_code" = 201 ] || { echo "PUT failed: $put_code"; exit 1; }
put_t=$put_secs
put_rss=$(peak_rss_mib "$zpid")
printf '1. whole-file PUT of %s bytes (one component): %s s, %s GB/s, ztensord peak RSS %s MiB\n' \
  "$size" "$put_t" "$(gbps "$size" "$put_t")" "$put_rss"
size64=$(stat -c %s src/64x16m.zt)
timed_put src/64x16m.zt "$Z/v1/files/64x16m.zt"
[ "$put_code" = 201 ] || { echo "PUT failed: $put_code"; exit 1; }
put64_t=$put_secs
printf '   whole-file PUT of %s bytes (64 components of 16 MiB): %s s, %s GB/s\n' \
  "$size64" "$put64_t" "$(gbps "$size64" "$put64_t")"

id=$(curl -s -X POST -d '{"file":"s.zt"}' "$Z/v1/uploads" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
objs=""
t0=$(date +%s.%N)
for k in 0 1 2 3 4 5 6 7; do
  curl -s -o /dev/null -T src/128m.bin "$Z/v1/uploads/$id/components/c$k"
  objs="$objs${objs:+,}\"o$k\":{\"shape\":[$((128 << 20))],\"components\":{\"data\":{\"key\":\"c$k\",\"dtype\":\"u8\"}}}"
done
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d "{\"objects\":{$objs}}" "$Z/v1/uploads/$id/commit")
t1=$(date +%s.%N)
[ "$code" = 201 ] || { echo "commit failed: $code"; exit 1; }
ses_t=$(secs "$t0" "$t1")
printf '2. session, 8 x 128 MiB components + commit: %s s, %s GB/s, peak RSS %s MiB\n' \
  "$ses_t" "$(gbps $((1 << 30)) "$ses_t")" "$(peak_rss_mib "$zpid")"
stop_ztd

rm -rf dav-root/*
start_nginx "$work/dav-root" "dav_methods PUT; create_full_put_path on; client_max_body_size 0; client_body_temp_path $work/dav-root/.tmp;"
mkdir -p dav-root/.tmp && chmod 777 dav-root dav-root/.tmp
timed_put src/1g.zt "http://127.0.0.1:$nport/1g.zt"
dav_t=$put_secs
printf '3. nginx WebDAV PUT of the same file (HTTP %s): %s s, %s GB/s\n' "$put_code" "$dav_t" \
  "$(gbps "$size" "$dav_t")"
stop_nginx
printf '   ratio ztensord / nginx: whole-file %s (64 components: %s), session %s\n' \
  "$(ratio "$dav_t" "$put_t")" "$(ratio "$dav_t" "$put64_t")" "$(ratio "$dav_t" "$ses_t")"

rm -rf up-root/*
start_ztd "$work/up-root" --allow-anonymous-writes --disk-reserve 0
size4=$(stat -c %s src/4g.zt)
timed_put src/4g.zt "http://127.0.0.1:$zport/v1/files/4g.zt"
t4=$put_secs
printf '4. whole-file PUT of 4 GiB (HTTP %s): %s s, %s GB/s, ztensord peak RSS %s MiB\n' \
  "$put_code" "$t4" "$(gbps "$size4" "$t4")" "$(peak_rss_mib "$zpid")"
stop_ztd
rm -rf up-root/*

# ---- 5. several sessions at once, 1 GiB in all
session_id() {
  curl -s -X POST -d "{\"file\":\"$1.zt\"}" "$Z/v1/uploads" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}
start_ztd "$work/up-root" --allow-anonymous-writes --disk-reserve 0
Z="http://127.0.0.1:$zport"
for n in 2 4; do
  ids=(); for i in $(seq "$n"); do ids+=("$(session_id "par$n-$i")"); done
  t0=$(date +%s.%N); pids=()
  for id in "${ids[@]}"; do
    ( for k in $(seq $((8 / n))); do
        curl -s -o /dev/null -T src/128m.bin "$Z/v1/uploads/$id/components/c$k"
      done ) & pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  t1=$(date +%s.%N)
  par_t=$(secs "$t0" "$t1")
  printf '5. %d sessions at once, %d x 128 MiB each (components only, no commit): %s s, %s GB/s\n' \
    "$n" $((8 / n)) "$par_t" "$(gbps $((1 << 30)) "$par_t")"
done
stop_ztd
rm -rf up-root/* up-root/.ztensord-staging
