#!/bin/bash
# Range and conditional requests at their edges.
#
# tests/integration/t_ranges.sh covers the single, suffix, clamped and multipart forms, the
# 64-range cap, a sum above the length, invalid syntax (bytes=9-5, bytes=abc), numbers
# above 2^64-1, bytes=-0 and other 416s, on a component and /raw. t_conditional.sh covers
# If-None-Match (*, a list, weak, malformed), If-Match, the date forms, and If-Range with a
# strong, weak, other or date validator. This script adds:
#  - overlapping and unsorted ranges (bytes checked part by part), ranges on the JSON
#    documents, on blobs and on a 0-byte component;
#  - numbers at and past 2^64 (bytes=18446744073709551615-, suffixes, FIRST-LAST pairs that
#    would overflow a sum; a LAST past 2^64 is "to the end", a FIRST past it 416), 40-digit
#    numbers with leading zeros, 5,000 ranges in one header, 2,000 distinct ranges, empty
#    list elements;
#  - If-Range lists, garbage after a tag, a later date; If-None-Match lists with odd
#    spacing, "*" inside a list, unterminated quotes, 2,000 tags; If-Match the same way;
#  - dates: lower case, 31 February, 25:61:61, leap second, non-GMT zones, years 2038,
#    2106, 9999, 99999 and 0001 (no 32-bit wrap-around);
#  - the same conditional and range header sent twice (RFC 9110 section 5.3: a list split
#    over two field lines means the same as one line joined by a comma).
. "$(dirname "$0")/lib.sh" "$@"
IT_HELP=$HELP # multipart lives in the shared helper (tests/sh/zthelp.py)

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 10000
pack "$R/a.zt" w=u8:10000:"$T/w.raw" e=u8:0:/dev/null
touch -d '2020-01-02 03:04:05 UTC' "$R/a.zt" # Last-Modified: Thu, 02 Jan 2020 03:04:05 GMT
HEX=$(sha256_hex "$T/w.raw")
M64=18446744073709551615 # 2^64-1
P64=18446744073709551616 # 2^64
start_daemon "$R" || finish
C=$URL/v1/files/a.zt/objects/w/data
ET=$(curl -s -D - -o /dev/null "$C" | hdr /dev/stdin ETag)
check_eq "the component's ETag" "$ET" "\"sha256:$HEX\""

slice() { tail -c +"$(($2 + 1))" "$1" | head -c "$3"; }
# one LABEL URL FULL RANGE START END [HEADER...]: a single-part 206 with those bytes.
one() {
    local label=$1 url=$2 full=$3 range=$4 a=$5 z=$6 len args=() h
    shift 6
    for h in "$@"; do args+=(-H "$h"); done
    len=$(stat -c %s "$full")
    req "$label: 206" 206 -H "Range: $range" "${args[@]}" "$url"
    check_eq "$label: Content-Range" "$(hdr "$LAST.hdr" Content-Range)" "bytes $a-$z/$len"
    slice "$full" "$a" $((z - a + 1)) >"$T/want"
    check_same "$label: bytes" "$LAST.body" "$T/want"
}
# multi LABEL URL FULL RANGE PART...: a multipart 206 whose parts are PART... in order.
multi() {
    local label=$1 url=$2 full=$3 range=$4 why
    shift 4
    req "$label: 206" 206 -H "Range: $range" "$url"
    if why=$($IT_HELP multipart "$LAST.body" "$(hdr "$LAST.hdr" Content-Type)" "$full" \
        "$(stat -c %s "$full")" "$@" 2>&1); then
        ok "$label: $# parts, in request order, right bytes"
    else
        bad "$label: parts" "$why"
    fi
}
# whole LABEL URL FULL RANGE [HEADER...]: 200 with the whole representation, no Content-Range.
whole() {
    local label=$1 url=$2 full=$3 range=$4 args=() h
    shift 4
    for h in "$@"; do args+=(-H "$h"); done
    req "$label: 200" 200 -H "Range: $range" "${args[@]}" "$url"
    check_same "$label: whole body" "$LAST.body" "$full"
    check_eq "$label: no Content-Range" "$(hdr "$LAST.hdr" Content-Range)" ""
}
unsatisfiable() {
    check_err "$1" 416 range_not_satisfiable -H "Range: $4" "$2"
    check_eq "$1: Content-Range" "$(hdr "$LAST.hdr" Content-Range)" "bytes */$(stat -c %s "$3")"
}

# ---- overlapping, unsorted, repeated
multi "overlapping" "$C" "$T/w.raw" "bytes=0-99,50-149" 0-99 50-149
multi "overlapping and unsorted" "$C" "$T/w.raw" "bytes=200-299,0-250" 200-299 0-250
multi "one byte three times" "$C" "$T/w.raw" "bytes=1-1,1-1,1-1" 1-1 1-1 1-1
multi "the same suffix twice" "$C" "$T/w.raw" "bytes=-1,-1" 9999-9999 9999-9999
multi "descending" "$C" "$T/w.raw" "bytes=9000-9009,5000-5009,0-9" 9000-9009 5000-5009 0-9
multi "empty list elements" "$C" "$T/w.raw" "bytes=0-1,,,,2-3" 0-1 2-3
one "a leading empty element" "$C" "$T/w.raw" "bytes=,0-1" 0 1
one "a trailing empty element" "$C" "$T/w.raw" "bytes=0-1," 0 1
one "a trailing tab" "$C" "$T/w.raw" $'bytes=0-1\t' 0 1
whole "overlapping, adding up to more than the length" "$C" "$T/w.raw" "bytes=0-9999,5000-5000"
whole "2000 one-byte ranges (past max_ranges)" "$C" "$T/w.raw" "$($IT_HELP ranges 2000 1)"
whole "5000 copies of bytes=0-0" "$C" "$T/w.raw" "bytes=$(printf '0-0,%.0s' $(seq 1 4999))0-0"

# ---- numbers at and past 2^64
unsatisfiable "FIRST = 2^64-1" "$C" "$T/w.raw" "bytes=$M64-"
unsatisfiable "FIRST = 2^64" "$C" "$T/w.raw" "bytes=$P64-"
one "suffix 2^64-1" "$C" "$T/w.raw" "bytes=-$M64" 0 9999
one "suffix 2^64 (the whole representation)" "$C" "$T/w.raw" "bytes=-$P64" 0 9999
one "LAST = 2^64-1" "$C" "$T/w.raw" "bytes=0-$M64" 0 9999
one "LAST = 2^64 (to the end)" "$C" "$T/w.raw" "bytes=0-$P64" 0 9999
one "LAST of 23 digits (to the end)" "$C" "$T/w.raw" "bytes=0-99999999999999999999999" 0 9999
one "LAST of 23 digits, from 9990" "$C" "$T/w.raw" "bytes=9990-99999999999999999999999" 9990 9999
unsatisfiable "FIRST of 23 digits" "$C" "$T/w.raw" "bytes=99999999999999999999999-"
unsatisfiable "FIRST and LAST of 23 digits" "$C" "$T/w.raw" "bytes=99999999999999999999999-99999999999999999999999"
whole "23 digits, LAST below FIRST (invalid)" "$C" "$T/w.raw" "bytes=99999999999999999999999-99999999999999999999998"
multi "a LAST of 23 digits among others" "$C" "$T/w.raw" "bytes=0-1,9998-99999999999999999999999" 0-1 9998-9999
unsatisfiable "2^64-2 to 2^64-1" "$C" "$T/w.raw" "bytes=18446744073709551614-$M64"
unsatisfiable "2^63-1 to 2^63" "$C" "$T/w.raw" "bytes=9223372036854775807-9223372036854775808"
whole "two ranges to 2^64-1 (their sum overflows 64 bits)" "$C" "$T/w.raw" "bytes=0-$M64,0-$M64"
whole "lengths that wrap past 2^64 if summed before clamping" "$C" "$T/w.raw" "bytes=1-$M64,0-0,-$M64"
one "40-digit numbers with leading zeros" "$C" "$T/w.raw" \
    "bytes=0000000000000000000000000000000000000005-0000000000000000000000000000000000000009" 5 9
whole "bytes=5-4" "$C" "$T/w.raw" "bytes=5-4"
whole "negative FIRST" "$C" "$T/w.raw" "bytes=-1-2"
whole "hex numbers" "$C" "$T/w.raw" "bytes=0x10-0x20"
whole "exponents" "$C" "$T/w.raw" "bytes=1e3-2e3"
whole "two units" "$C" "$T/w.raw" "bytes=0-1, bytes=2-3"
whole "a space before '='" "$C" "$T/w.raw" "bytes =0-1"
unsatisfiable "bytes=10000-,-0" "$C" "$T/w.raw" "bytes=10000-,-0"

# ---- other representations: JSON documents, blobs, a 0-byte component
curl -s -o "$T/manifest.json" "$URL/v1/files/a.zt"
L=$(stat -c %s "$T/manifest.json")
one "manifest suffix" "$URL/v1/files/a.zt" "$T/manifest.json" "bytes=-10" $((L - 10)) $((L - 1))
multi "manifest overlapping" "$URL/v1/files/a.zt" "$T/manifest.json" "bytes=0-5,3-8" 0-5 3-8
curl -s -o "$T/object.json" "$URL/v1/files/a.zt/objects/w"
one "object JSON first byte" "$URL/v1/files/a.zt/objects/w" "$T/object.json" "bytes=0-0" 0 0
multi "blob, unsorted" "$URL/v1/blobs/sha256:$HEX" "$T/w.raw" "bytes=9990-,0-0" 9990-9999 0-0
unsatisfiable "blob past its end" "$URL/v1/blobs/sha256:$HEX" "$T/w.raw" "bytes=10000-10001"
zget "$R/a.zt" e >"$T/e.raw"
whole "0-byte component, bytes=0-0" "$URL/v1/files/a.zt/objects/e/data" "$T/e.raw" "bytes=0-0"
whole "0-byte component, bytes=-1" "$URL/v1/files/a.zt/objects/e/data" "$T/e.raw" "bytes=-1"
whole "0-byte component, bytes=-0" "$URL/v1/files/a.zt/objects/e/data" "$T/e.raw" "bytes=-0"

# ---- If-Range
whole "If-Range with a list" "$C" "$T/w.raw" "bytes=0-1" "If-Range: \"x\", $ET"
whole "If-Range with garbage after the tag" "$C" "$T/w.raw" "bytes=0-1" "If-Range: $ET x"
whole "If-Range with a later date" "$C" "$T/w.raw" "bytes=0-1" "If-Range: Sat, 01 Jan 2022 00:00:00 GMT"
whole "If-Range with an earlier second" "$C" "$T/w.raw" "bytes=0-1" "If-Range: Thu, 02 Jan 2020 03:04:04 GMT"
whole "If-Range empty" "$C" "$T/w.raw" "bytes=0-1" "If-Range;"
whole "If-Range, the tag unquoted" "$C" "$T/w.raw" "bytes=0-1" "If-Range: sha256:$HEX"
whole "If-Range, the tag in lower-case W/" "$C" "$T/w.raw" "bytes=0-1" "If-Range: w/$ET"
one "If-Range = Last-Modified in RFC 850 form" "$C" "$T/w.raw" "bytes=0-1" 0 1 "If-Range: Thursday, 02-Jan-20 03:04:05 GMT"
one "If-Range matching, suffix past the length" "$C" "$T/w.raw" "bytes=-$M64" 0 9999 "If-Range: $ET"

# ---- If-None-Match / If-Match lists and malformed validators
# cond LABEL WANT HEADER...: status WANT for the component with these headers.
cond() {
    local label=$1 want=$2 args=() h
    shift 2
    for h in "$@"; do args+=(-H "$h"); done
    req "$label" "$want" "${args[@]}" "$C"
    case $want in
    200) check_same "$label: whole body" "$LAST.body" "$T/w.raw" ;;
    304) check_eq "$label: no body" "$(stat -c %s "$LAST.body")" 0 ;;
    412) check_eq "$label: JSON error" "$(jerr_code "$LAST.body")" precondition_failed ;;
    esac
}
cond "If-None-Match: spaces and tabs in the list" 304 "If-None-Match:   \"x\" ,	W/$ET  "
cond "If-None-Match: empty elements" 304 "If-None-Match: ,,$ET,,"
cond "If-None-Match: 2000 tags, the match last" 304 "If-None-Match: $(printf '"t%d", ' $(seq 1 2000))$ET"
cond "If-None-Match: * with a Range" 304 "If-None-Match: *" "Range: bytes=0-1"
cond "If-None-Match: two tags without a comma" 200 "If-None-Match: \"x\" $ET"
cond "If-None-Match: an unterminated quote" 200 'If-None-Match: "abc'
cond "If-None-Match: * inside a list" 200 "If-None-Match: *, $ET"
cond "If-None-Match: empty" 200 "If-None-Match;"
cond "If-Match: empty elements" 200 "If-Match: ,,$ET,,"
cond "If-Match: 2000 tags, the match last" 200 "If-Match: $(printf '"t%d", ' $(seq 1 2000))$ET"
cond "If-Match: garbage after the tag" 412 "If-Match: $ET x"
cond "If-Match: empty" 412 "If-Match;"
cond "If-Match: * inside a list" 412 "If-Match: \"x\", *"

# ---- dates (Last-Modified is 2020-01-02 03:04:05)
cond "If-Modified-Since: lower case" 304 "If-Modified-Since: sat, 01 jan 2022 00:00:00 gmt"
cond "If-Modified-Since: upper case" 304 "If-Modified-Since: SAT, 01 JAN 2022 00:00:00 GMT"
cond "If-Modified-Since: a leap second" 304 "If-Modified-Since: Sat, 01 Jan 2022 23:59:60 GMT"
cond "If-Modified-Since: 31 February (ignored)" 200 "If-Modified-Since: Mon, 31 Feb 2022 00:00:00 GMT"
cond "If-Modified-Since: 25:61:61 (ignored)" 200 "If-Modified-Since: Sat, 01 Jan 2022 25:61:61 GMT"
cond "If-Modified-Since: +0000 instead of GMT (ignored)" 200 "If-Modified-Since: Sat, 01 Jan 2022 00:00:00 +0000"
cond "If-Modified-Since: junk after the date (ignored)" 200 "If-Modified-Since: Sat, 01 Jan 2022 00:00:00 GMT junk"
cond "If-Modified-Since: ISO 8601 (ignored)" 200 "If-Modified-Since: 2022-01-01T00:00:00Z"
cond "If-Modified-Since: seconds since 1970 (ignored)" 200 "If-Modified-Since: 1640995200"
cond "If-Modified-Since: year 99999 (ignored)" 200 "If-Modified-Since: Sat, 01 Jan 99999 00:00:00 GMT"
cond "If-Modified-Since: year 9999, in the future (ignored)" 200 "If-Modified-Since: Fri, 31 Dec 9999 23:59:59 GMT"
cond "If-Modified-Since: 1969" 200 "If-Modified-Since: Wed, 31 Dec 1969 23:59:59 GMT"
cond "If-Unmodified-Since: 2038-01-19 03:14:08 (past 2^31 s)" 200 "If-Unmodified-Since: Tue, 19 Jan 2038 03:14:08 GMT"
cond "If-Unmodified-Since: 2106-02-07 06:28:16 (past 2^32 s)" 200 "If-Unmodified-Since: Sun, 07 Feb 2106 06:28:16 GMT"
cond "If-Unmodified-Since: year 9999" 200 "If-Unmodified-Since: Fri, 31 Dec 9999 23:59:59 GMT"
cond "If-Unmodified-Since: year 0001" 412 "If-Unmodified-Since: Mon, 01 Jan 0001 00:00:00 GMT"
cond "If-Unmodified-Since: 1970-01-01" 412 "If-Unmodified-Since: Thu, 01 Jan 1970 00:00:00 GMT"

# ---- a header sent twice (RFC 9110 5.3: the same as one line joined by ", ")
cond "If-None-Match split over two lines, the match in the second" 304 'If-None-Match: "x"' "If-None-Match: $ET"
cond "If-Match split over two lines, the match in the second" 200 'If-Match: "x"' "If-Match: $ET"
cond "If-Match split over two lines, no match" 412 'If-Match: "x"' 'If-Match: "y"'
whole "Range sent twice (not a list field: invalid)" "$C" "$T/w.raw" "bytes=0-1" "Range: bytes=2-3"

req "HEAD with 2000 If-None-Match tags" 304 -I -H "If-None-Match: $(printf '"t%d", ' $(seq 1 2000))$ET" "$C"
daemon_alive "daemon alive"
finish
