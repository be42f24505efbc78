#!/usr/bin/env bash
# Builds bench_lib in Release (build-bench/; only that target, so the server
# need not compile) and runs it with its data in build-bench/bench-data, which
# must be on a disk, not tmpfs.
#   tests/bench/bench_lib.sh [--objects N] [--runs R] [--mib M]
# Needs about 2 x M MiB free (default M = 1024). Results: docs/PERFORMANCE.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${ZT_BENCH_BUILD:-$root/build-bench}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZT_BUILD_TESTS=ON -DZT_BUILD_SERVER=ON \
  -DZT_SANITIZE=OFF -DZT_FUZZ=OFF >/dev/null
cmake --build "$build" --target bench_lib >/dev/null
data=$build/bench-data
mkdir -p "$data"
fstype=$(stat -f -c %T "$data")
if [ "$fstype" = tmpfs ]; then
  echo "bench_lib.sh: $data is on tmpfs; set ZT_BENCH_BUILD to a directory on disk" >&2
  exit 1
fi
echo "# $(date -u +%FT%TZ) $(uname -srm), $(nproc) cores, $fstype on $(df --output=source "$data" | tail -1)"
echo "# $(${CC:-cc} --version 2>/dev/null | head -1 || true)"
"$build/tests/bench/bench_lib" "$data" "$@"
