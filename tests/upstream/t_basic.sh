#!/usr/bin/env bash
# t_basic: a ztensord with --upstream pointing at an origin ztensord serves the origin's
# files byte for byte, with the origin's validators: manifest, object JSON, components
# (whole, ranges, HEAD, conditionals), /raw (ranges across components), blobs; zt pull
# through it ends byte-exact; eight concurrent cold requests for one 64 MiB component
# make one upstream fetch; a warm request makes none; names neither side has are 404; a
# sidecar without --root serves the upstream alone.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/origin/sub" "$T/side" "$T/cache"
rand "$T/big.bin" $((64 << 20))
rand "$T/w.bin" 3000000
rand "$T/s.bin" 1000
rand "$T/t.bin" 4096
pack "$T/origin/m.zt" w=u8:3000000:"$T/w.bin" s=u8:1000:"$T/s.bin" t=f32:1024:"$T/t.bin" || finish
pack "$T/origin/sub/nodigest.zt" --digest none w=u8:3000000:"$T/w.bin" || finish
pack "$T/origin/z.zt" --compress t=f32:1024:"$T/t.bin" s=u8:1000:"$T/s.bin" || finish
pack "$T/origin/big.zt" big=u8:$((64 << 20)):"$T/big.bin" || finish
# A file under the sidecar's own root wins over the upstream's of the same name.
pack "$T/side/m.zt" s=u8:1000:"$T/s.bin" || finish

WAIT_VERIFIED=1 start_origin "$T/origin" || finish # same() compares sha256 ETags
start_sidecar "$T/side" "$O_URL" "$T/cache" || finish

# ---- JSON and bytes, against the origin
same "manifest" /v1/files/sub/nodigest.zt
same "object" /v1/files/sub/nodigest.zt/objects/w
SAME_NO_ETAG=1 same "component, no digest" /v1/files/sub/nodigest.zt/objects/w/data
http "$T/r" "$URL/v1/files/sub/nodigest.zt/objects/w/data" -I
netag=$(hdr "$T/r.hdr" ETag)
check_match "component, no digest: a strong ETag of the tier's" "$netag" '^"[0-9a-f]{32}"$'
http "$T/r" "$URL/v1/files/sub/nodigest.zt/objects/w/data" -H "If-None-Match: $netag"
check_code "component, no digest: If-None-Match with it: 304" 304
same "component, sha256" /v1/files/big.zt/objects/big/data
same "zstd component, stored" /v1/files/z.zt/objects/t/data -H 'Accept-Encoding: zstd'
same "range in a component" /v1/files/big.zt/objects/big/data -H 'Range: bytes=1000-2000'
same "suffix range" /v1/files/big.zt/objects/big/data -H 'Range: bytes=-7'
same "range past the end" /v1/files/big.zt/objects/big/data -H 'Range: bytes=67108860-99999999'
same "unsatisfiable range" /v1/files/big.zt/objects/big/data -H 'Range: bytes=99999999-'
same "raw" /v1/files/z.zt/raw
same "raw of a digest-less file" /v1/files/sub/nodigest.zt/raw
same "raw, a range across the header and a component" /v1/files/big.zt/raw -H 'Range: bytes=0-100000'
same "raw, the tail (manifest, footer)" /v1/files/big.zt/raw -H 'Range: bytes=-300'
SAME_HEAD=1 same "HEAD component" /v1/files/big.zt/objects/big/data -I
SAME_HEAD=1 same "HEAD raw" /v1/files/big.zt/raw -I

etag=$(curl -sI "$O_URL/v1/files/big.zt/raw" | tr -d '\r' | awk 'tolower($1) == "etag:" { print $2 }')
check_match "origin raw ETag" "$etag" '^"[0-9a-f]{32}"$'
same "If-None-Match on raw (304)" /v1/files/big.zt/raw -H "If-None-Match: $etag"
same "If-Match mismatch (412)" /v1/files/big.zt/raw -H 'If-Match: "nope"'
same "If-Range mismatch: whole" /v1/files/big.zt/objects/big/data -H 'Range: bytes=0-9' -H 'If-Range: "nope"'
cetag=$(curl -sI "$O_URL/v1/files/big.zt/objects/big/data" | tr -d '\r' | awk 'tolower($1) == "etag:" { print $2 }')
same "If-None-Match on a component (304)" /v1/files/big.zt/objects/big/data -H "If-None-Match: $cetag"

# ---- what the sidecar has itself, and what nobody has
http "$T/r" "$URL/v1/files/m.zt"
check_eq "a local file wins: its manifest" "$(jget "$T/r.body" objects | tr -d ' \n' | grep -c '"w"')" 0
http "$T/r" "$URL/v1/files/absent.zt"
check_code "absent upstream too: 404" 404
check_match "the 404 names the upstream" "$(cat "$T/r.body")" "file_not_found.*$O_URL"
http "$T/r" "$URL/v1/files/big.zt/objects/nope/data"
check_code "no such object: 404" 404

# ---- blobs: the sidecar knows the digest from the manifest it opened
sha=$(sha256sum "$T/big.bin" | cut -c1-64)
same "blob by digest" "/v1/blobs/sha256:$sha"

# ---- zt pull through the sidecar
mkdir -p "$T/pulled"
if "$ZT" pull --quiet -o "$T/pulled" "$URL/v1/files/big.zt" "$URL/v1/files/z.zt" "$URL/v1/files/sub/nodigest.zt" >"$T/pull.out" 2>&1; then
    ok "zt pull through the sidecar"
else
    bad "zt pull through the sidecar" "$(tail -3 "$T/pull.out")"
fi
check_same "pulled big.zt is the origin's" "$T/pulled/big.zt" "$T/origin/big.zt"
check_same "pulled z.zt is the origin's" "$T/pulled/z.zt" "$T/origin/z.zt"
check_same "pulled nodigest.zt is the origin's" "$T/pulled/nodigest.zt" "$T/origin/sub/nodigest.zt"
stop_daemon

# ---- single flight: eight cold requests at once, one fetch from the origin
rm -rf "$T/cache2"
start_sidecar "$T/side" "$O_URL" "$T/cache2" || finish
curl -s -o /dev/null "$URL/v1/files/big.zt" # opens the file: the manifest only
before=$(origin_bytes)
pids=()
for i in 1 2 3 4 5 6 7 8; do
    curl -s --max-time 120 -o "$T/cold$i" -w '%{http_code} %{size_download}\n' \
        "$URL/v1/files/big.zt/objects/big/data" >"$T/cold$i.st" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for i in 1 2 3 4 5 6 7 8; do
    check_eq "cold request $i: status and size" "$(cat "$T/cold$i.st")" "200 $((64 << 20))"
    check_same "cold request $i: bytes" "$T/cold$i" "$T/big.bin"
done
sent=$(($(origin_bytes) - before))
note "origin sent $sent bytes for 8 cold requests of a $((64 << 20))-byte component"
if [ "$sent" -ge $((64 << 20)) ] && [ "$sent" -le $(((64 << 20) + (1 << 20))) ]; then
    ok "one upstream fetch for eight requests"
else
    bad "one upstream fetch for eight requests" "the origin sent $sent bytes"
fi
fills=$(metric "$URL" '^ztensord_upstream_fills_total')
check_eq "one fill started" "$fills" 1

# ---- warm: no upstream traffic at all (the bytes between components of /raw are
# fetched once per file opened: a first /raw request here does that)
curl -s -o /dev/null -H 'Range: bytes=0-10' "$URL/v1/files/big.zt/raw"
reqs_before=$(metric "$O_URL" '^ztensord_requests_total')
curl -s -o "$T/warm" "$URL/v1/files/big.zt/objects/big/data"
curl -s -o "$T/warm.raw" -H 'Range: bytes=0-1000' "$URL/v1/files/big.zt/raw"
reqs_after=$(metric "$O_URL" '^ztensord_requests_total')
check_same "warm request: bytes" "$T/warm" "$T/big.bin"
check_same "warm raw range: bytes" "$T/warm.raw" <(head -c 1001 "$T/origin/big.zt")
# the first scrape counts itself once it is over: one request between the readings
check_eq "warm requests: no request to the origin" "$((reqs_after - reqs_before))" 1

# ---- restart: the cache is still there
stop_daemon
start_sidecar "$T/side" "$O_URL" "$T/cache2" || finish
curl -s -o /dev/null "$URL/v1/files/big.zt"
before=$(origin_bytes)
curl -s -o "$T/again" "$URL/v1/files/big.zt/objects/big/data"
check_same "after a restart: bytes" "$T/again" "$T/big.bin"
check_eq "after a restart: served from the cache" "$(($(origin_bytes) - before))" 0

# ---- no root of its own: a pure cache
stop_daemon
start_rootless "$O_URL" "$T/cache3" || finish
http "$T/r" "$URL/v1/files/big.zt/objects/big/data"
check_code "without --root: an upstream component" 200
check_same "without --root: its bytes" "$T/r.body" "$T/big.bin"
http "$T/r" "$URL/v1/files"
check_eq "without --root: the listing is the upstream's" "$($HELP names "$T/r.body" | tr '\n' ' ')" \
    "$(curl -s "$O_URL/v1/files" | $HELP names /dev/stdin | tr '\n' ' ')"

stop_origin
finish
