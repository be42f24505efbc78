#!/usr/bin/env bash
# Benchmark: the listing of an S3-store sidecar (ztensord --upstream s3://...) whose store is
# DELAY_MS away (not a test: prints figures measured in one run). The listing opens every
# .zt object of the store (footer and manifest) to list its safetensors view: N_FILES tiny
# .zt objects in moto_server, behind tests/bench/delay_proxy.py adding DELAY_MS to each
# request. Each round starts a sidecar with an empty cache and times GET /v1/files (the
# first listing), then again after upstream_ttl (2 s: the listing fetched again, every
# .zt revalidated). With BASE=path/to/another/ztensord, the rounds alternate the two builds
# and print each build's medians and their ratio (BASE / this). Every answer must be 200
# and list every view.
#   tests/bench/store_listing.sh   (BENCH_BUILD, ROUNDS (3), N_FILES (64), DELAY_MS (20), BASE)
source "$(dirname "$0")/common.sh"
bench_build
N=${N_FILES:-64} DELAY=${DELAY_MS:-20}
mkdir -p "$work/sl/files"
cd "$work/sl"
head -c 4096 /dev/urandom >w.bin
rm -f files/*.zt
for i in $(seq -w 1 "$N"); do "$zt" pack -o "files/m$i.zt" "w=u8:4096:w.bin" >/dev/null; done
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
unset AWS_DEFAULT_REGION
mport=$(free_port) pport=$(free_port)
moto_server -H 127.0.0.1 -p "$mport" >moto.log 2>&1 &
mpid=$!
python3 "$top/tests/bench/delay_proxy.py" "$pport" "http://127.0.0.1:$mport" "$DELAY" >proxy.log 2>&1 &
ppid=$!
trap 'kill $mpid $ppid 2>/dev/null' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$mport/moto-api/data.json" && break; sleep 0.1; done
python3 "$top/tests/sh/s3fill.py" "http://127.0.0.1:$mport" put models many/ files --create >/dev/null
export AWS_ENDPOINT_URL=http://127.0.0.1:$pport
# one_round ZTENSORD: "FIRST REFRESHED" seconds
one_round() {
  local out code t1 t2 views
  rm -rf cache side && mkdir -p side
  "$1" --root "$work/sl/side" --upstream s3://models/many/ --cache-dir "$work/sl/cache" \
    --upstream-ttl 2s --listen 127.0.0.1:0 --access-log off >/dev/null 2>ztd.log &
  local pid=$! port=
  for _ in $(seq 300); do
    port=$(grep -o 'listening on http://[^ ]*' ztd.log 2>/dev/null | sed 's/.*://') || true
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "ztensord did not start" >&2; cat ztd.log >&2; exit 1; }
  for t in t1 t2; do
    [ "$t" = t2 ] && sleep 2.2
    out=$(curl -s -o list.json -w '%{http_code} %{time_total}' "http://127.0.0.1:$port/v1/files")
    code=${out% *}
    views=$(grep -o '"m[0-9]*\.safetensors"' list.json | sort -u | wc -l)
    [ "$code" = 200 ] && [ "$views" = "$N" ] || { echo "listing: HTTP $code, $views views" >&2; exit 1; }
    printf -v "$t" '%s' "${out#* }"
  done
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$t1 $t2"
}
echo "ztensord $("$ztd" --version | head -1), $N .zt objects, $DELAY ms per store request, $(nproc) cores, $(date -u +%FT%TZ)"
a1=() a2=() b1=() b2=()
for _ in $(seq "${ROUNDS:-3}"); do
  read -r x y <<<"$(one_round "$ztd")"; a1+=("$x"); a2+=("$y")
  if [ -n "${BASE:-}" ]; then read -r x y <<<"$(one_round "$BASE")"; b1+=("$x"); b2+=("$y"); fi
done
printf 'this build: first listing %s s, refreshed %s s (rounds: %s / %s) (load average %s)\n' \
  "$(echo "${a1[*]}" | median)" "$(echo "${a2[*]}" | median)" "${a1[*]}" "${a2[*]}" "$(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${BASE:-}" ]; then
  printf 'BASE: first listing %s s, refreshed %s s (rounds: %s / %s); ratio BASE / this: %s and %s\n' \
    "$(echo "${b1[*]}" | median)" "$(echo "${b2[*]}" | median)" "${b1[*]}" "${b2[*]}" \
    "$(ratio "$(echo "${b1[*]}" | median)" "$(echo "${a1[*]}" | median)")" \
    "$(ratio "$(echo "${b2[*]}" | median)" "$(echo "${a2[*]}" | median)")"
fi
