#!/usr/bin/env bash
# t_evict: a cache smaller than what is asked for at once. A component a response is
# still sending is never evicted; a request for another that does not fit waits (up to
# upstream_timeout) for room instead of failing, and gets it once the first response
# ends (least recently used evicted); past upstream_timeout it is 507 cache_full.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/origin" "$T/side"
rand "$T/a.bin" $((40 << 20))
rand "$T/b.bin" $((40 << 20))
pack "$T/origin/m.zt" a=u8:$((40 << 20)):"$T/a.bin" b=u8:$((40 << 20)):"$T/b.bin" || finish
start_origin "$T/origin" || finish
start_sidecar "$T/side" "$O_URL" "$T/cache" --cache-size 64M --upstream-timeout 20s || finish

# a slow reader holds a: zthelp slowget reads through a 64 KiB window at 10 MiB/s, 4 s at
# least, and the sidecar stays blocked sending it (curl --limit-rate 10M took 3.0-3.7 s and
# bursts up to 10 MB, which loopback socket buffers can take: the sidecar could be done
# well before the 2 s the check below needs)
$HELP slowget "$PORT" /v1/files/m.zt/objects/a/data "$T/slow" $((10 << 20)) >"$T/slow.code" &
slow=$!
sleep 0.5
t0=$(date +%s%N)
http "$T/r" "$URL/v1/files/m.zt/objects/b/data"
t1=$(date +%s%N)
check_code "b while a is being sent: 200 (waited for room)" 200
check_same "b: bytes" "$T/r.body" "$T/b.bin"
check "b waited for a's response to end (>= 1.5 s: $(((t1 - t0) / 1000000)) ms)" \
    [ $(((t1 - t0) / 1000000)) -ge 1500 ]
wait "$slow"
check_eq "a: sent whole while b waited" "$(cat "$T/slow.code") $(stat -c %s "$T/slow")" "200 $((40 << 20))"
check_same "a: bytes" "$T/slow" "$T/a.bin"
check_eq "a was evicted for b" "$(metric "$URL" '^ztensord_cache_evictions_total')" 1
stop_daemon

# no room within upstream_timeout: 507 cache_full
start_sidecar "$T/side" "$O_URL" "$T/cache2" --cache-size 64M --upstream-timeout 1s || finish
$HELP slowget "$PORT" /v1/files/m.zt/objects/a/data /dev/null $((4 << 20)) >/dev/null & # 10 s
slow=$!
sleep 0.5
http "$T/r" "$URL/v1/files/m.zt/objects/b/data"
check_code "no room within upstream_timeout: 507" 507
check_match "507 cache_full says why" "$(cat "$T/r.body")" '"cache_full".*cache_size'
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null
stop_daemon

# one answer that needs more than cache_size at once (/raw of a and b: 80 MiB in a 64 MiB
# cache): 507 cache_full at once, naming cache_size, not after upstream_timeout
start_sidecar "$T/side" "$O_URL" "$T/cache3" --cache-size 64M --upstream-timeout 10s || finish
t0=$(date +%s%N)
http "$T/r" "$URL/v1/files/m.zt/raw"
t1=$(date +%s%N)
check_code "a range larger than cache_size: 507" 507
check_match "it names cache_size and the bytes needed" "$(cat "$T/r.body")" \
    '"cache_full".*needs [0-9]+ bytes.*more than cache_size \(67108864 bytes\)'
check "without waiting for upstream_timeout ($(((t1 - t0) / 1000000)) ms < 5000)" \
    [ $(((t1 - t0) / 1000000)) -lt 5000 ]
http "$T/r" "$URL/v1/files/m.zt/objects/b/data"
check_code "then b alone: 200" 200
check_same "b alone: bytes" "$T/r.body" "$T/b.bin"
stop_origin
finish
