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

# a held reader holds a: zthelp heldget reads the header block, then nothing until
# released, so the sidecar is still sending a (40 MiB: more than the socket buffers take)
# however long the steps below take. b does not fit beside it: it must wait for room.
start_sidecar "$T/side" "$O_URL" "$T/cache" --cache-size 64M --upstream-timeout 2m || finish
held_get slow "$PORT" /v1/files/m.zt/objects/a/data
check_eq "a is being sent" "$HELD_STATUS" 200
slow=$HELD_PID
curl -s --max-time 150 -o "$T/b.body" -w '%{http_code}' "$URL/v1/files/m.zt/objects/b/data" >"$T/b.code" &
bpid=$!
sleep 1 # room for a wrong answer to b to come (a server that evicts a would answer now)
if kill -0 "$bpid" 2>/dev/null; then ok "b waits while a is being sent"; else
    bad "b waits while a is being sent" "b ended first: HTTP $(cat "$T/b.code")"
fi
held_release slow "$slow"
check_eq "a: sent whole while b waited" "$HELD_RESULT" "200 $((40 << 20))"
check_same "a: bytes" "$T/slow" "$T/a.bin"
wait "$bpid"
check_eq "b once a's response ended: 200 (waited for room)" "$(cat "$T/b.code")" 200
check_same "b: bytes" "$T/b.body" "$T/b.bin"
check_eq "a was evicted for b" "$(metric "$URL" '^ztensord_cache_evictions_total')" 1
stop_daemon

# no room within upstream_timeout: 507 cache_full
start_sidecar "$T/side" "$O_URL" "$T/cache2" --cache-size 64M --upstream-timeout 1s || finish
held_get slow2 "$PORT" /v1/files/m.zt/objects/a/data
check_eq "a is being sent (2)" "$HELD_STATUS" 200
http "$T/r" "$URL/v1/files/m.zt/objects/b/data"
check_code "no room within upstream_timeout: 507" 507
check_match "507 cache_full says why" "$(cat "$T/r.body")" '"cache_full".*cache_size'
kill "$HELD_PID" 2>/dev/null
wait "$HELD_PID" 2>/dev/null
stop_daemon

# one answer that needs more than cache_size at once (/raw of a and b: 80 MiB in a 64 MiB
# cache): 507 cache_full at once, naming cache_size, not after upstream_timeout (10
# minutes here: http gives up after 60 s, so a request that waited gets no 507)
start_sidecar "$T/side" "$O_URL" "$T/cache3" --cache-size 64M --upstream-timeout 10m || finish
http "$T/r" "$URL/v1/files/m.zt/raw"
check_code "a range larger than cache_size: 507 without waiting for upstream_timeout" 507
check_match "it names cache_size and the bytes needed" "$(cat "$T/r.body")" \
    '"cache_full".*needs [0-9]+ bytes.*more than cache_size \(67108864 bytes\)'
http "$T/r" "$URL/v1/files/m.zt/objects/b/data"
check_code "then b alone: 200" 200
check_same "b alone: bytes" "$T/r.body" "$T/b.bin"
stop_origin
finish
