#!/bin/bash
# Precompressed manifests: a client that accepts zstd or gzip gets the manifest JSON
# compressed (made once per file version on the work queue, so the first such request
# may still get the identity bytes), decoding to exactly the identity JSON; each coding
# has its own ETag; Vary on every manifest answer; q values and q=0 are honoured;
# conditional requests, ranges and HEAD apply to the coded bytes; a replaced file gets
# a new coded copy.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/t.raw" 16
args=()
for i in $(seq 0 299); do args+=("model.layers.$i.mlp.weight=f32:4:$T/t.raw"); done
pack "$R/m.zt" "${args[@]}"
start_daemon "$R" || finish
M=$URL/v1/files/m.zt

# ---- identity
req "identity manifest" 200 "$M"
cp "$LAST.body" "$T/id.json"
ID_ETAG=$(hdr "$LAST.hdr" ETag)
if has_hdr "$LAST.hdr" Content-Encoding; then bad "identity: no Content-Encoding"; else ok "identity: no Content-Encoding"; fi
check_match "identity: Vary" "$(hdr "$LAST.hdr" Vary)" 'Accept-Encoding'
check "identity manifest is JSON" $HELP jsoneq "$T/id.json" "$T/id.json"

# coded AE NAME: GET with Accept-Encoding AE until the answer is coded (the first
# request starts the compression; bounded: 50 tries, 5 s) into $LAST.
coded() {
    local i
    for i in $(seq 50); do
        http "$T/r" -H "Accept-Encoding: $1" "$M"
        LAST=$T/r
        has_hdr "$LAST.hdr" Content-Encoding && break
        sleep 0.1
    done
    check_code "$2: 200" 200
}
decode() { if [ "$1" = zstd ]; then zstd -dcq; else gzip -dc; fi; }

for k in gzip zstd; do
    coded "$k" "$k"
    check_eq "$k: Content-Encoding" "$(hdr "$LAST.hdr" Content-Encoding)" "$k"
    check_match "$k: Vary" "$(hdr "$LAST.hdr" Vary)" 'Accept-Encoding'
    check_eq "$k: Content-Length is the body's" "$(hdr "$LAST.hdr" Content-Length)" "$(stat -c %s "$LAST.body")"
    decode "$k" <"$LAST.body" >"$T/dec.$k.json"
    check_same "$k: decodes to the identity JSON" "$T/dec.$k.json" "$T/id.json"
    [ "$(stat -c %s "$LAST.body")" -lt $(($(stat -c %s "$T/id.json") / 4)) ] &&
        ok "$k: under a quarter of the identity bytes" || bad "$k: under a quarter of the identity bytes" "$(stat -c %s "$LAST.body")"
    ETAG=$(hdr "$LAST.hdr" ETag)
    check_ne "$k: its own ETag" "$ETAG" "$ID_ETAG"
    cp "$LAST.body" "$T/body.$k"
    eval "ETAG_$k=\$ETAG"

    # the same coded bytes every time
    req "$k again" 200 -H "Accept-Encoding: $k" "$M"
    check_same "$k again: same bytes" "$LAST.body" "$T/body.$k"

    # validators, ranges and HEAD on the coded representation
    req "$k If-None-Match its ETag: 304" 304 -H "Accept-Encoding: $k" -H "If-None-Match: $ETAG" "$M"
    check_eq "$k 304: ETag" "$(hdr "$LAST.hdr" ETag)" "$ETAG"
    req "identity If-None-Match the $k ETag: 200" 200 -H "If-None-Match: $ETAG" "$M"
    check_same "identity If-None-Match the $k ETag: identity bytes" "$LAST.body" "$T/id.json"
    req "$k Range 0-99: 206" 206 -H "Accept-Encoding: $k" -H "Range: bytes=0-99" "$M"
    head -c 100 "$T/body.$k" >"$T/want100"
    check_same "$k Range 0-99: the coded bytes" "$LAST.body" "$T/want100"
    head_req "$k HEAD" 200 /v1/files/m.zt "Accept-Encoding: $k"
    check_eq "$k HEAD: Content-Length of the coded bytes" "$(hdr "$LAST.hdr" Content-Length)" "$(stat -c %s "$T/body.$k")"
done

# ---- negotiation
neg() { # NAME ACCEPT-ENCODING WANT-CODING ("" for identity)
    req "$1" 200 -H "Accept-Encoding: $2" "$M"
    check_eq "$1: Content-Encoding" "$(hdr "$LAST.hdr" Content-Encoding)" "$3"
}
neg "both: zstd" "gzip, zstd" zstd
neg "gzip preferred by q" "zstd;q=0.5, gzip" gzip
neg "zstd refused" "zstd;q=0, gzip" gzip
neg "gzip refused" "gzip;q=0" ""
neg "identity only" "identity" ""
neg "star" "*" zstd
neg "star, zstd refused" "*, zstd;q=0" gzip
neg "upper case" "GZIP" gzip
check_same "upper case: the gzip bytes" "$LAST.body" "$T/body.gzip"

# ---- a replaced file gets its own coded copy
args=()
for i in $(seq 0 199); do args+=("other.$i=f32:4:$T/t.raw"); done
pack "$T/m2.zt" "${args[@]}"
mv "$T/m2.zt" "$R/m.zt"
for i in $(seq 100); do
    http "$T/r" "$M"
    ! cmp -s "$T/r.body" "$T/id.json" && break
    sleep 0.1
done
cp "$T/r.body" "$T/id2.json"
check_ne "replaced: a new manifest" "$(sha256_hex "$T/id2.json")" "$(sha256_hex "$T/id.json")"
coded gzip "replaced gzip"
gzip -dc <"$LAST.body" >"$T/dec2.json"
check_same "replaced gzip: decodes to the new manifest" "$T/dec2.json" "$T/id2.json"
check_ne "replaced gzip: a new ETag" "$(hdr "$LAST.hdr" ETag)" "$ETAG_gzip"

finish
