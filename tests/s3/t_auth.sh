#!/bin/bash
# The S3 front with --s3-keys (docs/S3.md "Authentication and payloads"):
# boto3 and aws-cli signed with a write and a read key, a wrong secret, an
# unknown key, presigned GET and PUT (good, expired, tampered), clock skew,
# anonymous reads; a bad keys file or mode stops the start. Then aws-chunked
# bodies over TLS: boto3's default PutObject and multipart upload and the
# AWS SDK for JavaScript's stream PutObject byte-exact; hand-made bodies
# with a flipped byte, a wrong checksum, a cut or a wrong decoded length,
# and signed streaming bodies (a flipped byte; with a signed trailer, a
# wrong checksum or a tampered trailer signature), each publishing nothing
# and leaving no staging file.
. "$(dirname "$0")/lib.sh" "$@"
need_s3py
need_tool openssl

ROOT=$T/root
make_tree "$ROOT"
mkdir -p "$ROOT/up"
KEYS=$T/s3keys
printf '# scope key secret\nwrite AKWRITE secret-write-1\nread AKREAD secret-read-1\n' >"$KEYS"

# ---- start-up refusals
bad_start() { # NAME WANT-REGEX FLAGS...
    local name=$1 re=$2
    shift 2
    timeout 20 "$ZTENSORD" --root "$ROOT" --listen 127.0.0.1:0 --access-log off "$@" >/dev/null 2>"$T/bad.err"
    local rc=$?
    check_ne "$name: does not start (exit status $rc)" "$rc" 0
    check_ne "$name: not killed by the timeout" "$rc" 124
    check_match "$name: says why" "$(cat "$T/bad.err")" "$re"
    check_nomatch "$name: quotes no secret" "$(cat "$T/bad.err")" 'secret-'
}
chmod 0644 "$KEYS"
bad_start "a keys file readable by others" 's3_keys.*(mode|0600|permission)' --s3-keys "$KEYS"
chmod 0600 "$KEYS"
printf 'write AKX secret-no-1\nwrite AKX secret-no-2\n' >"$T/badkeys"
chmod 0600 "$T/badkeys"
bad_start "a keys file with a key id twice" 's3_keys.*line 2' --s3-keys "$T/badkeys"
bad_start "a missing keys file" 's3_keys.*(No such file|cannot)' --s3-keys "$T/nokeys"

# ---- signatures (plain HTTP)
start_daemon "$ROOT" --s3-keys "$KEYS" || finish
check_nomatch "no secret in the log" "$(cat "$D_ERR")" 'secret-write-1|secret-read-1'
s3py_checks auth keys "$URL" "$ROOT"
AWS=(aws --endpoint-url "$URL")
AWS_ACCESS_KEY_ID=AKWRITE AWS_SECRET_ACCESS_KEY=secret-write-1 "${AWS[@]}" s3 cp \
    "$ROOT/llm/shards/model-00001.safetensors" s3://models/up/cli.safetensors >"$T/cp.out" 2>&1
check_same "aws s3 cp up with the write key" "$ROOT/up/cli.safetensors" "$ROOT/llm/shards/model-00001.safetensors"
AWS_ACCESS_KEY_ID=AKREAD AWS_SECRET_ACCESS_KEY=secret-read-1 "${AWS[@]}" s3 cp \
    s3://models/a.safetensors "$T/cli.down" >"$T/cpd.out" 2>&1
check_same "aws s3 cp down with the read key" "$T/cli.down" "$ROOT/a.safetensors"
out=$(AWS_ACCESS_KEY_ID=AKREAD AWS_SECRET_ACCESS_KEY=secret-read-1 "${AWS[@]}" s3 cp \
    "$ROOT/a.safetensors" s3://models/up/cli-r.safetensors 2>&1)
check_match "aws s3 cp up with the read key: AccessDenied" "$out" 'AccessDenied'
out=$(AWS_ACCESS_KEY_ID=AKREAD AWS_SECRET_ACCESS_KEY=wrong-secret "${AWS[@]}" s3 ls s3://models/ 2>&1)
check_match "aws s3 ls with a wrong secret: SignatureDoesNotMatch" "$out" 'SignatureDoesNotMatch'
check "nothing staged is left" test -z "$(find "$ROOT/.ztensord-staging" -type f 2>/dev/null)"
check_nomatch "no secret in the log after the checks" "$(cat "$D_ERR")" 'secret-write-1|secret-read-1'
stop_daemon

# ---- aws-chunked payloads over TLS (boto3 sends them by default over https)
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
    -keyout "$T/tls.key" -out "$T/tls.crt" >"$T/openssl.log" 2>&1
CURL_TLS=(--cacert "$T/tls.crt")
start_daemon "$ROOT" --s3-keys "$KEYS" --tls-cert "$T/tls.crt" --tls-key "$T/tls.key" || finish
s3py_checks auth chunked "$URL" "$ROOT"
MODS=$REPO/tests/clients/node_modules
if [ -d "$MODS/@aws-sdk/client-s3" ] && command -v node >/dev/null; then
    out=$(NODE_TLS_REJECT_UNAUTHORIZED=0 node "$S3_DIR/js_chunked.cjs" "$MODS" "$URL" \
        "$ROOT/llm/model.safetensors" AKWRITE secret-write-1 2>/dev/null)
    check_match "js: a stream goes as aws-chunked" "$out" 'ok js: the stream went as aws-chunked'
    check_match "js: its aws-chunked PutObject reads back byte for byte" "$out" 'ok js: aws-chunked PutObject read back'
    check_same "js: the published file" "$ROOT/js/stream.safetensors" "$ROOT/llm/model.safetensors"
else
    bad "@aws-sdk/client-s3 in tests/clients/node_modules" "run npm ci in tests/clients (.ci/deps)"
fi
check "no staging file is left" test -z "$(find "$ROOT/.ztensord-staging" -type f 2>/dev/null)"
check_nomatch "no secret in the TLS daemon's log" "$(cat "$D_ERR")" 'secret-write-1|secret-read-1'
finish
