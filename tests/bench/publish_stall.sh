#!/usr/bin/env bash
# Do other connections wait while a large upload is verified and published?
#   tests/bench/publish_stall.sh [ZTENSORD]   (default: a Release build in BENCH_BUILD)
# One worker thread (--threads 1), so that every connection shares the worker
# that receives the PUT; 4 connections send 4 KiB GETs in a loop while a 1 GiB
# .zt is PUT (data on disk, as BENCH_WORK). publish_stall.py prints the latency
# of the GETs that overlapped the verify + fsync + publish phase.
source "$(dirname "$0")/common.sh"
if [ $# -ge 1 ]; then
  ztd=$(realpath "$1") zt=$(realpath "${ZT:-$(dirname "$1")/../cli/zt}")
  mkdir -p "$work"
else
  bench_build
fi
cd "$work"
mkdir -p stall-root src
gen() { [ -f "$2" ] && [ "$(stat -c %s "$2")" = "$1" ] || head -c "$1" /dev/urandom >"$2"; }
gen $((1 << 30)) src/1g.bin
gen 4096 src/small.bin
[ -f src/1g.zt ] || "$zt" pack -o src/1g.zt "w=u8:$((1 << 30)):src/1g.bin" >/dev/null
rm -rf stall-root/* stall-root/.ztensord-staging
"$zt" pack -o stall-root/small.zt "small=u8:4096:src/small.bin" >/dev/null
cat src/1g.zt >/dev/null # page cache
start_ztd "$work/stall-root" --threads 1 --allow-anonymous-writes --disk-reserve 0
/usr/bin/python3 "$top/tests/bench/publish_stall.py" "$zport" src/1g.zt 4
stop_ztd
