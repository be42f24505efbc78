#!/usr/bin/env bash
# t_decode.sh: zstd components decoded for clients that do not accept zstd
# (issue 10, points 7 and 8). Files placed in the root with their stored zstd
# frame damaged in place (a block of the reserved type, a last-block flag set
# too early, a frame header asking for a 128 MiB window) must give a clean 5xx
# before any byte, or a connection closed at once when the damage shows only
# midway; never a 200 or 206 left hanging until connection_timeout (60 s here,
# so that a stall shows). A component that failed once is refused up front
# afterwards. Past max_decode_streams a request is answered 503 with
# Retry-After. The copy path (TLS) closes at once too when its first read
# fails on a file cut short in place.
. "$(dirname "$0")/lib.sh" "$@"
edit() { $PY "$HOSTILE_DIR/zstdedit.py" "$@" >/dev/null; }

R=$T/root
mkdir -p "$R"
text "$T/w.bin" 4194304 # 4 MiB of base64 text: 32 full 128 KiB blocks
text "$T/big.bin" 16777216
pack "$R/good.zt" --compress "w=u8:4194304:$T/w.bin" || exit 1
pack "$R/big.zt" --compress "w=u8:16777216:$T/big.bin" || exit 1
"$ZT" info --json "$R/good.zt" >"$T/info.json"
OFF=$(jget "$T/info.json" objects w components data offset)
LEN=$(jget "$T/info.json" objects w components data length)
for n in corrupt corrupt2 corrupt3 short window window2; do cp "$R/good.zt" "$R/$n.zt"; done
# Block 16 decodes to bytes 2097152-2228223.
check "damage: reserved block type" edit "$R/corrupt.zt" "$OFF" "$LEN" reserved 16
check "damage: reserved block type (2)" edit "$R/corrupt2.zt" "$OFF" "$LEN" reserved 16
check "damage: reserved block type (3)" edit "$R/corrupt3.zt" "$OFF" "$LEN" reserved 16
check "damage: frame ends after block 16" edit "$R/short.zt" "$OFF" "$LEN" last 16
check "damage: 128 MiB window" edit "$R/window.zt" "$OFF" "$LEN" window 27
check "damage: 128 MiB window (2)" edit "$R/window2.zt" "$OFF" "$LEN" window 27

# The damaged files also fail their digests: the verifier's verdict would turn
# their requests into 500 digest_mismatch (t_corrupt.sh tests that) whenever it
# came in first. This test is about decoding, so their bytes are served.
start_daemon "$R" --connection-timeout 60s --max-decode-streams 2 --serve-corrupt || exit 1
C=/objects/w/data

# tget CURL-ARGS...: a request into $T/r, at most 10 s; sets CODE, CURL_RC, MS (elapsed).
tget() {
    local t0
    t0=$(date +%s%N)
    LAST=$T/r
    http "$LAST" --max-time 10 "$@"
    MS=$((($(date +%s%N) - t0) / 1000000))
}
fast() {
    if [ "$MS" -lt 2000 ]; then ok "$1: over in ${MS} ms"; else bad "$1" "took ${MS} ms (curl rc $CURL_RC)"; fi
}

note "damage seen only midway: the connection closes at once"
tget -r 1000000-2999999 "$URL/v1/files/corrupt.zt$C"
check_code "corrupt, range over the damage: 206 sent" 206
check_eq "corrupt, range over the damage: curl sees the body cut short (rc 18)" "$CURL_RC" 18
fast "corrupt, range over the damage"
check "corrupt: the body stops before the damage" test "$(stat -c %s "$T/r.body")" -le 1097152
check_match "corrupt: the error log names file, decoded offset, object, component" \
    "$(cat "$D_ERR")" 'decoding \\"corrupt.zt\\" failed after [0-9]+ decoded bytes.*object \\"w\\", component \\"data\\"'

note "the next requests get the clear error up front"
for range in 0-99 ""; do
    tget ${range:+-r $range} "$URL/v1/files/corrupt.zt$C"
    check_code "corrupt, after the failure, range '$range': 500" 500
    check_errbody "corrupt, after the failure, range '$range'" component_corrupt
    fast "corrupt, after the failure, range '$range'"
done
tget -I "$URL/v1/files/corrupt.zt$C"
check_code "corrupt, HEAD after the failure: 500" 500

note "damage found before the first byte: a clean 5xx"
# The range starts past the damage: decoding up to it fails before the response.
tget -r 2500000-2599999 "$URL/v1/files/corrupt2.zt$C"
check_code "corrupt, range past the damage: 500" 500
check_errbody "corrupt, range past the damage" component_corrupt
fast "corrupt, range past the damage"
# A span to the end: the frame walk finds the block before anything is sent.
tget -r 3000000- "$URL/v1/files/corrupt3.zt$C"
check_code "corrupt, range to the end: 500" 500
check_errbody "corrupt, range to the end" component_corrupt
fast "corrupt, range to the end"
tget "$URL/v1/files/short.zt$C"
check_code "frame shorter than declared, whole: 500" 500
check_errbody "frame shorter than declared" component_corrupt
fast "frame shorter than declared"
check_match "frame shorter than declared: the message names object, component, byte" \
    "$ERRMSG" 'object "w", component "data", byte [0-9]+'
tget -H 'Accept-Encoding: zstd' "$URL/v1/files/short.zt$C"
check_code "frame shorter than declared, stored bytes: 200" 200
dd if="$R/short.zt" of="$T/stored" bs=1 skip="$OFF" count="$LEN" status=none
check_same "frame shorter than declared: the stored bytes as they are" "$T/r.body" "$T/stored"

note "a frame asking for a window over 8 MiB is refused"
tget -r 0-99 "$URL/v1/files/window.zt$C"
check_code "128 MiB window, first bytes (the decoder): 500" 500
check_errbody "128 MiB window, first bytes" component_window_too_large
tget "$URL/v1/files/window2.zt$C"
check_code "128 MiB window, whole (the frame walk): 500" 500
check_errbody "128 MiB window, whole" component_window_too_large
fast "128 MiB window"

note "an intact file decodes"
tget "$URL/v1/files/good.zt$C"
check_code "intact: 200" 200
check_same "intact: the decoded bytes" "$T/r.body" "$T/w.bin"
tget -r 3000000-3000099 "$URL/v1/files/good.zt$C"
check_code "intact, range: 206" 206
check_eq "intact, range: bytes" "$(od -An -tx1 "$T/r.body" | tr -d ' \n')" \
    "$(dd if="$T/w.bin" bs=1 skip=3000000 count=100 status=none | od -An -tx1 | tr -d ' \n')"

note "max_decode_streams 2: two held decoders, then a third request"
rm -f "$T/ready"
bg_start $PY "$SH_DIR/holdget.py" "$PORT" "/v1/files/big.zt$C" 2 30 "$T/ready"
for i in $(seq 1 100); do [ -s "$T/ready" ] && break; sleep 0.1; done
check_eq "two decoded responses started" "$(cat "$T/ready" 2>/dev/null)" "200 200"
tget "$URL/v1/files/good.zt$C"
check_code "third decoder: 503" 503
check_errbody "third decoder" too_many_decoders
check_eq "third decoder: Retry-After" "$(hdr "$T/r.hdr" Retry-After)" 1
fast "third decoder"
tget -H 'Accept-Encoding: zstd' "$URL/v1/files/good.zt$C"
check_code "stored bytes need no decoder: 200" 200
bg_kill
code=
for i in $(seq 1 50); do
    code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$URL/v1/files/good.zt$C")
    [ "$code" = 200 ] && break
    sleep 0.1
done
check_eq "the slots come back when the holders go" "$code" 200

daemon_alive "daemon alive after all this"
stop_daemon

note "under TLS, file spans are copied through a buffer: a first read that fails closes at once"
# A 16 KiB component is not checked against the file's size before the
# response (only spans over 64 KiB are); cut short in place, with no rescan
# (--no-watch), the response's very first read fails.
mkdir -p "$T/tls"
rand "$T/r16k" 16384
pack "$T/tls/small.zt" "s=u8:16384:$T/r16k" || exit 1
if openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 2 \
    -subj /CN=127.0.0.1 >/dev/null 2>&1; then
    D_N=$((D_N + 1))
    D_ERR=$T/daemon$D_N.err
    "$ZTENSORD" --root "$T/tls" --listen 127.0.0.1:0 --access-log off --no-watch \
        --connection-timeout 60s --tls-cert "$T/cert.pem" --tls-key "$T/key.pem" 2>"$D_ERR" &
    D_PID=$!
    PORT=
    for i in $(seq 1 300); do
        PORT=$(sed -n 's/.*listening on https:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$D_ERR" | tail -1)
        [ -n "$PORT" ] && [ "$(curl -ks --max-time 2 -o /dev/null -w '%{http_code}' "https://127.0.0.1:$PORT/readyz")" = 200 ] && break
        sleep 0.1
    done
    check "TLS daemon ready" test -n "$PORT"
    truncate -s 64 "$T/tls/small.zt"
    tget -k "https://127.0.0.1:$PORT/v1/files/small.zt/objects/s/data"
    check_eq "TLS, file cut short in place: the body is cut (curl rc 18)" "$CURL_RC" 18
    fast "TLS, file cut short in place"
    daemon_alive "TLS daemon alive"
else
    skip "TLS, file cut short in place" "openssl cannot make a certificate"
fi
finish
