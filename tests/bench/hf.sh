#!/usr/bin/env bash
# Benchmark: the Hugging Face front (/hf, docs/HF.md) on loopback (not a test: prints figures).
#   tests/bench/hf.sh       (BENCH_BUILD, BENCH_WORK, ROUNDS to override; ZTD=path/to/ztensord
#                            and ZT=path/to/zt to measure another build)
#   1. GET /hf/org/model/resolve/main/model.zt of a 1 GiB zTensor v2 file (128 tensors of
#      8 MiB), one curl stream, against nginx sending the same file: ROUNDS + 2 alternate
#      rounds (default 5), medians, each round's ratio; server CPU seconds per GiB sent
#      (utime + stime from /proc/PID/stat; nginx: its workers). Every answer must be 200
#      with every byte (nginx's too).
#   2. the first request for a 1 GiB safetensors file after start-up, which hashes it
#      (its digest is the sha256 of its bytes), then a later one.
#   3. a repository of 10,000 files: GET /api/models/{repo} and one page of the recursive
#      tree (1000 items), the first request and the median of 11 later ones (curl
#      time_total, ms), for 10,000 zTensor v2 files (digests from their manifests) and for
#      10,000 1.2 files (sha256 of their bytes: hashed by the first request when it comes
#      at once, else by the background verifier). For the 1.2 files, also the first
#      request after a restart once the verifier's pass is done
#      (ztensord_files_hashed{state="pending"} 0), and how long that pass took.
source "$(dirname "$0")/common.sh"
bench_build
cd "$work"
MiB=$((1 << 20))
mkdir -p hfroot/org/model hfstatic hfroot/org/many hfroot/org/many12 hfroot/org/st
[ -s t8.bin ] || head -c $((8 * MiB)) /dev/urandom >t8.bin
if [ ! -s hfroot/org/model/model.zt ]; then
  args=()
  for i in $(seq 0 127); do args+=("model.layers.$i.weight=f32:2048x1024:t8.bin"); done
  "$zt" pack --format v2 -o hfroot/org/model/model.zt "${args[@]}" >/dev/null
fi
[ -s hfstatic/model.zt ] || cp hfroot/org/model/model.zt hfstatic/model.zt
[ -s hfroot/org/st/model.safetensors ] || "$zt" convert hfroot/org/model/model.zt -o hfroot/org/st/model.safetensors >/dev/null
size=$(stat -c %s hfstatic/model.zt)
if [ ! -s hfroot/org/many/f09999.zt ]; then
  head -c 256 /dev/urandom >small.bin
  "$zt" pack --format v2 -o small2.zt w=u8:256:small.bin >/dev/null
  "$zt" pack -o small12.zt w=u8:256:small.bin >/dev/null
  for i in $(seq -f '%05g' 0 9999); do
    d=$(( 10#$i / 1000 ))
    mkdir -p "hfroot/org/many/d$d" "hfroot/org/many12/d$d"
    cp small2.zt "hfroot/org/many/d$d/f$i.zt"
    cp small12.zt "hfroot/org/many12/d$d/f$i.zt"
  done
  touch hfroot/org/many/f09999.zt
fi

start_ztd "$work/hfroot"
wait_digests # the verifier hashes model.zt whole once: not measured with the GETs
start_nginx "$work/hfstatic"
Z="http://127.0.0.1:$zport/hf/org/model/resolve/main/model.zt"
N="http://127.0.0.1:$nport/model.zt"
curl -sf "$Z" | cmp -s - hfstatic/model.zt || { echo "resolve is not the file"; exit 1; }
echo "ztensord $("$ztd" --version | head -1), nginx $(nginx -v 2>&1 | sed 's/.*\///'), $(nproc) cores, $(date -u +%FT%TZ)"
load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; }
one_get() {
  local port c0 c1 out code got speed
  port=$(sed -E 's#^http://[^:/]+:([0-9]+)/.*#\1#' <<<"$1")
  c0=$(server_ticks "$port")
  out=$(curl -s -o /dev/null -w '%{http_code} %{size_download} %{speed_download}' "$1")
  c1=$(server_ticks "$port")
  read -r code got speed <<<"$out"
  [ "$code" = 200 ] && [ "$got" = "$size" ] || { echo "$1: HTTP $code, $got of $size bytes" >&2; exit 1; }
  awk -v c=$((c1 - c0)) -v t="$(getconf CLK_TCK)" -v n="$got" 'BEGIN { printf "%.3f\n", c / t / (n / 2^30) }' \
    >>"$work/hcpu.$port"
  awk -v s="$speed" 'BEGIN { printf "%.2f", s / 1e9 }'
}
rm -f "$work"/hcpu.*
ROUNDS=$((${ROUNDS:-3} + 2)) alternate "$Z" "$N" one_get
printf '1. resolve of a 1 GiB v2 file, one curl stream: ztensord %s GB/s, nginx %s GB/s, ratio %s (rounds: %s)\n' \
  "$alt_a" "$alt_b" "$alt_ratio" "$alt_rounds"
printf '   server CPU per GiB (median): ztensord %s s, nginx %s s (%s)\n' \
  "$(tr '\n' ' ' <"$work/hcpu.$zport" | median)" "$(tr '\n' ' ' <"$work/hcpu.$nport" | median)" "$(load)"
stop_nginx

t_ms() { # t_ms URL: "CODE MS" of one GET
  curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$1" | awk '{ printf "%s %.1f\n", $1, $2 * 1000 }'
}
read -r code first <<<"$(t_ms "http://127.0.0.1:$zport/hf/api/models/org/st")"
[ "$code" = 200 ] || { echo "st: HTTP $code"; exit 1; }
read -r code later <<<"$(t_ms "http://127.0.0.1:$zport/hf/api/models/org/st")"
printf '2. a 1 GiB safetensors file: first /api/models after start-up (hashes it) %s ms, later %s ms (%s)\n' \
  "$first" "$later" "$(load)"

for repo in many many12; do
  for what in "api/models/org/$repo" "api/models/org/$repo/tree/main?recursive=true"; do
    stop_ztd
    start_ztd "$work/hfroot"
    U="http://127.0.0.1:$zport/hf/$what"
    read -r code first <<<"$(t_ms "$U")"
    [ "$code" = 200 ] || { echo "$U: HTTP $code"; exit 1; }
    later=()
    for _ in $(seq 11); do
      read -r code t <<<"$(t_ms "$U")"
      [ "$code" = 200 ] || { echo "$U: HTTP $code"; exit 1; }
      later+=("$t")
    done
    printf '3. %s (10,000 %s files, %s bytes): first %s ms, later %s ms (median of 11) (%s)\n' "$what" \
      "$([ "$repo" = many ] && echo v2 || echo 1.2)" "$(curl -s "$U" | wc -c)" "$first" \
      "$(echo "${later[*]}" | median)" "$(load)"
    [ "$repo" = many12 ] || continue
    stop_ztd
    t0=$(date +%s%N)
    start_ztd "$work/hfroot"
    for _ in $(seq 1200); do # the verifier's pass (bounded: 120 s)
      curl -s "http://127.0.0.1:$zport/metrics" | grep -qx 'ztensord_files_hashed{state="pending"} 0' && break
      sleep 0.1
    done
    pass_ms=$((($(date +%s%N) - t0) / 1000000))
    U="http://127.0.0.1:$zport/hf/$what"
    read -r code first <<<"$(t_ms "$U")"
    [ "$code" = 200 ] || { echo "$U: HTTP $code"; exit 1; }
    printf '   after the verifier'"'"'s pass (%s ms from start-up, every file of the root): first %s ms (%s)\n' \
      "$pass_ms" "$first" "$(load)"
  done
done
stop_ztd
