#!/usr/bin/env bash
# zt convert throughput against cp of the same bytes.
#   tests/bench/convert.sh [--mib M] [--runs R]
# Builds zt in Release (build-bench-convert/, zt only), writes a M MiB
# (default 1024) safetensors file of random F32 tensors (64 tensors) in
# build-bench-convert/bench-data, which must be on a disk, not tmpfs, then
# times, R times each (default 3), with the source file in the page cache:
#   cp SRC DST && sync
#   zt convert SRC -o OUT.zt --digest none && sync
#   zt convert SRC -o OUT.zt --digest sha256 && sync
# zt convert fsyncs its output itself; the sync after cp makes both pay for
# getting the bytes to disk. Prints the median of each and its ratio to cp
# (speed of zt / speed of cp: 1.0 = as fast as cp). Results: docs/PERFORMANCE.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${ZT_BENCH_BUILD:-$root/build-bench-convert}
mib=1024 runs=3
while [ $# -gt 0 ]; do
  case $1 in
    --mib) mib=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--mib M] [--runs R]" >&2; exit 2 ;;
  esac
done
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZT_BUILD_TESTS=OFF \
  -DZT_BUILD_SERVER=OFF -DZT_SANITIZE=OFF -DZT_FUZZ=OFF >/dev/null
cmake --build "$build" --target zt >/dev/null
zt=$build/cli/zt data=$build/bench-data
mkdir -p "$data"
fstype=$(stat -f -c %T "$data")
if [ "$fstype" = tmpfs ]; then
  echo "convert.sh: $data is on tmpfs; set ZT_BENCH_BUILD to a directory on disk" >&2
  exit 1
fi
src=$data/bench-$mib.safetensors
if [ ! -f "$src" ]; then
  python3 - "$src" "$mib" <<'PY'
import json, os, struct, sys
path, mib = sys.argv[1], int(sys.argv[2])
n = 64
per = mib * 1048576 // n            # bytes per tensor, a multiple of 4
hdr = {"__metadata__": {"format": "pt"}}
for i in range(n):
    hdr["model.layers.%d.weight" % i] = {"dtype": "F32", "shape": [per // 4],
                                         "data_offsets": [i * per, (i + 1) * per]}
h = json.dumps(hdr, separators=(",", ":")).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    chunk = os.urandom(1 << 20)
    for _ in range(mib):
        f.write(chunk)
PY
  sync
fi
cat "$src" >/dev/null # in the page cache for every run

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { # run NAME CMD...: prints the median seconds of R runs
  local name=$1; shift
  for _ in $(seq "$runs"); do
    rm -f "$data/out.zt" "$data/out.copy"; sync
    local t0; t0=$(now)
    "$@" >/dev/null
    sync
    echo "$(now) - $t0" | bc -l
  done | median
}
cp_s=$(run cp cp "$src" "$data/out.copy")
none_s=$(run none "$zt" convert "$src" -o "$data/out.zt" --digest none)
sha_s=$(run sha "$zt" convert "$src" -o "$data/out.zt" --digest sha256)
"$zt" verify "$data/out.zt" >/dev/null
rm -f "$data/out.zt" "$data/out.copy"
size=$(stat -c %s "$src")
echo "# $(date -u +%FT%TZ) $(uname -srm), $(nproc) cores, $fstype on $(df --output=source "$data" | tail -1)"
echo "# $mib MiB safetensors (64 F32 tensors), median of $runs runs, source in page cache, + sync"
printf '%-34s %8s %10s %9s\n' "command" "seconds" "MiB/s" "vs cp"
for row in "cp SRC DST:$cp_s" "zt convert --digest none:$none_s" "zt convert --digest sha256:$sha_s"; do
  name=${row%%:*} s=${row##*:}
  printf '%-34s %8.2f %10.0f %9.2f\n' "$name" "$s" "$(echo "$size / 1048576 / $s" | bc -l)" \
    "$(echo "$cp_s / $s" | bc -l)"
done
