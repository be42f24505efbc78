#!/usr/bin/env bash
# Benchmark: `zt verify` of a file of 100,000 small objects, as a whole process (issue 26, 7).
#   tests/bench/verify.sh      (VERIFY_OBJECTS, VERIFY_RUNS, BENCH_BUILD, BENCH_WORK, ZT, ZT_REF)
# Prints figures, not a verdict. Builds zt and bench_lib in Release (BENCH_BUILD, default
# build-bench/), writes two files of VERIFY_OBJECTS (default 100000) f32 [4,4] objects with
# bench_lib --make: one without digests, one with a sha256 per component (kept in
# BENCH_WORK, default BENCH_BUILD/bench-data, for the next run). For each file, VERIFY_RUNS
# (default 21) runs alternating `zt verify FILE` and, as the reference in the same run,
# `cat FILE >/dev/null` (the file is in the page cache): medians of the wall time and of
# the CPU time (user + system); the ratio of the wall medians. Then open + validate alone,
# in one process (bench_lib --open, median of VERIFY_RUNS). ZT: another build's zt to
# measure instead; ZT_REF: a second zt (e.g. an older commit's) run in the same loop,
# alternating with the first, and the ratio of their medians (wall and CPU).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${BENCH_BUILD:-$top/build-bench}
work=${BENCH_WORK:-$bdir/bench-data}
N=${VERIFY_OBJECTS:-100000}
R=${VERIFY_RUNS:-21}
cmake -S "$top" -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZT_BUILD_TESTS=ON -DZT_BUILD_SERVER=ON \
  -DZT_SANITIZE=OFF -DZT_FUZZ=OFF >/dev/null
cmake --build "$bdir" --target zt bench_lib >/dev/null
zt=$(realpath "${ZT:-$bdir/cli/zt}")
ref=${ZT_REF:+$(realpath "$ZT_REF")}
bl=$bdir/tests/bench/bench_lib
mkdir -p "$work"
cd "$work"
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'; }
[ -f "verify-$N-none.zt" ] || "$bl" "$work" --make "verify-$N-none.zt" --objects "$N" --digest none
[ -f "verify-$N-sha256.zt" ] || "$bl" "$work" --make "verify-$N-sha256.zt" --objects "$N" --digest sha256

echo "zt: $zt ($("$zt" --version 2>/dev/null | head -1)), $(nproc) cores, $N objects, $R runs each"
[ -z "$ref" ] || echo "ZT_REF: $ref"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
# one run of "$@": "WALL_MS CPU_MS" on stdout (bash's time: the child's user + system)
one() {
  local t
  t=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null; } 2>&1 | tail -1)
  awk '{ printf "%.1f %.1f\n", $1 * 1000, ($2 + $3) * 1000 }' <<<"$t"
}
for kind in none sha256; do
  f=verify-$N-$kind.zt
  "$zt" verify "$f" >/dev/null || { echo "zt verify $f failed" >&2; exit 1; }
  cat "$f" >/dev/null
  vw=() vc=() cw=() cc=() rw=() rc=()
  for _ in $(seq "$R"); do
    read -r w c < <(one "$zt" verify "$f"); vw+=("$w"); vc+=("$c")
    read -r w c < <(one cat "$f"); cw+=("$w"); cc+=("$c")
    [ -z "$ref" ] || { read -r w c < <(one "$ref" verify "$f"); rw+=("$w"); rc+=("$c"); }
  done
  mvw=$(echo "${vw[*]}" | median) mvc=$(echo "${vc[*]}" | median)
  mcw=$(echo "${cw[*]}" | median) mcc=$(echo "${cc[*]}" | median)
  printf '%s (%.1f MB, digests: %s): zt verify %s ms wall, %s ms CPU; cat %s ms wall, %s ms CPU; ratio %s\n' \
    "$f" "$(stat -c %s "$f" | awk '{ print $1 / 1e6 }')" "$kind" "$mvw" "$mvc" "$mcw" "$mcc" "$(ratio "$mvw" "$mcw")"
  if [ -n "$ref" ]; then
    mrw=$(echo "${rw[*]}" | median) mrc=$(echo "${rc[*]}" | median)
    printf '  ZT_REF verify %s ms wall, %s ms CPU; zt / ZT_REF: wall %s, CPU %s\n' \
      "$mrw" "$mrc" "$(ratio "$mvw" "$mrw")" "$(ratio "$mvc" "$mrc")"
  fi
  "$bl" "$work" --open "$f" --runs "$R" | sed 's/^\[1\] /  /'
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
