#!/usr/bin/env bash
# libztensor-remote when things go wrong between it and the origin, with
# relay.py breaking ztensord's (or nginx's) answers on purpose: a flipped
# byte is a digest mismatch; 503/429 with Retry-After are waited out and
# retried; Retry-After beyond max_backoff and endless 503s fail clearly; a
# response that stalls or is cut is resumed from its last byte; a server that
# never answers hits the total timeout; a closed port and a missing file fail
# clearly; a server that ignores Range works for a small file and is refused
# (without reading the body) for a large one.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root"
bash "$(dirname "$0")/../demo/make-demo.sh" "$ZT" "$root" >/dev/null || bad "make-demo.sh"
# 6 MiB: more than the 4 MiB from which digests are hashed on other threads.
rand "$T/big.raw" $((6 * 1024 * 1024))
pack "$root/big.zt" big=u8:$((6 * 1024 * 1024)):"$T/big.raw"
pack "$root/bigz.zt" --compress big=u8:$((6 * 1024 * 1024)):"$T/big.raw"
start_daemon "$root" || rfinish
have_nginx=0
start_nginx "$root" && have_nginx=1
tiny=$root/tiny.zt llama=$root/llama/model-00001.zt
# Quick retries: the waits tested here come from Retry-After.
FAST=(--backoff 0.05 --max-backoff 5)

note "a flipped byte is a digest mismatch"
start_relay "$PORT" flip 2
rexpect "raw sha256 component, one byte flipped" ZT_E_DIGEST_MISMATCH --only embed.weight \
    "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$tiny"
check_match "the message names object, component, offset and URL" "$RMSG" \
    'ZT_E_DIGEST_MISMATCH: the stored bytes received hash to sha256:[0-9a-f]{64}, the manifest says sha256:bc2d9803.* \(object "embed.weight", component "data", byte 64\) \[http://127.0.0.1:[0-9]+/v1/files/tiny.zt/raw\]'
start_relay "$PORT" flip 2
rexpect "zstd crc32c component, one byte flipped: the digest, not the decoder, reports it" \
    ZT_E_DIGEST_MISMATCH --only embed "http://127.0.0.1:$RPORT/v1/files/llama/model-00001.zt" "$llama"
check_match "crc32c in the message" "$RMSG" 'hash to crc32c:0x[0-9A-F]{8}, the manifest says crc32c:'
start_relay "$PORT" flip 2
rexpect "a chunked read (6 MiB in 64 KiB chunks over 4 connections), bytes flipped" \
    ZT_E_DIGEST_MISMATCH --chunk 65536 --connections 4 "http://127.0.0.1:$RPORT/v1/files/big.zt" \
    "$root/big.zt"
if [ $have_nginx = 1 ]; then
    start_relay "$NPORT" flip 2
    rexpect "nginx, one byte flipped" ZT_E_DIGEST_MISMATCH --window 64 --only embed.weight \
        "http://127.0.0.1:$RPORT/tiny.zt" "$tiny"
fi

note "503 and 429 with Retry-After, then success"
start_relay "$PORT" status 2 2 503 1
elapsed rcheck "two 503 with Retry-After: 1, then the read succeeds" "${FAST[@]}" --only embed.weight \
    "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$tiny"
check_match "it waited at least the two seconds asked for (took $SECS s)" "$SECS" '^([2-9]|[1-9][0-9])\.'
check_eq "the relay saw the two 503s and then the same range again" \
    "$(sed -n '3,5p' "$RLOG" | awk -F'|' '{print $2}' | sort -u | wc -l)" 1
start_relay "$PORT" status 2 1 429 1
elapsed rcheck "429 with Retry-After: 1, then success" "${FAST[@]}" --only embed.weight \
    "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$tiny"
check_match "it waited at least one second (took $SECS s)" "$SECS" '^([1-9]|[1-9][0-9])\.'
retry_date=$(date -u -d '+2 seconds' '+%a, %d %b %Y %H:%M:%S GMT')
start_relay "$PORT" status 0 1 503 "$retry_date"
elapsed rcheck "503 on the open with an HTTP-date Retry-After, then success" "${FAST[@]}" \
    --only embed.weight "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$tiny"
check_match "it waited for the date (took $SECS s)" "$SECS" '^([1-9]|[1-9][0-9])\.'
start_relay "$PORT" status 2 1 503 120
elapsed rexpect "Retry-After: 120 with max_backoff 5 fails at once" ZT_E_HTTP "${FAST[@]}" \
    --only embed.weight "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$tiny"
check_match "the message says why" "$RMSG" 'HTTP 503; the server says: relay: made up by relay.py; Retry-After: 120 s is longer than max_backoff \(5 s\)'
check_match "without waiting (took $SECS s)" "$SECS" '^[0-2]\.'
start_relay "$PORT" status 2 100 503 -
rexpect "503 for ever: gives up after the retries" ZT_E_HTTP "${FAST[@]}" --retries 3 \
    --only embed.weight "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$tiny"
check_match "the message counts the attempts and quotes the server" "$RMSG" \
    'HTTP 503; the server says: relay: made up by relay.py; gave up after 4 attempts'
check_eq "4 attempts reached the relay after the open" "$(tail -n +3 "$RLOG" | grep -c ' -> 503')" 4

note "a stalled or cut response resumes from its last byte"
start_relay "$PORT" stall 2 20
elapsed rcheck "stalled half-way for 20 s, stall_timeout 1 s: resumed and complete" --stall 1 \
    "${FAST[@]}" --only embed.weight "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$tiny"
check_match "well before the stall ended (took $SECS s)" "$SECS" '^[1-4]\.'
check_eq "the resumed request starts after the 8192 bytes received" \
    "$(sed -n 4p "$RLOG" | awk -F'|' '{print $2}' | tr -d ' ')" "bytes=8256-16447"
check_eq "with If-Range" "$(sed -n 4p "$RLOG" | awk -F'|' '{print $4}' | grep -c '"')" 1
start_relay "$PORT" cut 2
rcheck "connection cut half-way: resumed and complete" "${FAST[@]}" --only embed.weight \
    "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$tiny"
check_eq "the resumed request starts after the bytes received" \
    "$(sed -n 4p "$RLOG" | awk -F'|' '{print $2}' | tr -d ' ')" "bytes=8256-16447"
start_relay "$PORT" stall 2 20
rcheck "a zstd component decoded as it arrives, stalled half-way and resumed" --stall 1 \
    "${FAST[@]}" "http://127.0.0.1:$RPORT/v1/files/bigz.zt" "$root/bigz.zt"
check_match "the resumed request asks for the rest" \
    "$(sed -n 4p "$RLOG" | awk -F'|' '{print $2}' | tr -d ' ')" '^bytes=[1-4][0-9]{6}-6[0-9]{6}$'
start_relay "$PORT" nofinal 2 20
elapsed rcheck "every byte received but the response never ends: complete at the stall" \
    --stall 1 "${FAST[@]}" --only embed.weight "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$tiny"
check_match "after the stall timeout, not the relay's 20 s (took $SECS s)" "$SECS" '^[1-4]\.'
check_eq "without asking for an empty range" "$(grep -c ' -> 416' "$RLOG")" 0
start_relay "$PORT" stall 3 20
rcheck "a chunked read (64 KiB over 4 connections), one chunk stalled and resumed" --stall 1 \
    "${FAST[@]}" --chunk 65536 --connections 4 "http://127.0.0.1:$RPORT/v1/files/big.zt" \
    "$root/big.zt"

start_relay "$PORT" encoding 2
rexpect "a Content-Encoding not asked for is refused" ZT_E_HTTP --only embed.weight \
    "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$tiny"
check_match "and the message says so" "$RMSG" 'Content-Encoding that was not asked for'

note "timeouts and refusals"
start_relay "$PORT" hang 30
elapsed rexpect "a server that never answers: total timeout 2 s" ZT_E_NETWORK --timeout 2 \
    "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$tiny"
check_match "gave up after about 2 s (took $SECS s)" "$SECS" '^[2-4]\.'
check_match "the message says timeout" "$RMSG" 'total timeout|Timeout|timed out'
stop_relay
closed=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# no server has answered at this address: a wrong address, not a restart; failed at once
# (issue 26 §3), however many retries are allowed and however long the backoff
elapsed rexpect "a closed port: connection refused, not retried, ZT_E_NETWORK" ZT_E_NETWORK \
    --retries 5 --backoff 2 "http://127.0.0.1:$closed/v1/files/tiny.zt" "$tiny"
check_match "the message names the failure and the URL" "$RMSG" \
    "Couldn't connect to server; not retried: no server has answered at this address yet.*\[http://127.0.0.1:$closed/v1/files/tiny.zt/raw\]"
rexpect "a name that does not resolve: not retried" ZT_E_NETWORK \
    --retries 5 --backoff 2 "http://nonexistent.invalid:7070/v1/files/tiny.zt" "$tiny"
check_match "the message says so" "$RMSG" "not retried: no server has answered"
rexpect "a missing file" ZT_E_NOT_FOUND "$URL/v1/files/nope.zt" "$tiny"
rexpect "not a URL this library reads" ZT_E_ARG "ftp://127.0.0.1/tiny.zt" "$tiny"

note "a server that ignores Range"
if [ $have_nginx = 1 ]; then
    rcheck "small file (within the open window): read from the bytes of the open" \
        "http://127.0.0.1:$NPORT/norange/tiny.zt" "$tiny"
    n_before=$(wc -l <"$T/nginx/access.log")
    elapsed rexpect "6 MiB file: refused at open" ZT_E_HTTP "http://127.0.0.1:$NPORT/norange/big.zt" \
        "$root/big.zt"
    check_match "the message says the server ignores Range" "$RMSG" \
        'the server ignores Range requests: it answered 200 with the whole file \(6[0-9]{6} bytes; -1: unknown\), more than the 65536 read at open'
    check_eq "two requests, no retry" "$(($(wc -l <"$T/nginx/access.log") - n_before))" 2
fi
rfinish
