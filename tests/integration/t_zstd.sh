#!/bin/bash
# zstd components: decoded by default, stored bytes with Accept-Encoding: zstd, Vary,
# validators of both representations, ranges on the decoded stream.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
text "$T/z.raw" 300000
text "$T/y.raw" 80000
rand "$T/r.raw" 1000
pack "$R/z.zt" --compress z=u8:300000:"$T/z.raw" y=u16:40000:"$T/y.raw"
pack "$R/zc.zt" --compress=19 --digest crc32c y=u8:80000:"$T/y.raw"
pack "$R/mixed.zt" r=u8:1000:"$T/r.raw"
info_json "$R/z.zt" "$T/z.json"
info_json "$R/zc.zt" "$T/zc.json"
zget "$R/z.zt" z >"$T/z.bin"
check_same "zt get decodes to the packed bytes" "$T/z.bin" "$T/z.raw"
check_eq "the component is stored as zstd" "$(cfield "$T/z.json" z data encoding)" zstd
OFF=$(cfield "$T/z.json" z data offset)
SLEN=$(cfield "$T/z.json" z data length)
DIG=$(cfield "$T/z.json" z data digest)
check_match "the stored length is smaller than the decoded one" "$SLEN" '^[0-9]+$'
[ "$SLEN" -lt 300000 ] && ok "zstd shrank the data" || bad "zstd shrank the data" "$SLEN"

start_daemon "$R" || finish
P=/v1/files/z.zt/objects/z/data

# ---- the stored bytes, from /raw, as a reference
req "raw range of the stored component" 206 -H "Range: bytes=$OFF-$((OFF + SLEN - 1))" "$URL/v1/files/z.zt/raw"
cp "$LAST.body" "$T/stored.bin"
slice "$R/z.zt" "$OFF" "$SLEN" >"$T/want.bin"
check_same "raw range equals the file slice" "$T/stored.bin" "$T/want.bin"
check_eq "manifest digest is the sha256 of the stored bytes" "$DIG" "sha256:$(sha256_hex "$T/stored.bin")"

# ---- default: decoded
req "default GET: 200" 200 "$URL$P"
check_same "default GET: bytes equal zt get" "$LAST.body" "$T/z.bin"
check_eq "default GET: Content-Length is the decoded length" "$(hdr "$LAST.hdr" Content-Length)" 300000
if has_hdr "$LAST.hdr" Content-Encoding; then bad "default GET: no Content-Encoding" "$(hdr "$LAST.hdr" Content-Encoding)"; else ok "default GET: no Content-Encoding"; fi
check_match "default GET: Vary" "$(hdr "$LAST.hdr" Vary)" 'Accept-Encoding'
check_eq "default GET: Accept-Ranges" "$(hdr "$LAST.hdr" Accept-Ranges)" bytes
DET=$(hdr "$LAST.hdr" ETag)
check_match "default GET: strong quoted ETag" "$DET" '^"[^"]+"$'
check_ne "decoded ETag differs from the stored digest tag" "$DET" "\"$DIG\""
if has_hdr "$LAST.hdr" Repr-Digest; then
    check_eq "default GET: Repr-Digest (if any) is of the decoded bytes" "$(hdr "$LAST.hdr" Repr-Digest)" "sha-256=:$(sha256_b64 "$T/z.bin"):"
else
    ok "default GET: no Repr-Digest for the decoded stream"
fi
head_req "HEAD decoded" 200 "$P"
check_eq "HEAD decoded: Content-Length" "$(hdr "$LAST.hdr" Content-Length)" 300000
check_eq "HEAD decoded: ETag" "$(hdr "$LAST.hdr" ETag)" "$DET"

for ae in "gzip, deflate" "zstd;q=0" "gzip, zstd;q=0.0" "identity" "zstdx"; do
    req "Accept-Encoding '$ae': 200" 200 -H "Accept-Encoding: $ae" "$URL$P"
    check_same "Accept-Encoding '$ae': decoded bytes" "$LAST.body" "$T/z.bin"
    if has_hdr "$LAST.hdr" Content-Encoding; then bad "Accept-Encoding '$ae': no Content-Encoding"; else ok "Accept-Encoding '$ae': no Content-Encoding"; fi
done

# ---- Accept-Encoding: zstd: the stored bytes
for ae in "zstd" "gzip, deflate, br, zstd" "ZSTD;q=0.5" "br;q=1, zstd;q=0.1"; do
    req "Accept-Encoding '$ae': 200" 200 -H "Accept-Encoding: $ae" "$URL$P"
    check_eq "Accept-Encoding '$ae': Content-Encoding" "$(hdr "$LAST.hdr" Content-Encoding)" zstd
    check_same "Accept-Encoding '$ae': the stored bytes" "$LAST.body" "$T/stored.bin"
done
req "zstd GET" 200 -H "Accept-Encoding: zstd" "$URL$P"
check_match "zstd GET: Vary" "$(hdr "$LAST.hdr" Vary)" 'Accept-Encoding'
check_eq "zstd GET: Content-Length is the stored length" "$(hdr "$LAST.hdr" Content-Length)" "$SLEN"
SET=$(hdr "$LAST.hdr" ETag)
check_eq "zstd GET: ETag is the stored digest" "$SET" "\"$DIG\""
check_eq "zstd GET: Repr-Digest of the stored bytes" "$(hdr "$LAST.hdr" Repr-Digest)" "sha-256=:$(sha256_b64 "$T/stored.bin"):"
if command -v zstd >/dev/null; then
    zstd -q -d -c "$LAST.body" >"$T/dec.bin" 2>"$T/zstd.err"
    check_same "zstd -d of the response equals zt get" "$T/dec.bin" "$T/z.bin"
else
    note "zstd CLI absent: decoding checked through the server only"
fi
req "curl --compressed (if built with zstd) or plain: decoded bytes" 200 --compressed "$URL$P"
check_same "curl --compressed: bytes" "$LAST.body" "$T/z.bin"

# ---- validators per representation
req "decoded If-None-Match decoded ETag: 304" 304 -H "If-None-Match: $DET" "$URL$P"
req "decoded If-None-Match stored ETag: 200" 200 -H "If-None-Match: $SET" "$URL$P"
check_same "decoded If-None-Match stored ETag: bytes" "$LAST.body" "$T/z.bin"
req "zstd If-None-Match stored ETag: 304" 304 -H "Accept-Encoding: zstd" -H "If-None-Match: $SET" "$URL$P"
req "zstd If-None-Match decoded ETag: 200" 200 -H "Accept-Encoding: zstd" -H "If-None-Match: $DET" "$URL$P"
check_err "decoded If-Match stored ETag" 412 precondition_failed -H "If-Match: $SET" "$URL$P"

# ---- ranges on the decoded stream (single span)
dr() { # RANGE START LEN
    req "decoded Range $1: 206" 206 -H "Range: $1" "$URL$P"
    check_eq "decoded Range $1: Content-Range" "$(hdr "$LAST.hdr" Content-Range)" "bytes $2-$(($2 + $3 - 1))/300000"
    slice "$T/z.bin" "$2" "$3" >"$T/want.bin"
    check_same "decoded Range $1: bytes" "$LAST.body" "$T/want.bin"
}
dr bytes=0-99 0 100
dr bytes=150000-150999 150000 1000
dr bytes=-100 299900 100
dr bytes=299000- 299000 1000
dr bytes=1-299999 1 299999
req "decoded If-Range decoded ETag: 206" 206 -H "Range: bytes=10-19" -H "If-Range: $DET" "$URL$P"
req "decoded If-Range stored ETag: 200" 200 -H "Range: bytes=10-19" -H "If-Range: $SET" "$URL$P"
check_same "decoded If-Range stored ETag: full" "$LAST.body" "$T/z.bin"
check_err "decoded Range unsatisfiable" 416 range_not_satisfiable -H "Range: bytes=300000-" "$URL$P"
check_eq "decoded 416 Content-Range" "$(hdr "$LAST.hdr" Content-Range)" "bytes */300000"
# several ranges of a decoded stream: answered 200 full (documented choice)
req "decoded multi-range: 200 full" 200 -H "Range: bytes=0-9,100-109" "$URL$P"
check_same "decoded multi-range: full bytes" "$LAST.body" "$T/z.bin"
# ranges of the stored bytes
req "zstd Range 0-99: 206" 206 -H "Accept-Encoding: zstd" -H "Range: bytes=0-99" "$URL$P"
slice "$T/stored.bin" 0 100 >"$T/want.bin"
check_same "zstd Range 0-99: stored bytes" "$LAST.body" "$T/want.bin"
check_eq "zstd Range 0-99: Content-Range" "$(hdr "$LAST.hdr" Content-Range)" "bytes 0-99/$SLEN"
check_eq "zstd Range 0-99: Content-Encoding" "$(hdr "$LAST.hdr" Content-Encoding)" zstd
req "zstd multi-range: 206" 206 -H "Accept-Encoding: zstd" -H "Range: bytes=0-9,-10" "$URL$P"
ct=$(hdr "$LAST.hdr" Content-Type)
check "zstd multi-range parts" $HELP multipart "$LAST.body" "$ct" "$T/stored.bin" "$SLEN" 0-9 $((SLEN - 10))-$((SLEN - 1))

# ---- second object (u16) and the crc32c file
zget "$R/z.zt" y >"$T/y.bin"
req "u16 zstd object decoded" 200 "$URL/v1/files/z.zt/objects/y/data"
check_same "u16 zstd object bytes" "$LAST.body" "$T/y.bin"
zget "$R/zc.zt" y >"$T/yc.bin"
req "crc32c zstd decoded" 200 "$URL/v1/files/zc.zt/objects/y/data"
check_same "crc32c zstd decoded bytes" "$LAST.body" "$T/yc.bin"
e1=$(hdr "$LAST.hdr" ETag)
req "crc32c zstd stored" 200 -H "Accept-Encoding: zstd" "$URL/v1/files/zc.zt/objects/y/data"
e2=$(hdr "$LAST.hdr" ETag)
check_ne "crc32c zstd: two representations, two ETags" "$e1" "$e2"
if has_hdr "$LAST.hdr" Repr-Digest; then bad "crc32c zstd: no Repr-Digest"; else ok "crc32c zstd: no Repr-Digest"; fi
req "crc32c zstd decoded If-None-Match: 304" 304 -H "If-None-Match: $e1" "$URL/v1/files/zc.zt/objects/y/data"
req "crc32c zstd decoded range" 206 -H "Range: bytes=40000-40099" "$URL/v1/files/zc.zt/objects/y/data"
slice "$T/yc.bin" 40000 100 >"$T/want.bin"
check_same "crc32c zstd decoded range bytes" "$LAST.body" "$T/want.bin"

# ---- the blob URL of a zstd component negotiates too
req "blob of a zstd component: decoded" 200 "$URL/v1/blobs/$DIG"
check_same "blob decoded bytes" "$LAST.body" "$T/z.bin"
check_match "blob decoded: immutable" "$(hdr "$LAST.hdr" Cache-Control)" immutable
req "blob of a zstd component: stored" 200 -H "Accept-Encoding: zstd" "$URL/v1/blobs/$DIG"
check_same "blob stored bytes" "$LAST.body" "$T/stored.bin"

# ---- a raw component ignores Accept-Encoding and has no Vary
req "raw component with Accept-Encoding: zstd" 200 -H "Accept-Encoding: zstd" "$URL/v1/files/mixed.zt/objects/r/data"
check_same "raw component bytes" "$LAST.body" "$T/r.raw"
if has_hdr "$LAST.hdr" Content-Encoding; then bad "raw component: no Content-Encoding"; else ok "raw component: no Content-Encoding"; fi

# ---- concurrent decoded downloads
pids=()
for i in $(seq 1 8); do
    curl -s --max-time 60 "$URL$P" -o "$T/par$i.bin" &
    pids+=($!)
done
wait "${pids[@]}"
allsame=1
for i in $(seq 1 8); do cmp -s "$T/par$i.bin" "$T/z.bin" || allsame=0; done
check_eq "8 concurrent decoded downloads are identical" "$allsame" 1

daemon_alive "daemon still running"
finish
