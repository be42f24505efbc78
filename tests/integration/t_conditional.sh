#!/bin/bash
# Conditional requests: If-None-Match, If-Match, If-Modified-Since, If-Unmodified-Since,
# If-Range; ETag and Repr-Digest for sha256, crc32c and digest-less components.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 5000
rand "$T/c.raw" 4000
pack "$R/a.zt" w=u8:5000:"$T/w.raw"
pack "$R/crc.zt" --digest crc32c c=u8:4000:"$T/c.raw"
pack "$R/nod.zt" --digest none c=u8:4000:"$T/c.raw"
# Last-Modified is the file's mtime: put it in a known past.
touch -d '2020-01-02 03:04:05 UTC' "$R/a.zt" "$R/crc.zt" "$R/nod.zt"
zget "$R/a.zt" w >"$T/w.bin"
zget "$R/crc.zt" c >"$T/c.bin"

PAST='Mon, 01 Jan 2001 00:00:00 GMT'
FUTURE='Fri, 01 Jan 2100 00:00:00 GMT'
LM='Thu, 02 Jan 2020 03:04:05 GMT'
LATER='Sat, 01 Jan 2022 00:00:00 GMT'

start_daemon "$R" || finish

P=/v1/files/a.zt/objects/w/data
hex=$(sha256_hex "$T/w.bin")
req "GET sha256 component" 200 "$URL$P"
ET=$(hdr "$LAST.hdr" ETag)
check_eq "ETag is \"sha256:<hex of the bytes>\"" "$ET" "\"sha256:$hex\""
check_eq "Repr-Digest is sha-256 of the bytes" "$(hdr "$LAST.hdr" Repr-Digest)" "sha-256=:$(sha256_b64 "$T/w.bin"):"
check_eq "Last-Modified is the file mtime" "$(hdr "$LAST.hdr" Last-Modified)" "$LM"

# not_modified LABEL HEADER...: 304, no body, ETag present
not_modified() {
    local label=$1
    shift
    local args=() h
    for h in "$@"; do args+=(-H "$h"); done
    req "$label: 304" 304 "${args[@]}" "$URL$P"
    check_eq "$label: no body" "$(stat -c %s "$LAST.body")" 0
    check_eq "$label: ETag present" "$(hdr "$LAST.hdr" ETag)" "$ET"
    check_eq "$label: Last-Modified present" "$(hdr "$LAST.hdr" Last-Modified)" "$LM"
}
full() {
    local label=$1
    shift
    local args=() h
    for h in "$@"; do args+=(-H "$h"); done
    req "$label: 200" 200 "${args[@]}" "$URL$P"
    check_same "$label: full bytes" "$LAST.body" "$T/w.bin"
}
failed() {
    local label=$1
    shift
    local args=() h
    for h in "$@"; do args+=(-H "$h"); done
    check_err "$label" 412 precondition_failed "${args[@]}" "$URL$P"
}

# ---- If-None-Match
not_modified "If-None-Match: ETag" "If-None-Match: $ET"
not_modified "If-None-Match: *" "If-None-Match: *"
not_modified "If-None-Match: list with the ETag" "If-None-Match: \"x\", $ET"
not_modified "If-None-Match: weak form of the ETag" "If-None-Match: W/$ET"
full "If-None-Match: another tag" 'If-None-Match: "sha256:0000"'
full "If-None-Match: malformed" 'If-None-Match: sha256:abc'
# If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2)
full "If-None-Match other + If-Modified-Since later" 'If-None-Match: "x"' "If-Modified-Since: $LATER"
# HEAD gives the same 304
head_req "HEAD If-None-Match: ETag" 304 "$P" "If-None-Match: $ET"

# ---- If-Match
failed "If-Match wrong" 'If-Match: "sha256:0000"'
full "If-Match right" "If-Match: $ET"
full "If-Match *" "If-Match: *"
failed "If-Match weak (strong comparison)" "If-Match: W/$ET"
failed "If-Match wrong + If-None-Match" 'If-Match: "nope"' "If-None-Match: $ET"

# ---- dates
failed "If-Unmodified-Since past" "If-Unmodified-Since: $PAST"
full "If-Unmodified-Since future" "If-Unmodified-Since: $FUTURE"
full "If-Unmodified-Since = Last-Modified" "If-Unmodified-Since: $LM"
full "If-Unmodified-Since unparseable" "If-Unmodified-Since: yesterday"
# a date later than now is ignored (RFC 9110 13.1.3): 200, not 304
full "If-Modified-Since future (ignored)" "If-Modified-Since: $FUTURE"
not_modified "If-Modified-Since after Last-Modified, before now" "If-Modified-Since: $LATER"
not_modified "If-Modified-Since = Last-Modified" "If-Modified-Since: $LM"
not_modified "If-Modified-Since, RFC 850 form" "If-Modified-Since: Thursday, 02-Jan-20 03:04:05 GMT"
not_modified "If-Modified-Since, asctime form" "If-Modified-Since: Thu Jan  2 03:04:05 2020"
full "If-Modified-Since past" "If-Modified-Since: $PAST"
full "If-Modified-Since unparseable" "If-Modified-Since: soon"
full "If-Match right + If-Unmodified-Since past (If-Match wins)" "If-Match: $ET" "If-Unmodified-Since: $PAST"

# ---- If-Range
req "If-Range matching ETag: 206" 206 -H "Range: bytes=0-99" -H "If-Range: $ET" "$URL$P"
check_eq "If-Range matching ETag: Content-Range" "$(hdr "$LAST.hdr" Content-Range)" "bytes 0-99/5000"
slice "$T/w.bin" 0 100 >"$T/want.bin"
check_same "If-Range matching ETag: bytes" "$LAST.body" "$T/want.bin"
req "If-Range other ETag: 200" 200 -H "Range: bytes=0-99" -H 'If-Range: "sha256:0000"' "$URL$P"
check_same "If-Range other ETag: full bytes" "$LAST.body" "$T/w.bin"
req "If-Range weak ETag: 200" 200 -H "Range: bytes=0-99" -H "If-Range: W/$ET" "$URL$P"
check_same "If-Range weak ETag: full bytes" "$LAST.body" "$T/w.bin"
req "If-Range = Last-Modified: 206" 206 -H "Range: bytes=0-99" -H "If-Range: $LM" "$URL$P"
req "If-Range other date: 200" 200 -H "Range: bytes=0-99" -H "If-Range: $PAST" "$URL$P"
req "If-Range garbage: 200" 200 -H "Range: bytes=0-99" -H "If-Range: whatever" "$URL$P"
req "If-Range matching, multipart: 206" 206 -H "Range: bytes=0-9,20-29" -H "If-Range: $ET" "$URL$P"
check_match "If-Range matching, multipart: type" "$(hdr "$LAST.hdr" Content-Type)" '^multipart/byteranges'
req "If-Range without Range: 200" 200 -H "If-Range: $ET" "$URL$P"
check_same "If-Range without Range: full bytes" "$LAST.body" "$T/w.bin"
req "If-None-Match beats Range: 304" 304 -H "Range: bytes=0-99" -H "If-None-Match: $ET" "$URL$P"
check_err "If-Match wrong beats Range" 412 precondition_failed -H "Range: bytes=0-99" -H 'If-Match: "x"' "$URL$P"

# ---- blob URL: same validators
req "blob GET" 200 "$URL/v1/blobs/sha256:$hex"
check_eq "blob ETag" "$(hdr "$LAST.hdr" ETag)" "$ET"
req "blob If-None-Match: 304" 304 -H "If-None-Match: $ET" "$URL/v1/blobs/sha256:$hex"

# ---- crc32c and digest-less components: another strong ETag, no Repr-Digest
for f in crc.zt nod.zt; do
    CP=/v1/files/$f/objects/c/data
    req "$f GET" 200 "$URL$CP"
    check_same "$f bytes" "$LAST.body" "$T/c.bin"
    e=$(hdr "$LAST.hdr" ETag)
    check_match "$f ETag is strong and quoted" "$e" '^"[^"]+"$'
    check_nomatch "$f ETag is not a sha256 tag" "$e" 'sha256'
    if has_hdr "$LAST.hdr" Repr-Digest; then bad "$f has no Repr-Digest" "$(hdr "$LAST.hdr" Repr-Digest)"; else ok "$f has no Repr-Digest"; fi
    req "$f same ETag on a second GET" 200 "$URL$CP"
    check_eq "$f ETag stable" "$(hdr "$LAST.hdr" ETag)" "$e"
    req "$f If-None-Match: 304" 304 -H "If-None-Match: $e" "$URL$CP"
    check_eq "$f 304 no body" "$(stat -c %s "$LAST.body")" 0
    check_eq "$f 304 ETag" "$(hdr "$LAST.hdr" ETag)" "$e"
    req "$f If-Range: 206" 206 -H "Range: bytes=10-19" -H "If-Range: $e" "$URL$CP"
    check_err "$f If-Match other" 412 precondition_failed -H "If-Match: \"sha256:$hex\"" "$URL$CP"
    eval "ET_$(echo "$f" | tr -c 'a-z\n' _)=\$e"
done
check_ne "crc32c and digest-less files have different ETags" "$ET_crc_zt" "$ET_nod_zt"

# ---- manifest, object and raw carry validators too
for p in /v1/files/a.zt /v1/files/a.zt/objects/w /v1/files/a.zt/raw; do
    req "GET $p" 200 "$URL$p"
    e=$(hdr "$LAST.hdr" ETag)
    check_match "$p ETag strong" "$e" '^"[^"]+"$'
    req "$p If-None-Match: 304" 304 -H "If-None-Match: $e" "$URL$p"
    check_eq "$p 304 no body" "$(stat -c %s "$LAST.body")" 0
    check_err "$p If-Match other" 412 precondition_failed -H 'If-Match: "other"' "$URL$p"
done
req "raw If-Range ETag: 206" 206 -H "Range: bytes=0-7" -H "If-Range: $e" "$URL/v1/files/a.zt/raw"
check_eq "raw range is the magic" "$(cat "$LAST.body")" ZTEN1000

daemon_alive "daemon still running"
finish
