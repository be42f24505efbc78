#!/usr/bin/env bash
# Benchmark (issue 23): ztensord's peak RSS while 64 clients download a 1 GiB model's
# safetensors view at once, through its listed name (GET /v1/files/model.safetensors/raw,
# the view of model.zt). Not a test: prints figures (target: below 64 MiB and flat).
#   tests/bench/view_rss.sh   (BENCH_BUILD, BENCH_WORK, CLIENTS (64), ROUNDS (2) to
#                              override; ZTD=path/to/ztensord and ZT=path/to/zt to measure
#                              another build without building)
#   Per round: VmRSS before, VmHWM (peak) after all clients ended, the statuses and bytes
#   each client got (every one must be 200 with the whole view), the wall time and the
#   aggregate GB/s. A raw model (128 f32 tensors of 8 MiB): its tensors are one file span
#   after the header in memory, sent through a reader (pread into 256 KiB per response,
#   no mapping of the file), so RSS should not grow with the clients: VmHWM (the peak,
#   file pages mapped included) is the figure. With ZSTD=1, the same for a zstd model
#   of 256 MiB (decoded on the fly: one decoder per stream).
source "$(dirname "$0")/common.sh"
bench_build
cd "$work"
mkdir -p view_rss/root
MiB=$((1 << 20))
[ -s t8.bin ] || head -c $((8 * MiB)) /dev/urandom >t8.bin
# view.sh's model when it is there (a hard link: no second GiB on disk)
[ -s view_rss/root/model.zt ] || ln root/model.zt view_rss/root/model.zt 2>/dev/null || true
if [ ! -s view_rss/root/model.zt ]; then
  args=()
  for i in $(seq 0 127); do args+=("model.layers.$i.weight=f32:2048x1024:t8.bin"); done
  "$zt" pack -o view_rss/root/model.zt "${args[@]}" >/dev/null
fi
if [ "${ZSTD:-0}" = 1 ] && [ ! -s view_rss/root/zmodel.zt ]; then
  head -c $((8 * MiB)) /dev/zero | tr '\0' 'a' >a8.bin
  args=()
  for i in $(seq 0 31); do args+=("z.$i=u8:$((8 * MiB)):$([ $((i % 2)) = 0 ] && echo t8.bin || echo a8.bin)"); done
  "$zt" pack --compress -o view_rss/root/zmodel.zt "${args[@]}" >/dev/null
fi
start_ztd "$work/view_rss/root"
wait_digests
trap stop_ztd EXIT
base=http://127.0.0.1:$zport/v1/files
clients=${CLIENTS:-64}

# one round: CLIENTS downloads of NAME at once
round() {
  local name=$1 want rss0 t0 t1 bad=0 bytes=0
  want=$(curl -s "$base/$name" | python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])')
  rss0=$(awk '/VmRSS/ { print $2 }' "/proc/$zpid/status")
  t0=$(date +%s%N)
  local pids=() sampler
  # VmRSS and its anonymous part sampled every 50 ms while the clients run: flat or not
  (while kill -0 "$zpid" 2>/dev/null; do
     awk '/^VmRSS|^RssAnon/ { printf "%s ", $2 } END { print "" }' "/proc/$zpid/status"
     sleep 0.05
   done) >"$work/view_rss/samples" &
  sampler=$!
  for c in $(seq "$clients"); do
    curl -s -o /dev/null -w '%{http_code} %{size_download}\n' "$base/$name/raw" >"$work/view_rss/c.$c" &
    pids+=($!)
  done
  wait "${pids[@]}" || true
  t1=$(date +%s%N)
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
  for c in $(seq "$clients"); do
    code=000 got=0
    read -r code got <"$work/view_rss/c.$c" || true
    [ "$code" = 200 ] && [ "$got" = "$want" ] || bad=$((bad + 1))
    bytes=$((bytes + ${got:-0}))
  done
  awk -v n="$name" -v c="$clients" -v w="$want" -v r0="$rss0" -v hwm="$(peak_rss_mib "$zpid")" \
    -v rss1="$(awk '/VmRSS/ { print $2 }' "/proc/$zpid/status")" -v b="$bytes" \
    -v s="$(((t1 - t0) / 1000000))" -v bad="$bad" \
    -v peak="$(awk '$1 > m { m = $1 } END { print m + 0 }' "$work/view_rss/samples")" \
    -v anon="$(awk '$2 > m { m = $2 } END { print m + 0 }' "$work/view_rss/samples")" \
    -v ns="$(wc -l <"$work/view_rss/samples")" 'BEGIN {
      printf "%s: %d clients x %.0f MiB: RSS before %.1f MiB, sampled peak %.1f MiB (anonymous %.1f MiB, %d samples), after %.1f MiB, VmHWM %.1f MiB; %.1f s, %.2f GB/s; %d answers short or not 200\n",
        n, c, w / 1048576, r0 / 1024, peak / 1024, anon / 1024, ns, rss1 / 1024, hwm, s / 1000, b / s / 1e6, bad }'
  cut -d' ' -f1 "$work"/view_rss/c.* | sort | uniq -c | awk '{ printf "  status %s: %d\n", $2, $1 }'
}
echo "# $(date -u +%FT%TZ) $("$ztd" --version 2>/dev/null | head -1)"
for r in $(seq "${ROUNDS:-2}"); do
  round model.safetensors
  [ "${ZSTD:-0}" = 1 ] && round zmodel.safetensors
done
