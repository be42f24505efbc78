#!/usr/bin/env bash
# t_faults: an upstream that lies or goes away. Through relay.py (tests/sh), which
# flips a byte of one answer: the fill's digest check fails, nothing is cached, no client
# gets a complete-looking corrupt body (a 502, or a 200 cut short: curl fails and has
# fewer bytes than Content-Length), and the next request fetches again and gets the
# right bytes. With the origin gone: what is cached is still served, what is not gets
# 502 naming the upstream; with an upstream that answers nothing, 504.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/origin" "$T/side" "$T/cache"
rand "$T/w.bin" $((8 << 20))
rand "$T/v.bin" 300000
pack "$T/origin/m.zt" w=u8:$((8 << 20)):"$T/w.bin" v=u8:300000:"$T/v.bin" || finish
start_origin "$T/origin" || finish
oport=${O_URL##*:}

# ---- a corrupt answer: after the two requests of the open, the next body has one
# byte flipped
start_relay "$oport" flipone 2 || finish
start_sidecar "$T/side" "http://127.0.0.1:$RPORT" "$T/cache" --upstream-kind ztensord \
    --upstream-retries 0 || finish
curl -s -o /dev/null "$URL/v1/files/m.zt"
code=$(curl -s --max-time 60 -o "$T/c1" -D "$T/c1.h" -w '%{http_code}' "$URL/v1/files/m.zt/objects/w/data")
rc=$?
size=$(stat -c %s "$T/c1")
note "corrupt fill: HTTP $code, curl exit $rc, $size bytes"
if [ "$code" = 502 ]; then
    ok "corrupt fill: 502 before any byte"
    check_match "corrupt fill: the error names the upstream and the digest" "$(cat "$T/c1")" \
        "upstream_failed.*127.0.0.1:$RPORT.*do not hash"
else
    check_eq "corrupt fill: the 200 is cut short (curl fails)" "$code $((rc != 0))" "200 1"
    check "corrupt fill: fewer bytes than Content-Length" [ "$size" -lt $((8 << 20)) ]
fi
check_eq "corrupt fill: nothing in the cache" "$(metric "$URL" '^ztensord_cache_items$')" 0
check_eq "corrupt fill: no file under blobs/" "$(find "$T/cache/blobs" -type f 2>/dev/null | wc -l)" 0
check_eq "corrupt fill: counted" "$(metric "$URL" '^ztensord_upstream_digest_failures_total')" 1
grep -q 'do not hash' "$D_ERR" && ok "corrupt fill: logged" || bad "corrupt fill: logged" "$(tail -3 "$D_ERR")"

http "$T/r" "$URL/v1/files/m.zt/objects/w/data"
check_code "next request: fetched again" 200
check_same "next request: the right bytes" "$T/r.body" "$T/w.bin"
check_eq "next request: cached" "$(metric "$URL" '^ztensord_cache_items$')" 1

# ---- every answer corrupt: the last bytes of a component land, and land right, but the
# fill fails its digest check just after; a response that ends there must not end
# before the check (its last byte is held): it is cut or answered 502, never complete.
stop_daemon
start_relay "$oport" flip 2 || finish
start_sidecar "$T/side" "http://127.0.0.1:$RPORT" "$T/cache3" --upstream-kind ztensord \
    --upstream-retries 0 || finish
curl -s -o /dev/null "$URL/v1/files/m.zt"
complete=0
for i in $(seq 1 12); do
    code=$(curl -s --max-time 60 -o "$T/tail$i" -w '%{http_code}' -H 'Range: bytes=-100' \
        "$URL/v1/files/m.zt/objects/w/data")
    rc=$?
    if [ "$code" = 206 ] && [ "$rc" = 0 ]; then complete=$((complete + 1)); fi
done
check_eq "corrupt fills: no range response completed before the digest check" "$complete" 0
check_eq "corrupt fills: nothing in the cache" "$(metric "$URL" '^ztensord_cache_items$')" 0
stop_daemon
start_relay "$oport" pass || finish
start_sidecar "$T/side" "http://127.0.0.1:$RPORT" "$T/cache" --upstream-kind ztensord \
    --upstream-retries 0 --upstream-ttl 0 || finish
http "$T/r" "$URL/v1/files/m.zt/objects/w/data"
check_eq "after a restart: the cached component, no fill" "$(metric "$URL" '^ztensord_upstream_fills_total')" 0

# ---- the origin goes away
stop_relay
stop_origin
http "$T/r" "$URL/v1/files/m.zt/objects/w/data"
check_code "origin down: a cached component is still served (revalidation failed)" 200
check_same "origin down: its bytes" "$T/r.body" "$T/w.bin"
http "$T/r" "$URL/v1/files/m.zt/objects/v/data"
check_code "origin down: an uncached component: 502" 502
check_match "origin down: the error names the upstream" "$(cat "$T/r.body")" \
    "\"upstream_failed\".*127.0.0.1:$RPORT"
http "$T/r" "$URL/v1/files/other.zt"
check_code "origin down: an unknown file: 502" 502
check_match "origin down: the error names the upstream" "$(cat "$T/r.body")" \
    "\"upstream_failed\".*127.0.0.1:$RPORT"
stop_daemon

# ---- an upstream that answers nothing: 504 after upstream_timeout
start_relay "$oport" hang 30 || finish
start_sidecar "$T/side" "http://127.0.0.1:$RPORT" "$T/cache2" --upstream-kind ztensord \
    --upstream-retries 0 --upstream-timeout 1s || finish
t0=$(date +%s)
http "$T/r" "$URL/v1/files/m.zt"
check_code "upstream silent: 504" 504
check_match "upstream silent: the error names the upstream" "$(cat "$T/r.body")" \
    "\"upstream_timeout\".*127.0.0.1:$RPORT"
check "upstream silent: answered within 10 s" [ $(($(date +%s) - t0)) -le 10 ]
stop_relay
finish
