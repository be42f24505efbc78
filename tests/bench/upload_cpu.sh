#!/usr/bin/env bash
# Benchmark: CPU seconds (user + system, from /proc/PID/stat) that one 1 GiB PUT costs
# ztensord (one component, then 64) and nginx's workers, curl's own, and nginx's
# fdatasync of the file afterwards; two of each, `sync -f` before every one.
#   tests/bench/upload_cpu.sh     (run tests/bench/upload.sh once first: it makes the files)
source "$(dirname "$0")/common.sh"
bench_build
cd "$work"
[ -f src/1g.zt ] && [ -f src/64x16m.zt ] || { echo "run tests/bench/upload.sh first"; exit 1; }
cpu() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done; echo "$t"; }
secs() { awk -v a="$1" -v b="$2" -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / t }'; }
rm -rf up-root/* dav-root/*
mkdir -p up-root dav-root/.tmp
start_ztd "$work/up-root" --allow-anonymous-writes --disk-reserve 0 --log-level debug
user=; [ "$(id -u)" -eq 0 ] && user="user root;"
start_nginx "$work/dav-root" "dav_methods PUT; client_max_body_size 0;
  client_body_temp_path $work/dav-root/.tmp; client_body_buffer_size 1m;" "$user"
workers=$(pgrep -P "$npid" | tr '\n' ' ')
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for f in 1g.zt 64x16m.zt; do
  for _ in 1 2; do
    curl -s -o /dev/null -X DELETE "http://127.0.0.1:$zport/v1/files/$f"
    sync -f .
    c0=$(cpu "$zpid")
    t=$(/usr/bin/time -f "curl %U+%S s, wall %e s" curl -s -o /dev/null -T "src/$f" \
      "http://127.0.0.1:$zport/v1/files/$f" 2>&1)
    echo "ztensord PUT $f: $(secs "$c0" "$(cpu "$zpid")") CPU s; $t"
  done
done
sleep 0.3
grep -a "PUT .*: .* bytes, body in" ztd.log | sed 's/.*msg="//; s/"$//'
for _ in 1 2; do
  rm -f dav-root/1g.zt
  sync -f .
  c0=$(cpu $workers)
  t=$(/usr/bin/time -f "curl %U+%S s, wall %e s" curl -s -o /dev/null -T src/1g.zt \
    "http://127.0.0.1:$nport/1g.zt" 2>&1)
  c1=$(cpu $workers)
  t0=$(date +%s.%N); sync -d dav-root/1g.zt; t1=$(date +%s.%N)
  echo "nginx PUT: workers $(secs "$c0" "$c1") CPU s; $t; fdatasync after: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
done
stop_nginx
stop_ztd
rm -rf up-root/* up-root/.ztensord-staging dav-root/*
