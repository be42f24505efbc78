#!/bin/bash
# Shared answers: once a small raw component's sha256 is verified, its 200 answer (by name,
# and by blob URL with its own Cache-Control) is built once, by its second request (one
# asked for once, as by a loader reading a model tensor by tensor, keeps no copy), and
# shared by every request
# that sends no X-Request-Id of its own; ztensord_shared_response_bytes counts their copies
# against shared_response_memory. Whatever the sharing, every answer is the one a request
# would get alone: the bytes, ETag, Repr-Digest, X-Ztensor-* headers; HEAD, Range,
# If-None-Match and a client's X-Request-Id are answered apart; a replaced file gets new
# answers; past the memory bound (or with 0) answers are built per request, just as right.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/a.raw" 4096
rand "$T/b.raw" 4000
rand "$T/big.raw" 70000 # over 64 KiB: never shared
pack "$R/m.zt" a=u8:4096:"$T/a.raw" b=u8:4000:"$T/b.raw" big=u8:70000:"$T/big.raw"
start_daemon "$R" || finish
M=$URL/v1/files/m.zt
shared_used() { curl -s "$URL/metrics" | awk '$1 == "ztensord_shared_response_bytes{state=\"used\"}" { print $2 }'; }
shared_limit() { curl -s "$URL/metrics" | awk '$1 == "ztensord_shared_response_bytes{state=\"limit\"}" { print $2 }'; }

check_eq "metrics: nothing shared before any request" "$(shared_used)" 0
check_eq "metrics: the default limit, 64 MiB" "$(shared_limit)" $((64 << 20))

# asked for once (a loader reads each tensor once): answered from the file, no copy
SHA_B=$(sha256sum "$T/b.raw" | cut -d' ' -f1)
http "$T/once" "$URL/v1/blobs/sha256:$SHA_B"
check_code "once by blob: 200" 200
check "once by blob: the bytes" cmp -s "$T/once.body" "$T/b.raw"
# requests that cannot take a shared answer do not count as asking for it
req "b: a range first" 206 -r 0-99 "$M/objects/b/data"
req "b: with a client id first" 200 -H 'X-Request-Id: first-1' "$M/objects/b/data"
http "$T/once" "$M/objects/b/data"
check_code "once by name: 200" 200
check "once by name: the bytes" cmp -s "$T/once.body" "$T/b.raw"
check_eq "metrics: a component asked for once by name (after a range and a client id) and once by blob keeps no copy" \
    "$(shared_used)" 0

SHA_A=$(sha256sum "$T/a.raw" | cut -d' ' -f1)
B64_A=$(openssl dgst -sha256 -binary "$T/a.raw" | base64)
# same_answer NAME PREFIX: PREFIX.body is a.raw and PREFIX.hdr has a's headers
same_answer() {
    check "$1: the bytes" cmp -s "$2.body" "$T/a.raw"
    check_eq "$1: ETag" "$(hdr "$2.hdr" ETag)" "\"sha256:$SHA_A\""
    check_eq "$1: Repr-Digest" "$(hdr "$2.hdr" Repr-Digest)" "sha-256=:$B64_A:"
    check_eq "$1: X-Ztensor-Shape" "$(hdr "$2.hdr" X-Ztensor-Shape)" 4096
    check_eq "$1: X-Ztensor-Dtype" "$(hdr "$2.hdr" X-Ztensor-Dtype)" u8
    check_eq "$1: Content-Type" "$(hdr "$2.hdr" Content-Type)" application/octet-stream
    check_eq "$1: Content-Length" "$(hdr "$2.hdr" Content-Length)" 4096
    check_match "$1: Server" "$(hdr "$2.hdr" Server)" '^ztensord/'
}
for i in 1 2 3; do
    http "$T/a$i" "$M/objects/a/data"
    check_code "by name $i: 200" 200
    same_answer "by name $i" "$T/a$i"
    check_eq "by name $i: no X-Request-Id" "$(hdr "$T/a$i.hdr" X-Request-Id)" ""
done
check_eq "by name: the same headers each time" "$(headers_no_date "$T/a3.hdr")" \
    "$(headers_no_date "$T/a1.hdr")"
check_eq "by name: the first answer (from the file) has the shared one's headers" \
    "$(headers_no_date "$T/a2.hdr")" "$(headers_no_date "$T/a1.hdr")"
check_eq "metrics: one 4096-byte copy shared" "$(shared_used)" 4096
check_nomatch "by name: not immutable" "$(hdr "$T/a1.hdr" Cache-Control)" immutable

http "$T/blob" "$URL/v1/blobs/sha256:$SHA_A"
check_code "by blob: 200" 200
same_answer "by blob" "$T/blob"
check_eq "metrics: by blob once: no copy yet" "$(shared_used)" 4096
check_match "by blob: immutable" "$(hdr "$T/blob.hdr" Cache-Control)" immutable
http "$T/blob2" "$URL/v1/blobs/sha256:$SHA_A"
check_match "by blob again: immutable" "$(hdr "$T/blob2.hdr" Cache-Control)" immutable
http "$T/a4" "$M/objects/a/data"
check_nomatch "by name after the blob: still not immutable" "$(hdr "$T/a4.hdr" Cache-Control)" \
    immutable
check_eq "metrics: one copy by name, one by blob" "$(shared_used)" 8192

# what is answered apart
head_req "HEAD" 200 /v1/files/m.zt/objects/a/data
check_eq "HEAD: Content-Length" "$(hdr "$T/r.hdr" Content-Length)" 4096
check_eq "HEAD: the ETag" "$(hdr "$T/r.hdr" ETag)" "\"sha256:$SHA_A\""
req "range" 206 -r 100-199 "$M/objects/a/data"
check "range: the bytes" cmp -s "$T/r.body" <(slice "$T/a.raw" 100 100)
check_eq "range: Content-Range" "$(hdr "$T/r.hdr" Content-Range)" "bytes 100-199/4096"
req "If-None-Match" 304 -H "If-None-Match: \"sha256:$SHA_A\"" "$M/objects/a/data"
req "If-None-Match, another tag" 200 -H 'If-None-Match: "x"' "$M/objects/a/data"
same_answer "If-None-Match, another tag" "$T/r"
req "client id" 200 -H 'X-Request-Id: shared-1' "$M/objects/a/data"
same_answer "client id" "$T/r"
check_eq "client id: echoed" "$(hdr "$T/r.hdr" X-Request-Id)" shared-1
req "over 64 KiB" 200 "$M/objects/big/data"
check "over 64 KiB: the bytes" cmp -s "$T/r.body" "$T/big.raw"
check_eq "metrics: nothing shared for the large one" "$(shared_used)" 8192

# 64 requests at once, on 8 connections: every answer whole
pids=()
for j in $(seq 8); do
    (for k in $(seq 8); do echo "url = \"$M/objects/b/data\""; echo "output = \"$T/c$j.$k\""; done) \
        >"$T/k$j.cfg"
    curl -s --max-time 60 -K "$T/k$j.cfg" &
    pids+=($!)
done
wait "${pids[@]}"
bad_n=0
for j in $(seq 8); do for k in $(seq 8); do cmp -s "$T/c$j.$k" "$T/b.raw" || bad_n=$((bad_n + 1)); done; done
check_eq "64 concurrent requests: every body right" "$bad_n" 0
check_eq "metrics: b's copy counted once" "$(shared_used)" $((8192 + 4000))

# a replaced file: new answers, and the old copies given back
rand "$T/a2.raw" 4096
pack "$T/m2.zt" a=u8:4096:"$T/a2.raw"
mv "$T/m2.zt" "$R/m.zt"
# served PATH FILE: wait (10 s at most) until PATH of m.zt answers FILE's bytes, into $T/new
served() {
    local i
    for i in $(seq 100); do
        http "$T/new" "$M/$1"
        cmp -s "$T/new.body" "$2" && return 0
        sleep 0.1
    done
    return 1
}
check "replaced: the new bytes" served objects/a/data "$T/a2.raw"
wait_verified
for i in 1 2; do
    http "$T/new$i" "$M/objects/a/data"
    check "replaced, verified $i: the new bytes" cmp -s "$T/new$i.body" "$T/a2.raw"
    check_eq "replaced, verified $i: the new ETag" "$(hdr "$T/new$i.hdr" ETag)" \
        "\"sha256:$(sha256sum "$T/a2.raw" | cut -d' ' -f1)\""
done
check_eq "replaced: only the new version's copy is held" "$(shared_used)" 4096
stop_daemon

# a bound of 5000 bytes: the first copy fits, the second does not and is built per request
start_daemon "$R" --shared-response-memory 5000 || finish
M=$URL/v1/files/m.zt
pack "$T/m3.zt" a=u8:4096:"$T/a.raw" b=u8:4000:"$T/b.raw"
mv "$T/m3.zt" "$R/m.zt"
check "bounded: the new file is served" served objects/b/data "$T/b.raw"
wait_verified
for i in 1 2; do
    req "bounded: a $i" 200 "$M/objects/a/data"
    same_answer "bounded: a $i" "$T/r"
    req "bounded: b $i" 200 "$M/objects/b/data"
    check "bounded: b $i: the bytes" cmp -s "$T/r.body" "$T/b.raw"
done
check_eq "bounded: the limit" "$(shared_limit)" 5000
check_match "bounded: one copy held (a's or b's, whichever came first), not both" \
    "$(shared_used)" '^(4096|4000)$'
stop_daemon

start_daemon "$R" --shared-response-memory 0 || finish
M=$URL/v1/files/m.zt
for i in 1 2; do
    req "off: a $i" 200 "$M/objects/a/data"
    same_answer "off: a $i" "$T/r"
done
check_eq "off: nothing shared" "$(shared_used)" 0
finish
