#!/usr/bin/env bash
# Benchmark (not a test): memory of ztensord under many decoded zstd streams.
#   tests/bench/decode_mem.sh   (N, HOLD, AFTER, BENCH_BUILD, BENCH_WORK, ZTD to override)
# Packs a 4 MiB component with `zt pack --compress` (default level), starts ztensord
# on it (127.0.0.1, ephemeral port), then decode_mem.py opens N (default 500)
# connections at once, each asking for a range of the component without zstd in
# Accept-Encoding, holds them HOLD seconds (default 3) unread, and reads them out.
# Prints the daemon's VmHWM (peak RSS) and VmRSS along the way, and VmRSS again
# AFTER seconds (default 60) after the last client closed. ZTD=path runs another
# ztensord binary (e.g. an older build, for a before/after comparison).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bdir=${BENCH_BUILD:-$top/build-bench-decode}
work=${BENCH_WORK:-$bdir/bench-data}
N=${N:-500}
HOLD=${HOLD:-3}
AFTER=${AFTER:-60}
cmake -S "$top" -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZT_BUILD_TESTS=OFF >/dev/null
cmake --build "$bdir" >/dev/null
ztd=${ZTD:-$bdir/server/ztensord}
zt=$bdir/cli/zt
mkdir -p "$work/root"
cd "$work"
if [ ! -f root/dec.zt ]; then
  head -c 3200000 /dev/urandom | base64 -w0 >text.b64 # compressible, like weights: ~75%
  head -c 4194304 text.b64 >text.bin
  "$zt" pack -o root/dec.zt --compress "w=u8:4194304:text.bin" >/dev/null
fi
ulimit -n 4096
"$ztd" --root "$work/root" --listen 127.0.0.1:0 --access-log off --connection-limit 2048 "$@" \
  2>"$work/ztd.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
port=
for _ in $(seq 100); do
  port=$(grep -o 'listening on http://[^ ]*' "$work/ztd.log" 2>/dev/null | sed 's/.*://') || true
  [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
  sleep 0.1
done
[ -n "$port" ] || { echo "ztensord did not start:"; cat "$work/ztd.log"; exit 1; }
echo "$("$ztd" --version | head -1), $(nproc) cores; component $(stat -c %s text.bin) bytes" \
  "($("$zt" info root/dec.zt | grep -o 'zstd[^,]*' | head -1)); $N decoded range requests"
echo "start: $(grep -E 'VmHWM|VmRSS' /proc/$pid/status | tr -s ' \t\n' ' ')"
/usr/bin/python3 "$top/tests/bench/decode_mem.py" "$port" /v1/files/dec.zt/objects/w/data "$N" "$HOLD" "$pid"
sleep "$AFTER"
hwm=$(awk '/VmHWM/ { print $2 }' /proc/$pid/status)
rss=$(awk '/VmRSS/ { print $2 }' /proc/$pid/status)
printf 'peak RSS (VmHWM) %d MiB; RSS %d s after the last client closed: %d MiB\n' \
  $((hwm / 1024)) "$AFTER" $((rss / 1024))
