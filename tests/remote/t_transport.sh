#!/usr/bin/env bash
# libztensor-remote's transport options against ztensord: HTTPS with a CA
# file (a self-signed certificate made here by `openssl req`), a certificate
# that does not verify (refused at once, no retries), --insecure; bearer
# tokens with --require-read-token (none, unknown, a read token, over HTTPS
# too, through `zt info` with ZT_REMOTE_TOKEN); a token that cannot go in a
# header is refused before any request.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root"
bash "$(dirname "$0")/../demo/make-demo.sh" "$ZT" "$root" >/dev/null || bad "make-demo.sh"
tiny=$root/tiny.zt llama=$root/llama/model-00001.zt

if ! openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$T/srv.key" -out "$T/srv.crt" \
    >"$T/openssl.log" 2>&1; then
    bad "openssl req" "$(tail -3 "$T/openssl.log")"
    rfinish
fi
chmod 600 "$T/srv.key"
printf 'read  r3ad-t0ken-for-remote-tests\nwrite wr1te-t0ken-for-remote-tests\n' >"$T/tokens"

# start_tls_daemon ROOT FLAGS...: start_daemon for "listening on https://".
start_tls_daemon() {
    local r=$1 i
    shift
    D_N=$((D_N + 1))
    D_ERR=$T/daemon$D_N.err
    "$ZTENSORD" --root "$r" --listen 127.0.0.1:0 --access-log off "$@" 2>"$D_ERR" &
    D_PID=$!
    PORT=
    for i in $(seq 1 300); do
        PORT=$(sed -n 's/.*listening on https:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$D_ERR" | tail -1)
        [ -n "$PORT" ] && break
        kill -0 "$D_PID" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$PORT" ] || { bad "TLS daemon starts" "$(head -c 400 "$D_ERR")"; return 1; }
    URL=https://127.0.0.1:$PORT
    for i in $(seq 1 100); do
        [ "$(curl -s --cacert "$T/srv.crt" -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ] &&
            return 0
        sleep 0.1
    done
    bad "TLS daemon ready"
    return 1
}

note "HTTPS"
start_tls_daemon "$root" --tls-cert "$T/srv.crt" --tls-key "$T/srv.key" || rfinish
rcheck "HTTPS with the CA file" --cacert "$T/srv.crt" "$URL/v1/files/tiny.zt" "$tiny"
rcheck "HTTPS, zstd file, 4 connections" --cacert "$T/srv.crt" --connections 4 \
    "$URL/v1/files/llama/model-00001.zt" "$llama"
elapsed rexpect "HTTPS without the CA file: the certificate does not verify" ZT_E_NETWORK \
    "$URL/v1/files/tiny.zt" "$tiny"
check_match "the message says so" "$RMSG" 'certificate|SSL'
check_match "at once, without retries (took $SECS s)" "$SECS" '^[01]\.'
rcheck "HTTPS --insecure" --insecure "$URL/v1/files/tiny.zt" "$tiny"
ZT_REMOTE_CA_FILE=$T/srv.crt "$ZT" info "$URL/v1/files/tiny.zt" >"$T/info.out" 2>&1
check_eq "zt info over HTTPS with ZT_REMOTE_CA_FILE" "$?" 0
stop_daemon

note "bearer tokens"
start_daemon "$root" --tokens-file "$T/tokens" --require-read-token || rfinish
rexpect "no token: 401" ZT_E_HTTP "$URL/v1/files/tiny.zt" "$tiny"
check_match "the message quotes the server" "$RMSG" 'HTTP 401; the server says: unauthorized: a bearer token is required'
rexpect "an unknown token: 401" ZT_E_HTTP --token not-a-known-token-at-all "$URL/v1/files/tiny.zt" "$tiny"
check_match "the message quotes the server" "$RMSG" 'unknown bearer token'
check_nomatch "and does not contain the token" "$RMSG" 'not-a-known-token-at-all'
rcheck "a read token" --token r3ad-t0ken-for-remote-tests "$URL/v1/files/llama/model-00001.zt" "$llama"
ZT_REMOTE_TOKEN=r3ad-t0ken-for-remote-tests "$ZT" info "$URL/v1/files/tiny.zt" >"$T/info.out" 2>&1
check_eq "zt info with ZT_REMOTE_TOKEN" "$?" 0
"$ZT" info "$URL/v1/files/tiny.zt" >"$T/info.out" 2>&1
check_eq "zt info without a token: exit 3" "$?" 3
rexpect "a token with a space cannot go in a header" ZT_E_ARG --token "two words" \
    "$URL/v1/files/tiny.zt" "$tiny"
rexpect "nor one with a line break" ZT_E_ARG --token "$(printf 'a\r\nX-Evil: 1')" \
    "$URL/v1/files/tiny.zt" "$tiny"
stop_daemon

start_tls_daemon "$root" --tls-cert "$T/srv.crt" --tls-key "$T/srv.key" --tokens-file "$T/tokens" \
    --require-read-token || rfinish
rcheck "a token over HTTPS" --cacert "$T/srv.crt" --token r3ad-t0ken-for-remote-tests \
    "$URL/v1/files/tiny.zt" "$tiny"
rfinish
