#!/usr/bin/env bash
# Benchmark: the safetensors view (/v1/files/{file}/safetensors) against nginx serving
# `zt convert`'s output of the same model, on loopback (not a test: prints figures).
#   tests/bench/view.sh     (BENCH_BUILD, BENCH_WORK, ROUNDS to override; ZTD=path/to/ztensord
#                            and ZT=path/to/zt to measure another build)
#   1. GET of a 1 GiB raw model's view (128 f32 tensors of 8 MiB), one curl stream, against
#      nginx sending the converted file: ROUNDS + 2 alternate rounds (default 5), medians,
#      each round's ratio; server CPU seconds per GiB sent (utime + stime from
#      /proc/PID/stat; nginx: its workers). Every answer must be 200 with every byte.
#   2. first byte of the view of a file of 100,000 tensors once the file is open: the first
#      request (which builds the header) and the median of 11 later ones (curl
#      time_starttransfer), for tensors of 64 bytes (contiguous: one file span) and of
#      100 bytes (64-byte aligned: 100,000 spans); the server's CPU time per later GET
#      (whole body sent: the wall times are at the mercy of the machine's load).
#   3. the view of a zstd model (32 tensors of 8 MiB of base64 text, `zt pack --compress`),
#      decoded on the fly, one curl stream, against `zstd -d` of the same frames (the
#      components' stored bytes, concatenated) to /dev/null: decoded MB/s, ROUNDS + 2
#      alternate rounds, medians, each round's ratio; the view must be 200 with every
#      byte and cmp-equal to zt convert's output.
#   The 64-client memory figure is tests/bench/view_rss.sh.
source "$(dirname "$0")/common.sh"
command -v nginx >/dev/null || apt-get install -y -qq nginx-light >/dev/null
if [ -n "${ZTD:-}" ]; then
  ztd=$(realpath "$ZTD") zt=$(realpath "${ZT:-$(dirname "$ZTD")/../cli/zt}")
  gen=$(dirname "$ztd")/../tests/remote/gen_many
else
  cmake -S "$top" -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZT_BUILD_TESTS=ON \
    -DZT_BUILD_SERVER=ON -DZT_SANITIZE=OFF -DZT_FUZZ=OFF >/dev/null
  cmake --build "$bdir" --target ztensord zt gen_many >/dev/null
  ztd=$bdir/server/ztensord zt=$bdir/cli/zt gen=$bdir/tests/remote/gen_many
fi
mkdir -p "$work/root" "$work/static"
chmod 755 "$work"
cd "$work"
MiB=$((1 << 20))
[ -s t8.bin ] || head -c $((8 * MiB)) /dev/urandom >t8.bin
if [ ! -s root/model.zt ]; then
  args=()
  for i in $(seq 0 127); do args+=("model.layers.$i.weight=f32:2048x1024:t8.bin"); done
  "$zt" pack -o root/model.zt "${args[@]}" >/dev/null
fi
[ -s static/model.safetensors ] || "$zt" convert root/model.zt -o static/model.safetensors >/dev/null
[ -s root/many64.zt ] || "$gen" root/many64.zt 100000 64 >/dev/null
[ -s root/many100.zt ] || "$gen" root/many100.zt 100000 100 >/dev/null
vsize=$(stat -c %s static/model.safetensors)

start_ztd "$work/root"
wait_digests
start_nginx "$work/static"
V="http://127.0.0.1:$zport/v1/files/model.zt/safetensors"
N="http://127.0.0.1:$nport/model.safetensors"
curl -sf "$V" | cmp -s - static/model.safetensors || { echo "the view is not zt convert's output"; exit 1; }
echo "ztensord $("$ztd" --version | head -1), nginx $(nginx -v 2>&1 | sed 's/.*\///'), $(nproc) cores, $(date -u +%FT%TZ)"
load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; }

# one_get URL: GB/s of one GET; the server's CPU seconds per GiB into $work/vcpu.PORT
one_get() {
  local port c0 c1 out
  port=$(sed -E 's#^http://[^:/]+:([0-9]+)/.*#\1#' <<<"$1")
  c0=$(server_ticks "$port")
  out=$(curl -s -o /dev/null -w '%{http_code} %{size_download} %{speed_download}' "$1")
  c1=$(server_ticks "$port")
  read -r code size speed <<<"$out"
  [ "$code" = 200 ] && [ "$size" = "$vsize" ] || { echo "$1: HTTP $code, $size of $vsize bytes" >&2; exit 1; }
  awk -v c=$((c1 - c0)) -v t="$(getconf CLK_TCK)" -v n="$size" 'BEGIN { printf "%.3f\n", c / t / (n / 2^30) }' \
    >>"$work/vcpu.$port"
  awk -v s="$speed" 'BEGIN { printf "%.2f", s / 1e9 }'
}
rm -f "$work"/vcpu.*
ROUNDS=$((${ROUNDS:-3} + 2)) alternate "$V" "$N" one_get
printf '1. view of a 1 GiB raw model (128 tensors), one curl stream: ztensord %s GB/s, nginx (zt convert output) %s GB/s, ratio %s (rounds: %s)\n' \
  "$alt_a" "$alt_b" "$alt_ratio" "$alt_rounds"
printf '   server CPU per GiB (median): ztensord %s s, nginx %s s (%s)\n' \
  "$(tr '\n' ' ' <"$work/vcpu.$zport" | median)" "$(tr '\n' ' ' <"$work/vcpu.$nport" | median)" "$(load)"
stop_nginx

# first byte: the first request builds the header; later ones reuse it
ttfb() { curl -s -o /dev/null -w '%{http_code} %{time_starttransfer}\n' "$1"; }
for f in many64 many100; do
  stop_ztd
  start_ztd "$work/root"
  wait_digests
  U="http://127.0.0.1:$zport/v1/files/$f.zt/safetensors"
  curl -sf -o /dev/null "http://127.0.0.1:$zport/v1/files/$f.zt" # opened (its manifest read)
  read -r code first <<<"$(ttfb "$U")"
  [ "$code" = 200 ] || { echo "$U: HTTP $code"; exit 1; }
  later=()
  c0=$(server_ticks "$zport")
  for _ in $(seq 11); do
    read -r code t <<<"$(ttfb "$U")"
    [ "$code" = 200 ] || { echo "$U: HTTP $code"; exit 1; }
    later+=("$t")
  done
  cpu=$(awk -v c=$(($(server_ticks "$zport") - c0)) -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", c / t / 11 * 1000 }')
  curl -sf "$U" -o "$work/$f.view"
  "$zt" convert "root/$f.zt" -o "$work/$f.conv.safetensors" >/dev/null
  cmp -s "$work/$f.view" "$work/$f.conv.safetensors" || { echo "$f: the view is not zt convert's"; exit 1; }
  printf '2. first byte of the view of 100,000 tensors of %s bytes (%s bytes): first request %.1f ms, later %.1f ms (median of 11); server CPU per later GET (the whole body) %s ms (%s)\n' \
    "${f#many}" "$(stat -c %s "$work/$f.view")" "$(awk -v t="$first" 'BEGIN { print t * 1000 }')" \
    "$(echo "${later[*]}" | median | awk '{ print $1 * 1000 }')" "$cpu" "$(load)"
  rm -f "$work/$f.view" "$work/$f.conv.safetensors"
done

# 3. a zstd model's view against zstd -d of the same frames
if [ ! -s root/zmodel.zt ]; then
  for k in 0 1 2 3; do head -c $((6 * MiB)) /dev/urandom | base64 -w0 | head -c $((8 * MiB)) >"b8.$k.txt"; done
  args=()
  for i in $(seq 0 31); do args+=("z.$i=u8:$((8 * MiB)):b8.$((i % 4)).txt"); done
  "$zt" pack --compress -o root/zmodel.zt "${args[@]}" >/dev/null
  rm -f b8.?.txt
fi
"$zt" info --json root/zmodel.zt | python3 -c '
import json, sys
m = json.load(sys.stdin)
src, out, n = open(sys.argv[1], "rb"), open(sys.argv[2], "wb"), 0
for o in m["objects"].values():
    for c in o["components"].values():
        if c.get("encoding") != "zstd":
            sys.exit("a component is not zstd: %r" % c)
        src.seek(c["offset"])
        out.write(src.read(c["length"]))
        n += c["uncompressed_length"]
print(n)' root/zmodel.zt zframes.zst >zframes.len
zlen=$(cat zframes.len)
"$zt" convert root/zmodel.zt -o zconv.safetensors >/dev/null
zsize=$(stat -c %s zconv.safetensors)
stop_ztd
start_ztd "$work/root"
wait_digests
Z="http://127.0.0.1:$zport/v1/files/zmodel.zt/safetensors"
curl -sf "$Z" | cmp -s - zconv.safetensors || { echo "the zstd view is not zt convert's output"; exit 1; }
rm -f zconv.safetensors
# decoded MB/s of the view (its size / time) or of zstd -d (the frames' decoded bytes / time)
zstd_or_view() {
  local t0 t1 out
  if [ "$1" = zstd ]; then
    t0=$(date +%s%N)
    zstd -d -q -f zframes.zst -o /dev/null
    t1=$(date +%s%N)
    awk -v n="$zlen" -v t=$((t1 - t0)) 'BEGIN { printf "%.0f", n / (t / 1e9) / 1e6 }'
  else
    out=$(curl -s -o /dev/null -w '%{http_code} %{size_download} %{time_total}' "$1")
    read -r code size t <<<"$out"
    [ "$code" = 200 ] && [ "$size" = "$zsize" ] || { echo "$1: HTTP $code, $size of $zsize bytes" >&2; exit 1; }
    awk -v n="$size" -v t="$t" 'BEGIN { printf "%.0f", n / t / 1e6 }'
  fi
}
ROUNDS=$((${ROUNDS:-3} + 2)) alternate "$Z" zstd zstd_or_view
printf '3. view of a zstd model (%s MB decoded, %s MB of frames), one curl stream: ztensord %s MB/s, zstd -d %s MB/s, ratio %s (rounds: %s) (%s)\n' \
  "$((zlen / 1000000))" "$(($(stat -c %s zframes.zst) / 1000000))" "$alt_a" "$alt_b" "$alt_ratio" "$alt_rounds" "$(load)"
stop_ztd
