#!/usr/bin/env bash
# t_decode: a zstd component of an upstream file, asked without Accept-Encoding: zstd,
# is decoded as the origin decodes its local file: the same status, bytes and headers
# (ETag and Repr-Digest of the decoded representation, Vary), whole, in ranges (one
# span; several give the whole, as locally), HEAD and If-None-Match, cold and warm.
# Eight cold decoded requests make one upstream fetch; a fill whose bytes fail their
# digest gives no complete-looking decoded body and caches nothing; max_decode_streams
# bounds the sidecar's decoders with 503 and Retry-After, as locally.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/origin" "$T/cache"
text "$T/w.bin" 3000000 # compressible: the stored bytes are not the decoded ones
rand "$T/r.bin" $((6 << 20))
rand "$T/s.bin" 1000
pack "$T/origin/z.zt" --compress w=u8:3000000:"$T/w.bin" r=u8:$((6 << 20)):"$T/r.bin" \
    s=u8:1000:"$T/s.bin" || finish
pack "$T/origin/nd.zt" --compress --digest none w=u8:3000000:"$T/w.bin" || finish
WAIT_VERIFIED=1 start_origin "$T/origin" || finish
oport=${O_URL##*:}
W=/v1/files/z.zt/objects/w/data
stored=$(curl -s -H 'Accept-Encoding: zstd' "$O_URL$W" | wc -c)
note "w: 3000000 bytes decoded, $stored stored"

# ---- the decoded bytes, against the origin (the first request is a cold one)
start_rootless "$O_URL" "$T/cache" || finish
curl -s -o /dev/null "$URL/v1/files/z.zt"
# (origin_bytes counts what the origin sends to anyone: `same` asks it too, so the
# sidecar's own fetches are measured around requests to the sidecar alone)
before=$(origin_bytes)
curl -s -o "$T/cold.body" "$URL$W"
cold=$(($(origin_bytes) - before))
check_same "cold: the source bytes" "$T/cold.body" "$T/w.bin"
note "origin sent $cold bytes for the cold decoded request"
check "cold: the origin sent the stored bytes once, not decoded ones ($cold)" \
    [ "$cold" -ge "$stored" -a "$cold" -lt $((stored + 100000)) ]
same "whole decoded component" "$W"
check_same "the source bytes" "$T/same.s" "$T/w.bin"
check_eq "cold: decoded, not stored" "$(hdr "$T/same.s.h" Content-Encoding)" ""
check_eq "cold: Vary" "$(hdr "$T/same.s.h" Vary)" "Accept-Encoding"
same "warm: whole decoded component" "$W"
same "first byte" "$W" -H 'Range: bytes=0-0'
same "middle" "$W" -H 'Range: bytes=1000000-1099999'
same "last byte" "$W" -H 'Range: bytes=2999999-2999999'
same "suffix" "$W" -H 'Range: bytes=-5000'
same "open-ended" "$W" -H 'Range: bytes=2900000-'
same "several ranges (the whole, as locally)" "$W" -H 'Range: bytes=0-9,100-199,-10'
same "unsatisfiable range" "$W" -H 'Range: bytes=3000000-'
SAME_HEAD=1 same "HEAD" "$W" -I
SAME_HEAD=1 same "HEAD with a range" "$W" -I -H 'Range: bytes=10-19'
etag=$(curl -sI "$O_URL$W" | tr -d '\r' | awk 'tolower($1) == "etag:" { print $2 }')
check_match "origin: the decoded representation's ETag" "$etag" '^"sha256:[0-9a-f]{64}\.identity"$'
same "If-None-Match (304)" "$W" -H "If-None-Match: $etag"
same "If-Range match" "$W" -H 'Range: bytes=5-9' -H "If-Range: $etag"
same "If-Match mismatch (412)" "$W" -H 'If-Match: "nope"'
same "stored bytes still (Accept-Encoding: zstd)" "$W" -H 'Accept-Encoding: zstd'
same "a random (stored raw-block) component, decoded" /v1/files/z.zt/objects/r/data
check_same "random component: the source bytes" "$T/same.s" "$T/r.bin"
same "a small component, decoded" /v1/files/z.zt/objects/s/data
same "object JSON" /v1/files/z.zt/objects/w
sha=$(curl -s "$O_URL/v1/files/z.zt/objects/w" | $HELP get /dev/stdin components.data.digest 2>/dev/null)
same "blob by digest, decoded" "/v1/blobs/$sha"
same "blob by digest, a range" "/v1/blobs/$sha" -H 'Range: bytes=100-199'
# warm: everything above again, from the sidecar alone: nothing from the origin
before=$(origin_bytes)
for rg in '' 'bytes=0-0' 'bytes=1000000-1099999' 'bytes=-5000' 'bytes=0-9,100-199,-10'; do
    curl -s -o /dev/null ${rg:+-H "Range: $rg"} "$URL$W"
done
curl -s -o /dev/null "$URL/v1/files/z.zt/objects/r/data"
curl -s -o /dev/null "$URL/v1/blobs/$sha"
check_eq "warm: no byte from the origin" "$(($(origin_bytes) - before))" 0
SAME_NO_ETAG=1 same "a digest-less component, decoded" /v1/files/nd.zt/objects/w/data
check_match "digest-less: the tier's own decoded ETag" "$(hdr "$T/same.s.h" ETag)" \
    '^"[0-9a-f]{32}\.identity"$'
stop_daemon

# ---- single flight: eight cold decoded requests, one fetch
start_rootless "$O_URL" "$T/cache2" || finish
curl -s -o /dev/null "$URL/v1/files/z.zt"
before=$(origin_bytes)
pids=()
for i in 1 2 3 4 5 6 7 8; do
    curl -s --max-time 120 -o "$T/cold$i" -w '%{http_code} %{size_download}\n' \
        "$URL/v1/files/z.zt/objects/r/data" >"$T/cold$i.st" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for i in 1 2 3 4 5 6 7 8; do
    check_eq "cold decoded request $i: status and size" "$(cat "$T/cold$i.st")" "200 $((6 << 20))"
    check_same "cold decoded request $i: bytes" "$T/cold$i" "$T/r.bin"
done
sent=$(($(origin_bytes) - before))
note "origin sent $sent bytes for 8 cold decoded requests of a $((6 << 20))-byte component"
check "one upstream fetch for eight decoded requests" [ "$sent" -le $(((6 << 20) + (1 << 20))) ]
check_eq "one fill started" "$(metric "$URL" '^ztensord_upstream_fills_total')" 1
stop_daemon

# ---- a corrupt upstream: the fill fails its digest check; no decoded body looks complete
start_relay "$oport" flipone 2 || finish
start_rootless "http://127.0.0.1:$RPORT" "$T/cache3" --upstream-kind ztensord \
    --upstream-retries 0 || finish
curl -s -o /dev/null "$URL/v1/files/z.zt"
code=$(curl -s --max-time 60 -o "$T/c1" -D "$T/c1.h" -w '%{http_code}' "$URL$W")
rc=$?
size=$(stat -c %s "$T/c1")
note "corrupt fill, decoded: HTTP $code, curl exit $rc, $size bytes"
if [ "$code" = 502 ]; then
    ok "corrupt fill, decoded: 502 before any byte"
    check_match "corrupt fill, decoded: the error names the upstream and the digest" \
        "$(cat "$T/c1")" "upstream_failed.*127.0.0.1:$RPORT.*do not hash"
else
    check_eq "corrupt fill, decoded: the 200 is cut short (curl fails)" "$code $((rc != 0))" "200 1"
    check "corrupt fill, decoded: fewer bytes than Content-Length" [ "$size" -lt 3000000 ]
fi
check_eq "corrupt fill, decoded: nothing in the cache" "$(metric "$URL" '^ztensord_cache_items$')" 0
check_eq "corrupt fill, decoded: counted" "$(metric "$URL" '^ztensord_upstream_digest_failures_total')" 1
http "$T/r" "$URL$W"
check_code "next decoded request: fetched again" 200
check_same "next decoded request: the right bytes" "$T/r.body" "$T/w.bin"
stop_daemon
stop_relay

# ---- max_decode_streams 1: a held decoder, then another request: 503 with Retry-After
start_rootless "$O_URL" "$T/cache4" --max-decode-streams 1 --connection-timeout 60s || finish
curl -s -o /dev/null "$URL/v1/files/z.zt/objects/r/data" -H 'Accept-Encoding: zstd' # warm
rm -f "$T/ready"
bg_start $PY "$SH_DIR/holdget.py" "$PORT" /v1/files/z.zt/objects/r/data 1 30 "$T/ready"
for i in $(seq 1 100); do [ -s "$T/ready" ] && break; sleep 0.1; done
check_eq "a held decoded response started" "$(cat "$T/ready" 2>/dev/null)" "200"
http "$T/r" "$URL$W"
check_code "second decoder: 503" 503
check_errbody "second decoder" too_many_decoders
check_eq "second decoder: Retry-After" "$(hdr "$T/r.hdr" Retry-After)" 1
http "$T/r" "$URL$W" -H 'Accept-Encoding: zstd'
check_code "stored bytes need no decoder: 200" 200
bg_kill
code=
for i in $(seq 1 50); do
    code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$URL$W")
    [ "$code" = 200 ] && break
    sleep 0.1
done
check_eq "the slot is given back once the held response ends" "$code" 200
stop_daemon

stop_origin
finish
