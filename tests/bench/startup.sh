#!/usr/bin/env bash
# Benchmark: ztensord's start-up on a root of many small files, cold and warm (issue 26, 7).
#   tests/bench/startup.sh      (STARTUP_FILES, STARTUP_ROUNDS, COLD_ROUNDS, ZTD_ARGS,
#                                BENCH_BUILD, BENCH_WORK, ZTD)
# Prints figures, not a verdict. The root is scale.sh's: STARTUP_FILES (default 100000)
# one-object .zt files of 332 bytes in one directory (tests/bench/scale_gen.py), made once
# in BENCH_WORK/scale-root and kept.
#   warm: STARTUP_ROUNDS (default 5) starts with the root in the page cache
#   cold: COLD_ROUNDS (default 3) starts after `sync; echo 3 > /proc/sys/vm/drop_caches`
#         (needs root; this empties the page cache of the whole machine)
# Each start: seconds from exec until /readyz answers 200 (polled every 20 ms), and the CPU
# seconds (user + system) ztensord used until then. Against it, in the same run and the same
# cache state: `find ROOT -type f | xargs cat >/dev/null`, the time to read every file once
# on one thread. Medians, and the ratio of the medians, are printed last.
source "$(dirname "$0")/common.sh"
bench_build
cd "$work"
N=${STARTUP_FILES:-100000}
WR=${STARTUP_ROUNDS:-5}
CR=${COLD_ROUNDS:-3}
root=$work/scale-root
pyexe=/usr/bin/python3; [ -x $pyexe ] || pyexe=python3

[ -f scale-t.zt ] || { head -c 64 /dev/urandom >scale-d.bin; "$zt" pack -o scale-t.zt "w=f32:4x4:scale-d.bin" >/dev/null; }
have=$( (find "$root" -maxdepth 1 -name "f-*.zt" 2>/dev/null || true) | wc -l)
if [ "$have" != "$N" ]; then
  rm -rf "$root"
  $pyexe "$top/tests/bench/scale_gen.py" scale-t.zt "$root" "$N"
fi
find "$root" -maxdepth 1 ! -name 'f-*' -type f -delete # scale.sh's PUTs
if [ "$CR" -gt 0 ] && ! [ -w /proc/sys/vm/drop_caches ]; then
  echo "startup.sh: cold rounds need root (/proc/sys/vm/drop_caches); COLD_ROUNDS=0 skips them" >&2
  exit 1
fi

echo "ztensord $("$ztd" --version | head -1), $(nproc) cores, $N files in one directory, ZTD_ARGS: ${ZTD_ARGS:-none}"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
# start: prints "SECONDS CPU FILES" for one start of ztensord, then stops it
start() {
  local t0 up cpu valid
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$ztd" --root "$root" --listen 127.0.0.1:0 --access-log off ${ZTD_ARGS:-} >/dev/null 2>"$work/ztd.log" &
  zpid=$!
  zport=
  for _ in $(seq 6000); do # 120 s at most
    [ -n "$zport" ] || zport=$(grep -o 'listening on http://[^ ]*' "$work/ztd.log" 2>/dev/null | sed 's/.*://') || true
    [ -n "$zport" ] && curl -sf "http://127.0.0.1:$zport/readyz" >/dev/null && break
    kill -0 "$zpid" 2>/dev/null || { echo "ztensord exited:" >&2; tail "$work/ztd.log" >&2; exit 1; }
    sleep 0.02
  done
  up=$(secs "$t0")
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$zpid/stat")
  valid=$(curl -s "http://127.0.0.1:$zport/metrics" | awk '/^ztensord_catalog_files\{state="valid"\}/ { print $2 }')
  stop_ztd
  echo "$up $cpu $valid"
}
readall() {
  local t0
  t0=$(date +%s.%N)
  find "$root" -type f -print0 | xargs -0 cat >/dev/null
  secs "$t0"
}

declare -A all
keep() { all[$1]="${all[$1]:-} $2"; }
md() { echo "${all[$1]:-}" | xargs | median; }
readall >/dev/null # warm
for r in $(seq "$WR"); do
  read -r up cpu valid < <(start)
  ref=$(readall)
  echo "warm $r: ready in $up s ($cpu s of CPU, $valid files valid); find | xargs cat $ref s"
  keep wup "$up"; keep wcpu "$cpu"; keep wref "$ref"
done
for r in $(seq "$CR"); do
  drop
  read -r up cpu valid < <(start)
  drop
  ref=$(readall)
  echo "cold $r: ready in $up s ($cpu s of CPU, $valid files valid); find | xargs cat $ref s"
  keep cup "$up"; keep ccpu "$cpu"; keep cref "$ref"
done
echo
echo "warm, median of $WR: ready in $(md wup) s ($(md wcpu) s of CPU); find | xargs cat $(md wref) s;" \
  "ratio $(ratio "$(md wup)" "$(md wref)")"
[ "$CR" -gt 0 ] && echo "cold, median of $CR: ready in $(md cup) s ($(md ccpu) s of CPU); find | xargs cat $(md cref) s;" \
  "ratio $(ratio "$(md cup)" "$(md cref)")"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
