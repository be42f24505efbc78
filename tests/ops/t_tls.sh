#!/bin/bash
# HTTPS: --tls-cert/--tls-key with a self-signed certificate made here by `openssl req`
# (subjectAltName IP:127.0.0.1). curl --cacert fetches components byte-exact (whole, a
# range, several ranges), keeps the connection alive, and uploads; without --cacert curl
# refuses the certificate; plain HTTP to the TLS port gets no HTTP answer; the same
# settings through ZTENSORD_TLS_* work; a missing key, a missing file or a key that does
# not match the certificate stop start-up with a message.
. "$(dirname "$0")/lib.sh" "$@"

need_tool openssl
need_tool curl

# ---- certificates
mkcert() { # NAME
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=IP:127.0.0.1" \
        -keyout "$T/$1.key" -out "$T/$1.crt" >"$T/$1.openssl.log" 2>&1
}
if mkcert srv && mkcert other; then ok "openssl req: self-signed certificates"; else
    bad "openssl req" "$(tail -3 "$T/srv.openssl.log")"
    finish
fi
chmod 600 "$T/srv.key" "$T/other.key"

R=$T/root
mkdir -p "$R"
SIZE=$((8 * 1024 * 1024 + 12345))
rand "$T/w.raw" $SIZE
rand "$T/s.raw" 3000
pack "$R/m.zt" w=u8:$SIZE:"$T/w.raw" s=u8:3000:"$T/s.raw"
pack "$T/up.zt" s=u8:3000:"$T/s.raw"

CURL_TLS=(--cacert "$T/srv.crt")
start_daemon "$R" --tls-cert "$T/srv.crt" --tls-key "$T/srv.key" --allow-anonymous-writes --disk-reserve 0 || finish
check_eq "the log says https" "$SCHEME" https
C="$URL/v1/files/m.zt/objects/w/data"

req "GET component over HTTPS (--cacert)" 200 --cacert "$T/srv.crt" "$C"
check_same "component bytes over HTTPS (8 MiB + 12345)" "$LAST.body" "$T/w.raw"
req "GET a range over HTTPS" 206 --cacert "$T/srv.crt" -r 1000000-1999999 "$C"
slice "$T/w.raw" 1000000 1000000 >"$T/want.range"
check_same "range bytes over HTTPS" "$LAST.body" "$T/want.range"
req "GET two ranges over HTTPS (multipart)" 206 --cacert "$T/srv.crt" -r 0-9,5000000-5000009 "$C"
check_match "multipart Content-Type" "$(hdr "$LAST.hdr" Content-Type)" '^multipart/byteranges'
req "GET /metrics over HTTPS" 200 --cacert "$T/srv.crt" "$URL/metrics"
req "HEAD over HTTPS" 200 --cacert "$T/srv.crt" -I "$C"
check_eq "HEAD Content-Length" "$(hdr "$LAST.hdr" Content-Length)" $SIZE
req "PUT upload over HTTPS" 201 --cacert "$T/srv.crt" -T "$T/up.zt" "$URL/v1/files/up.zt"
req "GET the uploaded component over HTTPS" 200 --cacert "$T/srv.crt" "$URL/v1/files/up.zt/objects/s/data"
check_same "uploaded component bytes" "$LAST.body" "$T/s.raw"

# keep-alive: two requests, one TLS connection
curl -sS -v --cacert "$T/srv.crt" -o "$T/ka1" -o "$T/ka2" "$URL/v1/files/m.zt/objects/s/data" \
    "$URL/v1/files/m.zt/objects/s/data" 2>"$T/ka.err"
check_match "keep-alive over TLS (connection reused)" "$(cat "$T/ka.err")" 'Re-using existing connection|Reusing existing connection'
check_same "keep-alive: second response bytes" "$T/ka2" "$T/s.raw"
check_match "TLS 1.2 or 1.3 negotiated" "$(cat "$T/ka.err")" 'SSL connection using TLSv1\.[23]'

# the certificate is checked: curl without the CA refuses it; with the wrong CA too
http "$T/nocacert" "$URL/healthz"
check_eq "without --cacert curl refuses the certificate (exit 60)" "$CURL_RC" 60
http "$T/wrongca" --cacert "$T/other.crt" "$URL/healthz"
check_eq "with another CA curl refuses the certificate (exit 60)" "$CURL_RC" 60

# plain HTTP to the TLS port: no HTTP answer, and the daemon keeps serving
http "$T/plain" "http://127.0.0.1:$PORT/healthz"
check_eq "plain HTTP to the TLS port gets no HTTP response" "$CODE" 000
check_ne "plain HTTP to the TLS port: curl fails" "$CURL_RC" 0
req "still serving HTTPS after a plain-HTTP client" 200 --cacert "$T/srv.crt" "$URL/healthz"
stop_daemon

# ---- the same through the environment
ZTENSORD_TLS_CERT=$T/srv.crt ZTENSORD_TLS_KEY=$T/srv.key start_daemon "$R" || finish
check_eq "ZTENSORD_TLS_CERT/KEY: https" "$SCHEME" https
req "ZTENSORD_TLS_*: GET component" 200 --cacert "$T/srv.crt" "$URL/v1/files/m.zt/objects/s/data"
check_same "ZTENSORD_TLS_*: bytes" "$LAST.body" "$T/s.raw"
stop_daemon

# ---- broken configurations stop start-up with a message
bad_start() { # NAME WANT-REGEX FLAGS...
    local name=$1 re=$2
    shift 2
    timeout 20 "$ZTENSORD" --root "$R" --listen 127.0.0.1:0 --access-log off "$@" >/dev/null 2>"$T/bad.err"
    local rc=$?
    check_ne "$name: does not start (exit status $rc)" "$rc" 0
    check_ne "$name: not killed by the timeout" "$rc" 124
    check_match "$name: says why" "$(cat "$T/bad.err")" "$re"
}
bad_start "certificate without key" 'tls_cert and tls_key|tls' --tls-cert "$T/srv.crt"
bad_start "key without certificate" 'tls_cert and tls_key|tls' --tls-key "$T/srv.key"
bad_start "missing certificate file" 'cannot read|No such file' --tls-cert "$T/nope.crt" --tls-key "$T/srv.key"
bad_start "key of another certificate" 'TLS|tls|certificate' --tls-cert "$T/srv.crt" --tls-key "$T/other.key"
finish
