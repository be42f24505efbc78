#!/usr/bin/env bash
# Benchmark: ztensord on a root of many small files (issue 14, "many files").
#   tests/bench/scale.sh      (SCALE_FILES, SCALE_ROUNDS, ZTD_ARGS, BENCH_BUILD, BENCH_WORK)
# Prints figures, not a verdict. SCALE_FILES (default 100000) one-object .zt files of 332
# bytes, each with its own bytes and sha256 (tests/bench/scale_gen.py), in one directory.
# Each of SCALE_ROUNDS (default 3) rounds starts ztensord on that root (ZTD_ARGS added to its
# command line) and measures; the medians of the rounds are printed last.
#   1. start-up: seconds from exec until /readyz answers 200 (polled every 20 ms), and the CPU
#      seconds (user + system) ztensord used until then
#   2. files served (ztensord_catalog_files{state="valid"}), and the last file's bytes
#      fetched and compared
#   3. VmHWM and VmRSS, open fds (/proc/PID/fd) and mappings (/proc/PID/maps) after start-up
#   4. GET /v1/files?limit=1000 pages, curl's time_total, median of 5: the first page, one
#      from the middle and the last (by cursor), and a prefix matching 1/10 of the names
#   5. once the background verifier has hashed every file: one PUT of a new 332-byte file
#      into the root: curl's time_total, and what the server did meanwhile, counted by
#      strace -c -f: openat, stat family, getdents64, mmap (the PUT's time is mostly its
#      fsyncs; tests/bench/scale_update_ir.sh counts the catalog update's instructions)
# Then, once: open + validate of a file of 100,000 objects, zTensor 1.2 and v2 (bench_lib;
# the v2 file takes 6.2 GB of disk, kept in BENCH_WORK for the next run).
source "$(dirname "$0")/common.sh"
bench_build
cd "$work"
N=${SCALE_FILES:-100000}
R=${SCALE_ROUNDS:-3}
root=$work/scale-root
pyexe=/usr/bin/python3; [ -x $pyexe ] || pyexe=python3

head -c 64 /dev/urandom >scale-d.bin
[ -f scale-t.zt ] || "$zt" pack -o scale-t.zt "w=f32:4x4:scale-d.bin" >/dev/null
have=$( (find "$root" -maxdepth 1 -name "f-*.zt" 2>/dev/null || true) | wc -l)
if [ "$have" != "$N" ]; then
  rm -rf "$root"
  t0=$(date +%s.%N)
  $pyexe "$top/tests/bench/scale_gen.py" scale-t.zt "$root" "$N"
  echo "made $N files in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
fi
find "$root" -maxdepth 1 ! -name 'f-*' -type f -delete # earlier rounds' PUTs
last=$(printf 'f-%06d.zt' $((N - 1)))
$pyexe -c "import hashlib,sys; sys.stdout.buffer.write(hashlib.sha256(b'%d' % ($N - 1)).digest() * 2)" >scale-last.bin
$pyexe "$top/tests/bench/scale_gen.py" scale-t.zt scale-put 1 new

echo "ztensord $("$ztd" --version | head -1), $(nproc) cores, ulimit -n $(ulimit -n)," \
  "vm.max_map_count $(cat /proc/sys/vm/max_map_count), $N files, ZTD_ARGS: ${ZTD_ARGS:-none}"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

hexname() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
page_ms() { # URL: median of 5 curl time_total, in ms; checks the status
  local v=() t code
  for _ in 1 2 3 4 5; do
    read -r code t < <(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$1")
    [ "$code" = 200 ] || { echo "HTTP $code for $1" >&2; echo "fail"; return; }
    v+=("$(awk -v t="$t" 'BEGIN { printf "%.1f", t * 1000 }')")
  done
  echo "${v[*]}" | median
}
status_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$zpid/status"; }

declare -A all
keep() { all[$1]="${all[$1]:-} $2"; }
for round in $(seq "$R"); do
  sync
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$ztd" --root "$root" --listen 127.0.0.1:0 --access-log off --allow-anonymous-writes ${ZTD_ARGS:-} >/dev/null 2>"$work/ztd.log" &
  zpid=$!
  zport=
  for _ in $(seq 6000); do # 120 s at most
    [ -n "$zport" ] || zport=$(grep -o 'listening on http://[^ ]*' "$work/ztd.log" 2>/dev/null | sed 's/.*://') || true
    [ -n "$zport" ] && curl -sf "http://127.0.0.1:$zport/readyz" >/dev/null && break
    kill -0 "$zpid" 2>/dev/null || { echo "ztensord exited:"; tail "$work/ztd.log"; exit 1; }
    sleep 0.02
  done
  up=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  # its CPU time (user + system) until then: what start-up costs whatever else the machine does
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$zpid/stat")
  Z="http://127.0.0.1:$zport/v1/files"
  valid=$(curl -s "http://127.0.0.1:$zport/metrics" | awk -F' ' '/^ztensord_catalog_files\{state="valid"\}/ { print $2 }')
  if curl -s "$Z/$last/objects/w/data" | cmp -s - scale-last.bin; then same=yes; else same=NO; fi
  hwm=$(status_kb VmHWM) rss=$(status_kb VmRSS)
  fds=$(ls "/proc/$zpid/fd" | wc -l) maps=$(wc -l <"/proc/$zpid/maps")
  p1=$(page_ms "$Z?limit=1000")
  pm=$(page_ms "$Z?limit=1000&cursor=$(hexname "$(printf 'f-%06d.zt' $((N / 2)))")")
  pl=$(page_ms "$Z?limit=1000&cursor=$(hexname "$(printf 'f-%06d.zt' $((N - 500)))")")
  pp=$(page_ms "$Z?limit=1000&prefix=f-05")
  # The background verifier hashes every file once after start-up, opening them in
  # turn: wait for it (at most 300 s), so that what strace counts is the PUT's.
  vt0=$(date +%s.%N)
  for _ in $(seq 3000); do
    curl -s "http://127.0.0.1:$zport/metrics" | grep -qx 'ztensord_digest_components{state="pending"} 0' && break
    sleep 0.1
  done
  vdone=$(awk -v a="$vt0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  strace -c -f -q -p "$zpid" -o "$work/strace.txt" &
  spid=$!
  sleep 1 # attached to every thread
  read -r code tput < <(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -T scale-put/new-000000.zt "$Z/new-$round.zt")
  case $code in 20?) putst=ok ;; *) putst="FAILED: HTTP $code" ;; esac
  sleep 0.5
  kill -INT "$spid"; wait "$spid" 2>/dev/null || true
  calls() { awk -v re="$1" '$NF ~ re { n += $4 } END { print n + 0 }' "$work/strace.txt"; }
  opens=$(calls '^(openat|open)$') stats=$(calls '^(newfstatat|statx|stat|lstat|fstat)$')
  dents=$(calls '^getdents64$') mmaps=$(calls '^mmap$')
  tput=$(awk -v t="$tput" 'BEGIN { printf "%.1f", t * 1000 }')
  # the same PUT again without strace: its time alone
  read -r code tput2 < <(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -T scale-put/new-000000.zt "$Z/new-$round-b.zt")
  case $code in 20?) ;; *) putst="$putst; again: HTTP $code" ;; esac
  tput2=$(awk -v t="$tput2" 'BEGIN { printf "%.1f", t * 1000 }')
  hwm2=$(status_kb VmHWM)
  stop_ztd
  printf 'round %s: ready in %s s (%s s of CPU); %s files valid, last file byte-exact: %s; VmHWM %s MiB, VmRSS %s MiB, %s fds, %s maps\n' \
    "$round" "$up" "$cpu" "$valid" "$same" $((hwm / 1024)) $((rss / 1024)) "$fds" "$maps"
  printf '  pages (ms): first %s, middle %s, last %s, prefix f-05 %s\n' "$p1" "$pm" "$pl" "$pp"
  printf '  digests verified %s s after the pages; PUT (%s): %s ms (under strace), %s ms (without); during it: %s opens, %s stats, %s getdents64, %s mmaps; VmHWM after %s MiB\n' \
    "$vdone" "$putst" "$tput" "$tput2" "$opens" "$stats" "$dents" "$mmaps" $((hwm2 / 1024))
  keep up "$up"; keep cpu "$cpu"; keep hwm $((hwm / 1024)); keep rss $((rss / 1024)); keep fds "$fds"
  keep p1 "$p1"; keep pm "$pm"; keep pl "$pl"; keep pp "$pp"; keep put "$tput2"; keep opens "$opens"
  keep stats "$stats"
  find "$root" -maxdepth 1 -name 'new-*' -delete
done
md() { echo "${all[$1]}" | xargs | median; }
echo
echo "medians of $R rounds: start-up $(md up) s ($(md cpu) s of CPU), VmHWM $(md hwm) MiB, VmRSS $(md rss) MiB, $(md fds) fds;" \
  "pages first $(md p1) ms, middle $(md pm) ms, last $(md pl) ms, prefix $(md pp) ms;" \
  "PUT $(md put) ms, $(md opens) opens and $(md stats) stats during it"

echo
"$bdir/tests/bench/bench_lib" "$work" --objects 100000 --runs 5 --mib 1 --keep | awk '/^\[/ { p = /^\[1\]/ } p'
# The v2 writer aligns each object to 64 KiB: the v2 file takes 6.2 GB of disk; kept for the next run.
[ -f "$work/many-v2.zt" ] || "$zt" convert "$work/many-100000.zt" -o "$work/many-v2.zt" --format v2 >/dev/null
"$bdir/tests/bench/bench_lib" "$work" --open "$work/many-v2.zt" --runs 5
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
