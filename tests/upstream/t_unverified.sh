#!/usr/bin/env bash
# t_unverified: bytes a fill has not checked yet are never sent under a digest (issue 27,
# finding 8). Through relay.py in mode flipgate, the fill's body has one byte flipped a
# quarter in and stops half-way until the test opens the gate: the fill is certainly in
# progress, with the bad byte landed, when the test asks the sidecar.
#   - a component larger than upstream_verify_first streams while it fills: its answers
#     (whole, and a range of its blob URL) carry a weak ETag, no Repr-Digest and no
#     immutable; once the check fails the connection is cut (no complete body);
#   - a component up to upstream_verify_first is checked before its first byte: the
#     answer waits, then is a 502 with no byte of it;
#   - a plain file's /raw follows the same rule with the sha256 the origin lists;
#   - nothing is cached; after a good fill the answers carry the digest ETag,
#     Repr-Digest, and for the blob URL immutable.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/origin/p" "$T/side"
rand "$T/w.bin" $((8 << 20))
rand "$T/v.bin" 300000
pack "$T/origin/m.zt" w=u8:$((8 << 20)):"$T/w.bin" v=u8:300000:"$T/v.bin" || finish
rand "$T/origin/p/big.bin" $((6 << 20))
text "$T/origin/p/small.json" 200000
start_origin "$T/origin" || finish
# the origin's verifier hashes its plain files; the sidecar checks them against the
# sha256 the origin lists once it has
for i in $(seq 1 300); do
    curl -s --max-time 5 "$O_URL/v1/files" >"$T/olist" || true
    [ "$($HELP listing "$T/olist" p/big.bin sha256)" != "-" ] &&
        [ "$($HELP listing "$T/olist" p/small.json sha256)" != "-" ] && break
    sleep 0.1
done
pbsha=$(openssl dgst -sha256 -r "$T/origin/p/big.bin" | cut -c1-64)
pssha=$(openssl dgst -sha256 -r "$T/origin/p/small.json" | cut -c1-64)
check_eq "origin: plain files hashed" \
    "$($HELP listing "$T/olist" p/big.bin sha256) $($HELP listing "$T/olist" p/small.json sha256)" \
    "$pbsha $pssha"
oport=${O_URL##*:}
wsha=$(openssl dgst -sha256 -r "$T/w.bin" | cut -c1-64)
vsha=$(openssl dgst -sha256 -r "$T/v.bin" | cut -c1-64)
FLAGS=(--upstream-kind ztensord --upstream-retries 0 --upstream-verify-first 1M)

# headers_in FILE: wait (bounded) until curl wrote a whole header block to FILE.
headers_in() {
    local i
    for i in $(seq 1 600); do
        [ -f "$1" ] && tr -d '\r' <"$1" | grep -q '^$' && return 0
        sleep 0.1
    done
    return 1
}
# fill_bytes_at_least N: wait (bounded) until the sidecar received N bytes from upstream.
fill_bytes_at_least() {
    local i
    for i in $(seq 1 600); do
        [ "$(metric "$URL" '^ztensord_upstream_bytes_total')" -ge "$1" ] && return 0
        sleep 0.1
    done
    return 1
}
# get NAME URL [CURL-ARGS...]: a GET in the background; NAME.h, NAME.b, NAME.code, NAME.rc.
get() {
    local n=$1 u=$2
    shift 2
    (
        code=$(curl -s --max-time 120 -o "$T/$n.b" -D "$T/$n.h" -w '%{http_code}' "$@" "$u")
        echo $? >"$T/$n.rc"
        echo "$code" >"$T/$n.code"
    ) &
}
# settled NAME: wait (bounded) for the background GET NAME to end.
settled() {
    local i
    for i in $(seq 1 1200); do
        [ -s "$T/$1.code" ] && return 0
        sleep 0.1
    done
    return 1
}

# ---- a fill in progress with a flipped byte landed
start_relay "$oport" flipgate 2 "$T/gate" || finish
start_sidecar "$T/side" "http://127.0.0.1:$RPORT" "$T/cache" "${FLAGS[@]}" || finish
curl -s -o /dev/null "$URL/v1/files/m.zt"

# w: 8 MiB, larger than upstream_verify_first: streamed while it fills
get whole "$URL/v1/blobs/sha256:$wsha"
headers_in "$T/whole.h" || bad "the whole answer started during the fill" "$(cat "$T/whole.h")"
fill_bytes_at_least $((4 << 20)) || bad "the fill received its first half" ""
get range "$URL/v1/blobs/sha256:$wsha" -H 'Range: bytes=0-99'
headers_in "$T/range.h" || bad "the range answer started during the fill" "$(cat "$T/range.h")"
note "during the fill: $(tr -d '\r' <"$T/whole.h" | grep -iE '^(HTTP|etag|repr-digest|cache-control)' | tr '\n' ' ')"
check_match "during the fill: 200" "$(head -1 "$T/whole.h")" " 200"
check_match "during the fill: a weak ETag" "$(hdr "$T/whole.h" ETag)" '^W/"'
check_nomatch "during the fill: no digest in the ETag" "$(hdr "$T/whole.h" ETag)" "$wsha"
check_eq "during the fill: no Repr-Digest" "$(hdr "$T/whole.h" Repr-Digest)" ""
check_nomatch "during the fill: not immutable" "$(hdr "$T/whole.h" Cache-Control)" immutable
check_match "range during the fill: 206" "$(head -1 "$T/range.h")" " 206"
check_match "range during the fill: a weak ETag" "$(hdr "$T/range.h" ETag)" '^W/"'
check_eq "range during the fill: no Repr-Digest" "$(hdr "$T/range.h" Repr-Digest)" ""
check_nomatch "range during the fill: not immutable" "$(hdr "$T/range.h" Cache-Control)" immutable

# v: 300,000 bytes, within upstream_verify_first: checked before its first byte
get small "$URL/v1/files/m.zt/objects/v/data"
fill_bytes_at_least $(((4 << 20) + 150000)) || bad "the small fill received its first half" ""
check_eq "small, during its fill: no answer yet (it waits for the check)" \
    "$(cat "$T/small.h" 2>/dev/null)" ""

# plain files: p/big.bin (6 MiB) streams unchecked, p/small.json (200,000 bytes) waits
get pbig "$URL/v1/files/p/big.bin/raw"
headers_in "$T/pbig.h" || bad "the plain file's answer started during the fill" "$(cat "$T/pbig.h")"
note "plain, during the fill: $(tr -d '\r' <"$T/pbig.h" | grep -iE '^(HTTP|etag|repr-digest)' | tr '\n' ' ')"
check_match "plain, during the fill: 200" "$(head -1 "$T/pbig.h")" " 200"
check_match "plain, during the fill: a weak ETag" "$(hdr "$T/pbig.h" ETag)" '^W/"'
check_nomatch "plain, during the fill: no sha256 ETag" "$(hdr "$T/pbig.h" ETag)" "$pbsha"
check_eq "plain, during the fill: no Repr-Digest" "$(hdr "$T/pbig.h" Repr-Digest)" ""
get psmall "$URL/v1/files/p/small.json/raw"

touch "$T/gate"
settled whole && settled range && settled small && settled pbig && settled psmall ||
    bad "the answers ended" ""
wcode=$(cat "$T/whole.code") wrc=$(cat "$T/whole.rc") wsize=$(stat -c %s "$T/whole.b" 2>/dev/null || echo 0)
note "whole: HTTP $wcode, curl exit $wrc, $wsize bytes"
check_eq "whole: cut short once the check failed (curl fails)" "$wcode $((wrc != 0))" "200 1"
check "whole: fewer bytes than Content-Length" [ "$wsize" -lt $((8 << 20)) ]
check_eq "range: cut short once the check failed (curl fails)" \
    "$(cat "$T/range.code") $(($(cat "$T/range.rc") != 0))" "206 1"
check_eq "small: 502" "$(cat "$T/small.code")" 502
check_match "small: the body is the error, naming the digest (no byte of the component)" \
    "$(head -c 600 "$T/small.b" | tr -d '\0')" '^\{"error":.*upstream_failed.*do not hash'

check_eq "small: no Repr-Digest" "$(hdr "$T/small.h" Repr-Digest)" ""
check_eq "plain: cut short once the check failed (curl fails)" \
    "$(cat "$T/pbig.code") $(($(cat "$T/pbig.rc") != 0))" "200 1"
check_eq "plain small: 502" "$(cat "$T/psmall.code")" 502
check_match "plain small: the body is the error (no byte of the file)" \
    "$(head -c 600 "$T/psmall.b" | tr -d '\0')" '^\{"error":.*upstream_failed'
check_eq "nothing in the cache" "$(metric "$URL" '^ztensord_cache_items$')" 0
check_eq "no file under blobs/" "$(find "$T/cache/blobs" -type f 2>/dev/null | wc -l)" 0
check_eq "every digest failure counted" "$(metric "$URL" '^ztensord_upstream_digest_failures_total')" 4
stop_daemon

# ---- a good fill: the digest names the bytes
start_relay "$oport" pass || finish
start_sidecar "$T/side" "http://127.0.0.1:$RPORT" "$T/cache" "${FLAGS[@]}" || finish
curl -s -o /dev/null "$URL/v1/files/m.zt"
http "$T/g" "$URL/v1/blobs/sha256:$wsha"
check_code "good fill: 200" 200
check_same "good fill: the right bytes" "$T/g.body" "$T/w.bin"
http "$T/g" "$URL/v1/blobs/sha256:$wsha"
check_eq "after the fill: the digest ETag" "$(hdr "$T/g.hdr" ETag)" "\"sha256:$wsha\""
check "after the fill: Repr-Digest" has_hdr "$T/g.hdr" Repr-Digest
check_match "after the fill: immutable" "$(hdr "$T/g.hdr" Cache-Control)" immutable
http "$T/g" -H 'Range: bytes=0-99' "$URL/v1/blobs/sha256:$wsha"
check_code "after the fill: a range" 206
check_match "after the fill: the range is immutable" "$(hdr "$T/g.hdr" Cache-Control)" immutable
http "$T/s" "$URL/v1/blobs/sha256:$vsha"
check_code "small, good fill: 200" 200
check_same "small, good fill: the right bytes" "$T/s.body" "$T/v.bin"
check_eq "small, first answer: the digest ETag" "$(hdr "$T/s.hdr" ETag)" "\"sha256:$vsha\""
check "small, first answer: Repr-Digest" has_hdr "$T/s.hdr" Repr-Digest
check_match "small, first answer: immutable" "$(hdr "$T/s.hdr" Cache-Control)" immutable
http "$T/p" "$URL/v1/files/p/big.bin/raw"
check_code "plain, good fill: 200" 200
check_same "plain, good fill: the right bytes" "$T/p.body" "$T/origin/p/big.bin"
http "$T/p" "$URL/v1/files/p/big.bin/raw"
check_eq "plain, after the fill: the sha256 ETag" "$(hdr "$T/p.hdr" ETag)" "\"sha256:$pbsha\""
check "plain, after the fill: Repr-Digest" has_hdr "$T/p.hdr" Repr-Digest
http "$T/p" "$URL/v1/files/p/small.json/raw"
check_code "plain small, good fill: 200" 200
check_same "plain small, good fill: the right bytes" "$T/p.body" "$T/origin/p/small.json"
check_eq "plain small, first answer: the sha256 ETag" "$(hdr "$T/p.hdr" ETag)" "\"sha256:$pssha\""
check "plain small, first answer: Repr-Digest" has_hdr "$T/p.hdr" Repr-Digest
check_eq "all cached" "$(metric "$URL" '^ztensord_cache_items$')" 4
stop_relay
finish
