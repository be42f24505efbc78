#!/usr/bin/env bash
# Benchmark: what one PUT costs the catalog, in instructions (callgrind), for roots of
# several sizes: the work is O(1) files when the count does not grow with the root.
#   tests/bench/scale_update_ir.sh [ZTENSORD] [SIZES...]   (default: this tree's Release
#   build, 5000 and 15000 files; BENCH_BUILD, BENCH_WORK as for the other scripts)
# For each size: a root of that many small files (scale_gen.py), ztensord under
# valgrind --tool=callgrind with instrumentation off until /readyz answers, then on,
# collecting only inside ztd_catalog_update and ztd_catalog_rescan; three PUTs of new
# files (each also reported by inotify 200 ms later); the instructions counted, per PUT.
# (Before issue 14's changes, each PUT made a new snapshot by walking every entry and
# the inotify event rescanned the root: see docs/PERFORMANCE.md, "Many files".)
source "$(dirname "$0")/common.sh"
ztd_bin=${1:-}
[ $# -gt 0 ] && shift
sizes=("${@:-5000 15000}")
# shellcheck disable=SC2206
sizes=(${sizes[*]})
if [ -z "$ztd_bin" ]; then bench_build; ztd_bin=$ztd; else zt=$bdir/cli/zt; fi
cd "$work"
pyexe=/usr/bin/python3; [ -x $pyexe ] || pyexe=python3
head -c 64 /dev/urandom >scale-d.bin
[ -f scale-t.zt ] || "$zt" pack -o scale-t.zt "w=f32:4x4:scale-d.bin" >/dev/null
$pyexe "$top/tests/bench/scale_gen.py" scale-t.zt scale-put 1 new
for n in "${sizes[@]}"; do
  root=$work/ir-root-$n
  [ "$( (find "$root" -maxdepth 1 -name 'f-*.zt' 2>/dev/null || true) | wc -l)" = "$n" ] ||
    { rm -rf "$root"; $pyexe "$top/tests/bench/scale_gen.py" scale-t.zt "$root" "$n"; }
  rm -f "$root"/ir-*.zt "$work"/ir.out*
  valgrind --tool=callgrind --instr-atstart=no --toggle-collect=ztd_catalog_update \
    --toggle-collect=ztd_catalog_rescan --callgrind-out-file="$work/ir.out" \
    "$ztd_bin" --root "$root" --listen 127.0.0.1:0 --access-log off --allow-anonymous-writes \
    --verify-digests=false 2>"$work/ir.log" &
  vp=$!
  port=
  for _ in $(seq 1200); do # 10 minutes at most
    [ -n "$port" ] || port=$(grep -o 'listening on http://[^ ]*' "$work/ir.log" | sed 's/.*://') || true
    [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
    sleep 0.5
  done
  callgrind_control -i on "$vp" >/dev/null
  for k in 1 2 3; do
    curl -s -o /dev/null -T scale-put/new-000000.zt "http://127.0.0.1:$port/v1/files/ir-$k.zt"
    sleep 1
  done
  sleep 1
  kill -TERM "$vp"; wait "$vp" || true
  rm -f "$root"/ir-*.zt
  ir=$(callgrind_annotate "$work"/ir.out* 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
  echo "$n files: $((ir / 3)) instructions per PUT in ztd_catalog_update + ztd_catalog_rescan"
done
