#!/usr/bin/env bash
# Benchmark: the S3 front (docs/S3.md) against nginx serving the same file, on loopback
# (not a test: prints figures measured in one run).
#   tests/bench/s3.sh   (BENCH_BUILD, BENCH_WORK, ROUNDS, SIZE_MIB to override; ZTD=path/to/
#                        ztensord to measure another build)
#   1. GetObject of a SIZE_MIB (default 1024) safetensors file, one curl stream, against
#      nginx sending the same file: ROUNDS + 2 alternate rounds (default 5), medians, each
#      round's ratio; server CPU seconds per GiB (utime + stime from /proc/PID/stat; nginx:
#      its workers). Every answer must be 200 with every byte.
#   2. The Run:ai streamer's pattern: the file in 8 MiB ranged GETs, 16 in flight (curl
#      --parallel --parallel-max 16), against nginx with the same ranges; every answer
#      must be 206. Same rounds, medians, CPU per GiB.
#   3. ListObjectsV2 over 100,000 keys, pages of 1,000 (max-keys=1000, following
#      NextContinuationToken): the median and the slowest page (curl time_total).
#   4. A 1 GiB .zt uploaded through S3 multipart against a whole-file PUT /v1/files of the
#      same file (curl -T): boto3's upload_file and `aws s3 cp` with their defaults (8 MiB
#      parts, 10 in flight; over http:// both sign each part's sha256 and send its CRC32,
#      which the server checks), and curl (16 MiB parts, 4 in flight, then Complete).
#      Rounds alternate each client with a PUT; medians of the seconds from the first byte
#      sent to the answer, each pair's ratio, and the server's CPU seconds per GiB; all
#      verify every digest, fsync and publish. Each answer and file checked. Then boto3's
#      upload_file and aws s3 cp against the same client's PutObject of the whole file
#      (boto3's put_object; aws s3 cp with multipart_threshold above the size): the same
#      checksums, so the multipart machinery's own cost. Then (unless
#      HTTPS=0) boto3 against a whole-file PUT both over https (a self-signed certificate made
#      here): boto3 then sends each part UNSIGNED-PAYLOAD, aws-chunked with a CRC32 trailer.
#   5. GetObject of the 1 GiB .zt of figure 4 (one curl stream) from a warm node-local S3
#      sidecar (ztensord --upstream s3://models/m/ in front of moto_server, its cache filled
#      by one read first) against ztensord serving the same file from its root, through the
#      S3 front both: alternating rounds, medians, each round's ratio, CPU per GiB.
# FIGURES (default "1 2 3 4 5") picks the figures to run.
source "$(dirname "$0")/common.sh"
bench_build
SIZE_MIB=${SIZE_MIB:-1024}
mkdir -p "$work/s3root/m" "$work/s3many"
cd "$work"
size=$((SIZE_MIB << 20))
if [ ! -s s3root/m/model.safetensors ] || [ "$(stat -c %s s3root/m/model.safetensors)" != $((size + 88)) ]; then
  python3 - "$size" <<'PY'
import json, os, struct, sys
n = int(sys.argv[1]) // 4
h = json.dumps({"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
h += b" " * (80 - len(h)) if len(h) <= 80 else b" " * (-len(h) % 8)
with open("s3root/m/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    chunk = os.urandom(2 << 20)  # written 2 MiB at a time (FIELD-NOTES: folio size)
    for _ in range(4 * n // len(chunk)):
        f.write(chunk)
PY
fi
fsize=$(stat -c %s s3root/m/model.safetensors)
start_ztd "$work/s3root"
wait_digests # the verifier hashes the file whole once: not measured with the GETs
start_nginx "$work/s3root"
Z="http://127.0.0.1:$zport/models/m/model.safetensors"
N="http://127.0.0.1:$nport/m/model.safetensors"
curl -sf "$Z" | cmp -s - s3root/m/model.safetensors || { echo "GetObject is not the file"; exit 1; }
echo "ztensord $("$ztd" --version | head -1), nginx $(nginx -v 2>&1 | sed 's/.*\///'), $(nproc) cores, $(date -u +%FT%TZ), file $fsize bytes"
load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; }
port_of() { sed -E 's#^http://[^:/]+:([0-9]+)/.*#\1#' <<<"$1"; }
cpu_note() { # PORT C0 C1 BYTES: CPU seconds per GiB into $work/s3cpu.PORT
  awk -v c=$(($3 - $2)) -v t="$(getconf CLK_TCK)" -v n="$4" 'BEGIN { printf "%.3f\n", c / t / (n / 2^30) }' \
    >>"$work/s3cpu.$1"
}
cpu_line() {
  printf '   server CPU per GiB (median): ztensord %s s, nginx %s s (%s)\n' \
    "$(tr '\n' ' ' <"$work/s3cpu.$zport" | median)" "$(tr '\n' ' ' <"$work/s3cpu.$nport" | median)" "$(load)"
  rm -f "$work"/s3cpu.*
}

one_get() {
  local port c0 c1 out code got speed
  port=$(port_of "$1")
  c0=$(server_ticks "$port")
  out=$(curl -s -o /dev/null -w '%{http_code} %{size_download} %{speed_download}' "$1")
  c1=$(server_ticks "$port")
  read -r code got speed <<<"$out"
  [ "$code" = 200 ] && [ "$got" = "$fsize" ] || { echo "$1: HTTP $code, $got of $fsize bytes" >&2; exit 1; }
  cpu_note "$port" "$c0" "$c1" "$fsize"
  awk -v s="$speed" 'BEGIN { printf "%.2f", s / 1e9 }'
}

# the streamer's pattern: 8 MiB ranges, 16 in flight
ranged() {
  local port c0 c1 t0 t1 args=() lo hi codes
  port=$(port_of "$1")
  for ((lo = 0; lo < fsize; lo += 8 << 20)); do
    hi=$((lo + (8 << 20) - 1)); [ $hi -lt "$fsize" ] || hi=$((fsize - 1))
    args+=(-r "$lo-$hi" -o /dev/null -w '%{http_code}\n' "$1" --next)
  done
  unset 'args[${#args[@]}-1]'
  c0=$(server_ticks "$port"); t0=$(date +%s%N)
  codes=$(curl -s --no-progress-meter --parallel --parallel-max 16 "${args[@]}" 2>/dev/null)
  t1=$(date +%s%N); c1=$(server_ticks "$port")
  [ -z "$(grep -v '^206$' <<<"$codes")" ] || { echo "$1: not every answer was 206" >&2; exit 1; }
  cpu_note "$port" "$c0" "$c1" "$fsize"
  awk -v n="$fsize" -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f", n / ns }'
}

FIGURES=${FIGURES:-1 2 3 4 5}
want() { [[ " $FIGURES " == *" $1 "* ]]; }
rm -f "$work"/s3cpu.*
if want 1 || want 2; then
ROUNDS=$((${ROUNDS:-3} + 2)) alternate "$Z" "$N" one_get
printf '1. GetObject of %s MiB, one curl stream: ztensord %s GB/s, nginx %s GB/s, ratio %s (rounds: %s)\n' \
  "$SIZE_MIB" "$alt_a" "$alt_b" "$alt_ratio" "$alt_rounds"
cpu_line
ROUNDS=$((${ROUNDS:-3} + 2)) alternate "$Z" "$N" ranged
printf '2. the streamer pattern (8 MiB ranged GETs, 16 in flight) over %s MiB: ztensord %s GB/s, nginx %s GB/s, ratio %s (rounds: %s)\n' \
  "$SIZE_MIB" "$alt_a" "$alt_b" "$alt_ratio" "$alt_rounds"
cpu_line
fi
stop_nginx
stop_ztd

# 4. multipart upload vs whole-file PUT (before 3., which needs another root)
rm -rf up-root # files of an earlier run would be verified in the background meanwhile
mkdir -p up-root src
[ -s src/1g.bin ] || head -c $((1 << 30)) /dev/urandom >src/1g.bin
[ -s src/1g.zt ] || "$zt" pack -o src/1g.zt "w=u8:$((1 << 30)):src/1g.bin" >/dev/null
zsize=$(stat -c %s src/1g.zt)
if [ ! -s src/parts/p.done ]; then
  rm -rf src/parts && mkdir -p src/parts
  split -b 16M -d -a 4 src/1g.zt src/parts/p && touch src/parts/p.done
fi
start_ztd "$work/up-root" --allow-anonymous-writes
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
put_whole() {
  rm -f up-root/w.zt
  local t0 t1 code
  t0=$(date +%s.%N)
  code=$(curl -s ${zca:+--cacert "$zca"} -o /dev/null -w '%{http_code}' -T src/1g.zt \
    "${zscheme:-http}://127.0.0.1:$zport/v1/files/w.zt")
  t1=$(date +%s.%N)
  [ "$code" = 201 ] && [ "$(stat -c %s up-root/w.zt)" = "$zsize" ] || { echo "PUT: HTTP $code" >&2; exit 1; }
  secs "$t0" "$t1"
}
put_multipart() {
  rm -f up-root/m.zt
  local t0 t1 id args=() n=0 f doc= codes code B="http://127.0.0.1:$zport/models/m.zt"
  t0=$(date +%s.%N)
  id=$(curl -s -X POST "$B?uploads" | sed -n 's/.*<UploadId>\([0-9a-f]*\)<.*/\1/p')
  [ -n "$id" ] || { echo "CreateMultipartUpload failed" >&2; exit 1; }
  for f in src/parts/p[0-9]*; do
    n=$((n + 1))
    args+=(-o /dev/null -D "$work/mp.h$n" -w '%{http_code}\n' -T "$f" "$B?partNumber=$n&uploadId=$id" --next)
  done
  unset 'args[${#args[@]}-1]'
  codes=$(curl -s --no-progress-meter --parallel --parallel-max 4 "${args[@]}" 2>/dev/null)
  [ -z "$(grep -v '^200$' <<<"$codes")" ] || { echo "UploadPart: not every answer was 200" >&2; exit 1; }
  for i in $(seq "$n"); do
    doc="$doc<Part><PartNumber>$i</PartNumber><ETag>$(tr -d '\r' <"$work/mp.h$i" | sed -n 's/^[Ee][Tt][Aa][Gg]: *//p')</ETag></Part>"
  done
  code=$(curl -s -o "$work/mp.out" -w '%{http_code}' -X POST --data-binary "<CompleteMultipartUpload>$doc</CompleteMultipartUpload>" "$B?uploadId=$id")
  t1=$(date +%s.%N)
  [ "$code" = 200 ] && [ "$(stat -c %s up-root/m.zt)" = "$zsize" ] || { echo "Complete: HTTP $code $(head -c 300 "$work/mp.out")" >&2; exit 1; }
  secs "$t0" "$t1"
}
put_curl() { put_multipart; }
put_boto() {
  rm -f up-root/b.zt
  python3 - "${zscheme:-http}://127.0.0.1:$zport" "$work/src/1g.zt" "${zca:-}" <<'PY'
import boto3, sys
c = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1", verify=sys.argv[3] or None,
                 aws_access_key_id="bench", aws_secret_access_key="bench")
c.upload_file(sys.argv[2], "models", "b.zt")
PY
  cmp -s up-root/b.zt src/1g.zt || { echo "boto3 upload_file: not the file" >&2; exit 1; }
}
put_botow() { # one PutObject of the whole file, boto3's defaults (the same checksums)
  rm -f up-root/bw.zt
  python3 - "http://127.0.0.1:$zport" "$work/src/1g.zt" <<'PY'
import boto3, sys
c = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                 aws_access_key_id="bench", aws_secret_access_key="bench")
with open(sys.argv[2], "rb") as f:
    c.put_object(Bucket="models", Key="bw.zt", Body=f)
PY
  cmp -s up-root/bw.zt src/1g.zt || { echo "boto3 put_object: not the file" >&2; exit 1; }
}
put_cli() { # CONFIG (default none): an AWS config file
  rm -f up-root/c.zt
  AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_DEFAULT_REGION=us-east-1 AWS_CONFIG_FILE=${1:-/dev/null} \
    AWS_SHARED_CREDENTIALS_FILE=/dev/null aws --endpoint-url "http://127.0.0.1:$zport" s3 cp src/1g.zt \
    s3://models/c.zt >/dev/null
  cmp -s up-root/c.zt src/1g.zt || { echo "aws s3 cp: not the file" >&2; exit 1; }
}
put_cliw() { # aws s3 cp as one PutObject: its multipart threshold above the file's size
  printf '[default]\ns3 =\n  multipart_threshold = 5GB\n' >"$work/aws-single.cfg"
  put_cli "$work/aws-single.cfg"
}
# timed NAME FN: FN's seconds to $work/up.NAME, the server's CPU s/GiB to $work/upcpu.NAME
timed() {
  local c0 c1 t0 t1
  c0=$(server_ticks "$zport"); t0=$(date +%s.%N)
  "$2" >/dev/null
  t1=$(date +%s.%N); c1=$(server_ticks "$zport")
  secs "$t0" "$t1" >>"$work/up.$1"; echo >>"$work/up.$1"
  awk -v c=$((c1 - c0)) -v t="$(getconf CLK_TCK)" -v n="$zsize" 'BEGIN { printf "%.2f\n", c / t / (n / 2^30) }' >>"$work/upcpu.$1"
}
last() { grep . "$1" | tail -1; }
col() { grep . "$1" | tr '\n' ' '; }
if want 4; then
  rm -f "$work"/up.* "$work"/upcpu.* "$work"/upr.*
  for _ in $(seq "${ROUNDS:-3}"); do
    for k in boto cli curl; do
      timed "$k" "put_$k"; timed put put_whole
      ratio "$(last "$work/up.put")" "$(last "$work/up.$k")" >>"$work/upr.$k"; echo >>"$work/upr.$k"
    done
  done
  printf '4. 1 GiB .zt, whole-file PUT /v1/files (curl -T): %s s, server CPU %s s/GiB (%s)\n' \
    "$(col "$work/up.put" | median)" "$(col "$work/upcpu.put" | median)" "$(load)"
  for k in boto cli curl; do
    case $k in boto) name='boto3 upload_file' ;; cli) name='aws s3 cp' ;; *) name='curl, 16 MiB parts, 4 in flight' ;; esac
    printf '   S3 multipart, %s: %s s, server CPU %s s/GiB, speed ratio to the PUT %s (rounds: %s)\n' \
      "$name" "$(col "$work/up.$k" | median)" "$(col "$work/upcpu.$k" | median)" \
      "$(col "$work/upr.$k" | median)" "$(col "$work/upr.$k")"
  done
  # each S3 client's multipart upload against its own PutObject of the whole file: the same
  # client and checksums (over http: the signed sha256 and the CRC32 of the body, both checked)
  rm -f "$work"/up.* "$work"/upcpu.* "$work"/upr.*
  for _ in $(seq "${ROUNDS:-3}"); do
    for k in boto cli; do
      timed "$k" "put_$k"; timed "${k}w" "put_${k}w"
      ratio "$(last "$work/up.${k}w")" "$(last "$work/up.$k")" >>"$work/upr.$k"; echo >>"$work/upr.$k"
    done
  done
  for k in boto cli; do
    case $k in boto) name='boto3 upload_file' w='boto3 put_object' ;; *) name='aws s3 cp' w='aws s3 cp with multipart_threshold 5GB' ;; esac
    printf '   %s (multipart) %s s, server CPU %s s/GiB, against %s (one PutObject) %s s, %s s/GiB: speed ratio %s (rounds: %s) (%s)\n' \
      "$name" "$(col "$work/up.$k" | median)" "$(col "$work/upcpu.$k" | median)" "$w" "$(col "$work/up.${k}w" | median)" \
      "$(col "$work/upcpu.${k}w" | median)" "$(col "$work/upr.$k" | median)" "$(col "$work/upr.$k")" "$(load)"
  done
  # the same over https (HTTPS=0 skips it): boto3 then sends UNSIGNED-PAYLOAD, aws-chunked
  # with a CRC32 trailer, against a whole-file PUT over https
  if [ "${HTTPS:-1}" = 1 ]; then
    stop_ztd
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
      -addext "subjectAltName=IP:127.0.0.1" -keyout "$work/tls.key" -out "$work/tls.crt" >/dev/null 2>&1
    chmod 600 "$work/tls.key"
    "$ztd" --root "$work/up-root" --listen 127.0.0.1:0 --access-log off --allow-anonymous-writes \
      --tls-cert "$work/tls.crt" --tls-key "$work/tls.key" >/dev/null 2>"$work/ztd.log" &
    zpid=$! zscheme=https zca=$work/tls.crt zport= ready=
    for _ in $(seq 600); do # up to 60 s
      zport=$(grep -o 'listening on https://[^ ]*' "$work/ztd.log" 2>/dev/null | sed 's/.*://') || true
      [ -n "$zport" ] && curl -sf --cacert "$zca" "https://127.0.0.1:$zport/readyz" >/dev/null && ready=1 && break
      sleep 0.1
    done
    [ -n "$ready" ] || { echo "ztensord with TLS did not start"; cat "$work/ztd.log"; exit 1; }
    rm -f "$work"/up.* "$work"/upcpu.* "$work"/upr.*
    for _ in $(seq "${ROUNDS:-3}"); do
      timed boto put_boto; timed put put_whole
      ratio "$(last "$work/up.put")" "$(last "$work/up.boto")" >>"$work/upr.boto"; echo >>"$work/upr.boto"
    done
    printf '   over https: whole-file PUT %s s, server CPU %s s/GiB; boto3 upload_file %s s, server CPU %s s/GiB, speed ratio to the https PUT %s (rounds: %s) (%s)\n' \
      "$(col "$work/up.put" | median)" "$(col "$work/upcpu.put" | median)" "$(col "$work/up.boto" | median)" \
      "$(col "$work/upcpu.boto" | median)" "$(col "$work/upr.boto" | median)" "$(col "$work/upr.boto")" "$(load)"
    zscheme= zca=
  fi
fi
stop_ztd

# 5. a warm node-local S3 sidecar in front of moto against ztensord serving the same file
if want 5; then
  mkdir -p f5files f5side f5local
  ln -f src/1g.zt f5files/big.zt && ln -f src/1g.zt f5local/big.zt
  export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
  unset AWS_DEFAULT_REGION AWS_ENDPOINT_URL
  mport=$(free_port)
  moto_server -H 127.0.0.1 -p "$mport" >"$work/moto.log" 2>&1 &
  mpid=$!
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$mport/moto-api/data.json" && break; sleep 0.1; done
  python3 "$top/tests/sh/s3fill.py" "http://127.0.0.1:$mport" put models m/ f5files --create >/dev/null
  rm -rf f5cache
  AWS_ENDPOINT_URL=http://127.0.0.1:$mport start_ztd "$work/f5side" --upstream s3://models/m/ --cache-dir "$work/f5cache"
  spid=$zpid sport=$zport
  mv "$work/ztd.log" "$work/f5side.log" # it keeps writing there
  start_ztd "$work/f5local"
  wait_digests
  lpid=$zpid lport=$zport
  S="http://127.0.0.1:$sport/models/big.zt" L="http://127.0.0.1:$lport/models/big.zt"
  curl -sf -o /dev/null "$S" || { echo "the sidecar's first GetObject failed"; exit 1; } # warm
  ticks_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
  get5() { # URL: GB/s; the server's CPU s/GiB to $work/f5cpu.PORT
    local pid c0 c1 out code got speed
    pid=$([ "$1" = "$S" ] && echo "$spid" || echo "$lpid")
    c0=$(ticks_of "$pid")
    out=$(curl -s -o /dev/null -w '%{http_code} %{size_download} %{speed_download}' "$1")
    c1=$(ticks_of "$pid")
    read -r code got speed <<<"$out"
    [ "$code" = 200 ] && [ "$got" = "$(stat -c %s f5local/big.zt)" ] || { echo "$1: HTTP $code, $got bytes" >&2; exit 1; }
    awk -v c=$((c1 - c0)) -v t="$(getconf CLK_TCK)" -v n="$got" 'BEGIN { printf "%.3f\n", c / t / (n / 2^30) }' >>"$work/f5cpu.$pid"
    awk -v s="$speed" 'BEGIN { printf "%.2f", s / 1e9 }'
  }
  rm -f "$work"/f5cpu.*
  ROUNDS=$((${ROUNDS:-3} + 2)) alternate "$S" "$L" get5
  printf '5. GetObject of a 1 GiB .zt, one curl stream: a warm S3 sidecar in front of moto %s GB/s, ztensord serving the file %s GB/s, ratio %s (rounds: %s)\n' \
    "$alt_a" "$alt_b" "$alt_ratio" "$alt_rounds"
  printf '   server CPU per GiB (median): sidecar %s s, ztensord %s s (%s)\n' \
    "$(tr '\n' ' ' <"$work/f5cpu.$spid" | median)" "$(tr '\n' ' ' <"$work/f5cpu.$lpid" | median)" "$(load)"
  kill "$spid" "$lpid" "$mpid" 2>/dev/null
  wait "$spid" "$lpid" "$mpid" 2>/dev/null || true
fi

want 3 || exit 0
# 3. listing 100,000 keys
if [ ! -s s3many/.made ]; then
  python3 - <<'PY'
import json, os, struct
h = json.dumps({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
h += b" " * (-len(h) % 8)
blob = struct.pack("<Q", len(h)) + h + b"\0\0\0\0"
for d in range(100):
    os.makedirs("s3many/d%03d" % d, exist_ok=True)
    for i in range(1000):
        with open("s3many/d%03d/f%04d.safetensors" % (d, i), "wb") as f:
            f.write(blob)
open("s3many/.made", "w").write("1")
PY
fi
start_ztd "$work/s3many" --max-open-files 1024
L="http://127.0.0.1:$zport/models?list-type=2&max-keys=1000"
times=() keys=0 tok=
for _ in $(seq 200); do
  url=$L
  [ -z "$tok" ] || url="$L&continuation-token=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$tok")"
  out=$(curl -s -o "$work/page.xml" -w '%{http_code} %{time_total}' "$url")
  read -r code t <<<"$out"
  [ "$code" = 200 ] || { echo "$url: HTTP $code"; exit 1; }
  times+=("$t")
  keys=$((keys + $(grep -o '<Key>' "$work/page.xml" | wc -l)))
  tok=$(grep -o '<NextContinuationToken>[^<]*' "$work/page.xml" | sed 's/.*>//') || true
  [ -n "$tok" ] || break
done
[ "$keys" = 100000 ] || { echo "listed $keys keys, not 100000"; exit 1; }
printf '3. ListObjectsV2 over 100,000 keys, %d pages of 1,000: median %.1f ms, slowest %.1f ms (%s)\n' \
  "${#times[@]}" "$(echo "${times[*]}" | median | awk '{ print $1 * 1000 }')" \
  "$(printf '%s\n' "${times[@]}" | sort -g | tail -1 | awk '{ print $1 * 1000 }')" "$(load)"
stop_ztd
