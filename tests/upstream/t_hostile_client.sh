#!/usr/bin/env bash
# t_hostile_client: hostile clients of a ztensord with --upstream (an honest origin
# ztensord behind it):
# - cold requests for a component with many ranges (200 of them), overlapping ranges,
#   suffix ranges, ranges beyond the end: the same answer as the origin's (fails: several
#   ranges of an upstream component are answered 200 with the whole component, which
#   docs/API.md says of /raw only);
# - a component larger than cache_size: 507 cache_full at once (fixed in this branch:
#   it waited upstream_timeout for room that could never be);
# - HEAD and If-None-Match on a component while its fill is stalled upstream (relay.py
#   stall): answered at once, not after the fill;
# - clients that disconnect mid-fill: the fill ends (in flight back to 0), the item is
#   complete and right, no fd leaked;
# - 200 concurrent cold requests for 200 distinct components with upstream_fills=1: all
#   answered right within a bounded time, no deadlock, in flight back to 0.
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/evil_lib.sh"

mkdir -p "$T/origin" "$T/side" "$T/many"
rand "$T/big.bin" $((16 << 20))
pack "$T/origin/big.zt" big=u8:$((16 << 20)):"$T/big.bin" || finish
args=()
for i in $(seq 0 199); do
    rand "$T/many/c$i.bin" 4096
    args+=("c$i=u8:4096:$T/many/c$i.bin")
done
pack "$T/origin/many.zt" "${args[@]}" || finish
WAIT_VERIFIED=1 start_origin "$T/origin" || finish # same() compares sha256 ETags
oport=${O_URL##*:}

# ---- ranges, cold
start_sidecar "$T/side" "$O_URL" "$T/cache1" || finish
many=$(seq 0 199 | awk '{ printf "%s%d-%d", (NR > 1 ? "," : ""), $1 * 80000, $1 * 80000 + 9 }')
same "200 ranges, cold" /v1/files/big.zt/objects/big/data -H "Range: bytes=$many"
stop_daemon
start_sidecar "$T/side" "$O_URL" "$T/cache2" || finish
same "overlapping ranges, cold" /v1/files/big.zt/objects/big/data \
    -H 'Range: bytes=0-100,50-150,-10,16777000-99999999'
same "ranges all beyond the end" /v1/files/big.zt/objects/big/data \
    -H 'Range: bytes=16777216-,99999999-99999999'
same "a range of the last byte" /v1/files/big.zt/objects/big/data -H 'Range: bytes=16777215-'
# /raw: several ranges are answered with the whole file (200), as docs/API.md says
http "$T/raw" "$URL/v1/files/big.zt/raw" -H "Range: bytes=$many"
check_code "raw, many ranges: 200 (documented)" 200
curl -s -o "$T/raw.o" "$O_URL/v1/files/big.zt/raw"
check_same "raw, many ranges: the whole file" "$T/raw.body" "$T/raw.o"
check "ranges: daemon alive" daemon_alive "$D_PID"
stop_daemon

# ---- a component larger than the whole cache: 507 at once (it can never fit; waiting
# upstream_timeout for room is of no use)
start_sidecar "$T/side" "$O_URL" "$T/cache2b" --cache-size 1MiB --upstream-timeout 60s || finish
curl -s -o /dev/null "$URL/v1/files/big.zt"
t0=$(date +%s.%N)
http "$T/full" "$URL/v1/files/big.zt/objects/big/data"
secs=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}")
check_code "larger than cache_size: 507" 507
check_match "larger than cache_size: cache_full" "$(cat "$T/full.body")" '"code":"cache_full"'
# (upstream_timeout is 60 s: an answer well before it did not wait for room)
check "larger than cache_size: answered without waiting upstream_timeout out ($secs s)" \
    awk "BEGIN{exit !($secs < 30)}"
stop_daemon

# ---- HEAD and conditionals during a stalled fill
start_relay "$oport" stall 2 20 || finish
start_sidecar "$T/side" "http://127.0.0.1:$RPORT" "$T/cache3" --upstream-kind ztensord || finish
curl -s -o /dev/null "$URL/v1/files/big.zt"
etag=$(curl -s -I "$O_URL/v1/files/big.zt/objects/big/data" | tr -d '\r' | awk -F': ' 'tolower($1) == "etag" { print $2 }')
curl -s -o /dev/null --max-time 30 "$URL/v1/files/big.zt/objects/big/data" &
bg=$!
sleep 1
for what in head inm; do
    t0=$(date +%s.%N)
    if [ $what = head ]; then
        code=$(curl -s -I --max-time 10 -o /dev/null -w '%{http_code}' "$URL/v1/files/big.zt/objects/big/data")
        want=200
    else
        code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" \
            "$URL/v1/files/big.zt/objects/big/data")
        want=304
    fi
    secs=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}")
    check_eq "during a stalled fill: $what answers $want" "$code" "$want"
    # (the relay stalls the fill 20 s: an answer that waited for it would come after that)
    check "during a stalled fill: $what without waiting for the fill ($secs s)" awk "BEGIN{exit !($secs < 10)}"
done
kill "$bg" 2>/dev/null
wait "$bg" 2>/dev/null
stop_daemon
stop_relay

# ---- clients that disconnect mid-fill
start_sidecar "$T/side" "$O_URL" "$T/cache4" || finish
curl -s -o /dev/null "$URL/v1/files/big.zt"
fd0=$(nfds)
for i in 1 2 3 4 5; do
    curl -s -o /dev/null --max-time 0.2 --limit-rate 200k "$URL/v1/files/big.zt/objects/big/data"
done
for i in $(seq 1 60); do
    fl=$(metric "$URL" '^ztensord_upstream_fills_in_flight')
    [ "$fl" = 0 ] && break
    sleep 0.5
done
check_eq "disconnects mid-fill: fills in flight back to 0" "$fl" 0
http "$T/r" "$URL/v1/files/big.zt/objects/big/data"
check_code "disconnects mid-fill: then a whole answer" 200
check_same "disconnects mid-fill: the right bytes" "$T/r.body" "$T/big.bin"
for i in $(seq 1 120); do # connections being closed are let go (30 s at most), not after a fixed 1 s
    [ "$(nfds)" -le $((fd0 + 4)) ] && break
    sleep 0.25
done
check "disconnects mid-fill: fds bounded ($(nfds) now, $fd0 before)" [ "$(nfds)" -le $((fd0 + 4)) ]
stop_daemon

# ---- 200 concurrent cold requests, 200 components, upstream_fills=1
start_sidecar "$T/side" "$O_URL" "$T/cache5" --upstream-fills 1 || finish
curl -s -o /dev/null "$URL/v1/files/many.zt"
t0=$(date +%s)
pids=()
for i in $(seq 0 199); do
    curl -s --max-time 60 -o "$T/many/got$i" -w '%{http_code}\n' \
        "$URL/v1/files/many.zt/objects/c$i/data" >"$T/many/code$i" &
    pids+=($!)
done
wait "${pids[@]}"
secs=$(($(date +%s) - t0))
okn=0
for i in $(seq 0 199); do
    [ "$(cat "$T/many/code$i")" = 200 ] && cmp -s "$T/many/got$i" "$T/many/c$i.bin" && okn=$((okn + 1))
done
note "200 concurrent cold components, upstream_fills=1: $okn right in $secs s; codes: $(cat "$T"/many/code* | sort | uniq -c | tr '\n' ' ')"
check_eq "200 concurrent cold: all answered right" "$okn" 200
check "200 concurrent cold: within 60 s" [ "$secs" -lt 60 ]
check_eq "200 concurrent cold: fills in flight 0" "$(metric "$URL" '^ztensord_upstream_fills_in_flight')" 0
check "200 concurrent cold: daemon alive" daemon_alive "$D_PID"
stop_daemon
finish
