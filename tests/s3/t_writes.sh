#!/bin/bash
# The S3 front's writes (docs/S3.md): PutObject through the same staging,
# validation and atomic publish as PUT /v1/files, with Content-MD5 and
# x-amz-checksum-* verified before publish; refusals leave nothing
# published and no staging file; DeleteObject, DeleteObjects (and a bad
# document); aws-chunked payloads (unsigned decoded; signed ones need
# --s3-keys, tests/s3/t_auth.sh); multipart uploads (boto3, aws-cli, s3cmd) and their
# refusals; writes refused without write rights; aws-cli, rclone, s3cmd and
# the AWS SDK for JavaScript (PutObject, multipart) uploads. Writes are allowed by --allow-anonymous-writes (no tokens
# file, no --s3-keys: AWS signatures are not checked).
. "$(dirname "$0")/lib.sh" "$@"
need_s3py
need_tool rclone
need_tool s3cmd

ROOT=$T/root
make_tree "$ROOT"
mkdir -p "$ROOT/up"
start_daemon "$ROOT" --s3-bucket models --s3-bucket llm=llm --allow-anonymous-writes || finish
s3py_checks writes "$URL" "$ROOT"
st "$T/big.safetensors" $((3 * 1024 * 1024 + 512 * 1024)) # 14 MiB: three 5 MiB parts
s3py_checks multipart "$URL" "$ROOT" "$T/big.safetensors"
s3py_checks in_place "$URL" "$ROOT" "$T/big.safetensors"
check_eq "Completes that wrote the parts in place (out of order; after a refusal)" \
    "$(grep -E 'CompleteMultipartUpload published ip/(backwards|subset|refused)' "$D_ERR" | grep -c 'written in place')" 2
check_eq "Completes that copied (a part sent again, parts of two sizes)" \
    "$(grep -E 'CompleteMultipartUpload published ip/(refused|sizes)' "$D_ERR" | grep -c 'copied')" 2
# boto3 over https sends each part aws-chunked inside HTTP/1.1 chunked (no
# Content-Length; the part's length in x-amz-decoded-content-length, which the
# decoder holds it to): parts of one size go in place all the same
P=$URL/models/ip/tchunked.safetensors
http "$T/r" -X POST "$P?uploads"
uid=$(sed -n 's/.*<UploadId>\([0-9a-f]*\)<.*/\1/p' "$T/r.body")
split -b $((5 << 20)) -d -a 1 "$T/big.safetensors" "$T/tc."
doc= codes=
for n in 1 2 3; do # 5 MiB, 5 MiB, the rest
    f=$T/tc.$((n - 1))
    c=$($PY -c 'import base64, sys, zlib; print(base64.b64encode(zlib.crc32(open(sys.argv[1], "rb").read()).to_bytes(4, "big")).decode())' "$f")
    { printf '%x\r\n' "$(stat -c %s "$f")"; cat "$f"; printf '\r\n0\r\nx-amz-checksum-crc32:%s\r\n\r\n' "$c"; } >"$f.awsc"
    http "$T/r" -X PUT -T "$f.awsc" -H 'Transfer-Encoding: chunked' -H 'Content-Encoding: aws-chunked' \
        -H 'x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER' -H 'x-amz-trailer: x-amz-checksum-crc32' \
        -H "x-amz-decoded-content-length: $(stat -c %s "$f")" "$P?partNumber=$n&uploadId=$uid"
    codes="$codes$CODE "
    doc="$doc<Part><PartNumber>$n</PartNumber><ETag>$(hdr "$T/r.hdr" ETag)</ETag></Part>"
done
check_eq "aws-chunked parts in HTTP chunked (boto3 over https): UploadPart" "$codes" "200 200 200 "
http "$T/r" -X POST --data-binary "<CompleteMultipartUpload>$doc</CompleteMultipartUpload>" "$P?uploadId=$uid"
check_eq "aws-chunked parts in HTTP chunked: Complete, the bytes" \
    "$CODE $(cmp -s "$ROOT/ip/tchunked.safetensors" "$T/big.safetensors" && echo same)" "200 same"
check_eq "aws-chunked parts in HTTP chunked: written in place (Complete copies nothing)" \
    "$(grep 'CompleteMultipartUpload published ip/tchunked.safetensors' "$D_ERR" | grep -c 'written in place')" 1
http "$T/r" -X PUT --data-binary x "$URL/models/mp/x.safetensors?partNumber=10001&uploadId=00000000000000000000000000000000"
check_match "UploadPart number 10001: InvalidArgument" "$CODE $(tr -d '\n' <"$T/r.body")" '^400 .*<Code>InvalidArgument</Code>'

# UploadPart checks the client's checksums of a plain body as PutObject does
# (x-amz-checksum-crc32, -sha256, a hex x-amz-content-sha256, Content-MD5),
# keeps no refused part, and answers the part's MD5 as ETag unless the
# client checks the part with a checksum of its own
P=$URL/models/mp/sums.safetensors
http "$T/r" -X POST "$P?uploads"
uid=$(sed -n 's/.*<UploadId>\([0-9a-f]*\)<.*/\1/p' "$T/r.body")
head -c 100000 /dev/urandom >"$T/part.bin"
md5=$(md5sum <"$T/part.bin" | cut -c1-32)
sha=$(sha256sum <"$T/part.bin" | cut -c1-64)
crc=$($PY -c 'import base64, sys, zlib; print(base64.b64encode(zlib.crc32(open(sys.argv[1], "rb").read()).to_bytes(4, "big")).decode())' "$T/part.bin")
part() { http "$T/r" -X PUT --data-binary @"$T/part.bin" "$@" "$P?partNumber=$n&uploadId=$uid"; }
n=1 part -H 'x-amz-checksum-crc32: AAAAAA=='
check_match "UploadPart with a wrong x-amz-checksum-crc32: BadDigest" "$CODE $(tr -d '\n' <"$T/r.body")" '^400 .*<Code>BadDigest</Code>'
n=2 part -H "x-amz-content-sha256: $(printf x | sha256sum | cut -c1-64)"
check_match "UploadPart with a wrong x-amz-content-sha256: XAmzContentSHA256Mismatch" "$CODE $(tr -d '\n' <"$T/r.body")" '^400 .*<Code>XAmzContentSHA256Mismatch</Code>'
n=3 part -H 'x-amz-checksum-sha256: 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='
check_match "UploadPart with a wrong x-amz-checksum-sha256: BadDigest" "$CODE $(tr -d '\n' <"$T/r.body")" '^400 .*<Code>BadDigest</Code>'
n=4 part -H 'Content-MD5: 1B2M2Y8AsgTpgAmY7PhCfg=='
check_match "UploadPart with a wrong Content-MD5: BadDigest" "$CODE $(tr -d '\n' <"$T/r.body")" '^400 .*<Code>BadDigest</Code>'
http "$T/r" "$P?uploadId=$uid"
check_eq "no refused part is kept (ListParts lists none)" "$CODE $(grep -o '<Part>' "$T/r.body" | wc -l)" '200 0'
n=5 part
check_eq "UploadPart without checksums: its ETag is the part's MD5" "$(hdr "$T/r.hdr" ETag)" "\"$md5\""
n=6 part -H "Content-MD5: $(xxd -r -p <<<"$md5" | base64)" -H "x-amz-checksum-crc32: $crc"
check_eq "UploadPart with Content-MD5 and a checksum: its ETag is the part's MD5" "$(hdr "$T/r.hdr" ETag)" "\"$md5\""
n=7 part -H "x-amz-checksum-crc32: $crc" -H "x-amz-content-sha256: $sha"
check_match "UploadPart with good x-amz-checksum-crc32 and x-amz-content-sha256: 200, an ETag no client takes for an MD5" \
    "$CODE $(hdr "$T/r.hdr" ETag)" '^200 "[0-9a-f]{32}-1"$'
http "$T/r" -X DELETE "$P?uploadId=$uid"

# raw requests: what SDKs would not send
# aws-chunked without keys: the unsigned form is decoded and its trailer
# checked; the signed one cannot be verified (no --s3-keys): NotImplemented
n=$(stat -c %s "$ROOT/a.safetensors")
{ printf '%x\r\n' "$n"; cat "$ROOT/a.safetensors"; printf '\r\n0\r\n\r\n'; } >"$T/chunked.body"
http "$T/r" -X PUT --data-binary @"$T/chunked.body" -H 'Content-Encoding: aws-chunked' \
    -H "x-amz-decoded-content-length: $n" \
    -H 'x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER' "$URL/models/up/chunked.safetensors"
check_eq "unsigned aws-chunked PutObject: 200" "$CODE" 200
check_same "unsigned aws-chunked PutObject publishes the decoded bytes" "$ROOT/up/chunked.safetensors" "$ROOT/a.safetensors"
http "$T/r" -X PUT --data-binary @"$ROOT/a.safetensors" -H 'Content-Encoding: aws-chunked' \
    -H 'x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD' "$URL/models/up/chunked2.safetensors"
check_eq "signed aws-chunked PutObject without --s3-keys: 501" "$CODE" 501
check_match "signed aws-chunked PutObject without --s3-keys: NotImplemented" "$(cat "$T/r.body")" '<Code>NotImplemented</Code>'
check "signed aws-chunked PutObject without --s3-keys: nothing published" test ! -e "$ROOT/up/chunked2.safetensors"
check_match "the error has x-amz-request-id" "$(tr 'A-Z' 'a-z' <"$T/r.hdr")" 'x-amz-request-id: [0-9a-f]+'
http "$T/r" -X PUT --data-binary @"$ROOT/a.safetensors" "$URL/models/up/../escape.safetensors"
check_eq "PutObject of a key with ..: 400" "$CODE" 400
check "nothing written outside up/" test ! -e "$ROOT/escape.safetensors"
# refusals known from the head go out before the body (Expect: 100-continue: none sent)
for u in nope/x.safetensors "models/x.safetensors?tagging" models/x.txt; do
    out=$(curl -s -o /dev/null -w '%{http_code} %{size_upload}' -X PUT -H 'Expect: 100-continue' \
        --data-binary @"$T/big.safetensors" "$URL/$u")
    check_match "PUT $u: refused before the body" "$out" '^(404|501|400) 0$'
done
seg=$(printf 'a%.0s' $(seq 300))
http "$T/r" -X PUT --data-binary @"$ROOT/a.safetensors" "$URL/models/up/$seg.safetensors"
check_match "PutObject with a 300-byte segment: 400 InvalidArgument before the body" "$CODE $(tr -d '\n' <"$T/r.body")" '^400 .*<Code>InvalidArgument</Code>.*too long for the file system'
long=$(printf 'b%.0s' $(seq 1100))
http "$T/r" -X PUT --data-binary @"$ROOT/a.safetensors" "$URL/models/$long.safetensors"
check_match "PutObject with a 1100-byte key: KeyTooLongError" "$CODE $(tr -d '\n' <"$T/r.body")" '^400 .*<Code>KeyTooLongError</Code>'
http "$T/r" -X PUT --data-binary @"$ROOT/a.safetensors" "$URL/models/up/x%00y.safetensors"
check_match "PutObject with a NUL in the key: InvalidArgument" "$CODE $(tr -d '\n' <"$T/r.body")" '^400 .*<Code>InvalidArgument</Code>'
http "$T/r" -X POST --data-binary '<Delete><Object><Key>a.safetensors</Key>' "$URL/models?delete"
check_match "DeleteObjects, malformed XML: MalformedXML" "$CODE $(tr -d '\n' <"$T/r.body")" '^400 .*<Code>MalformedXML</Code>'
http "$T/r" -X POST --data-binary '<!DOCTYPE d [<!ENTITY e "x">]><Delete><Object><Key>a.safetensors</Key></Object></Delete>' "$URL/models?delete"
check_match "DeleteObjects with a DOCTYPE: MalformedXML" "$CODE $(tr -d '\n' <"$T/r.body")" '^400 .*<Code>MalformedXML</Code>'
check "a.safetensors survived the bad documents" test -e "$ROOT/a.safetensors"

# ---- clients' uploads
AWS=(aws --endpoint-url "$URL")
"${AWS[@]}" s3 cp "$ROOT/llm/shards/model-00001.safetensors" s3://models/cli/m.safetensors >"$T/cp.out" 2>&1
check_same "aws s3 cp up" "$ROOT/cli/m.safetensors" "$ROOT/llm/shards/model-00001.safetensors"
"${AWS[@]}" s3 cp "$T/big.safetensors" s3://models/cli/big.safetensors >"$T/cpbig.out" 2>&1
check_same "aws s3 cp up, multipart (14 MiB)" "$ROOT/cli/big.safetensors" "$T/big.safetensors"
"${AWS[@]}" s3 sync "$ROOT/llm/shards" s3://models/syncup >"$T/up1.out" 2>&1
check_same "aws s3 sync up" "$ROOT/syncup/model-00002.safetensors" "$ROOT/llm/shards/model-00002.safetensors"
"${AWS[@]}" s3 sync "$ROOT/llm/shards" s3://models/syncup >"$T/up2.out" 2>&1
check_eq "the second aws s3 sync up copies nothing" "$(cat "$T/up2.out")" ""
"${AWS[@]}" s3 rm s3://models/cli/m.safetensors >"$T/rm.out" 2>&1
check "aws s3 rm" test ! -e "$ROOT/cli/m.safetensors"
export RCLONE_CONFIG_ZT_TYPE=s3 RCLONE_CONFIG_ZT_PROVIDER=Other RCLONE_CONFIG_ZT_ENDPOINT=$URL
export RCLONE_CONFIG_ZT_FORCE_PATH_STYLE=true RCLONE_CONFIG_ZT_ACCESS_KEY_ID=dummy
export RCLONE_CONFIG_ZT_SECRET_ACCESS_KEY=dummy RCLONE_CONFIG=/dev/null
rclone copy "$ROOT/llm/shards" zt:models/rc >"$T/rc.out" 2>&1
check_same "rclone copy up" "$ROOT/rc/model-00002.safetensors" "$ROOT/llm/shards/model-00002.safetensors"
check_nomatch "rclone copy up logs no error" "$(cat "$T/rc.out")" 'ERROR'
cat >"$T/s3cfg" <<CFG
[default]
access_key = dummy
secret_key = dummy
host_base = 127.0.0.1:$PORT
host_bucket = 127.0.0.1:$PORT
use_https = False
CFG
s3cmd -c "$T/s3cfg" put "$ROOT/a.safetensors" s3://models/s3cmd/a.safetensors >"$T/s3cmd.out" 2>&1
check_same "s3cmd put" "$ROOT/s3cmd/a.safetensors" "$ROOT/a.safetensors"
s3cmd -c "$T/s3cfg" --multipart-chunk-size-mb=5 put "$T/big.safetensors" s3://models/s3cmd/big.safetensors >"$T/s3cmd2.out" 2>&1
check_same "s3cmd put, multipart" "$ROOT/s3cmd/big.safetensors" "$T/big.safetensors"
MODS=$REPO/tests/clients/node_modules
if [ -d "$MODS/@aws-sdk/client-s3" ] && command -v node >/dev/null; then
    out=$(node "$S3_DIR/js_put.cjs" "$MODS" "$URL" "$T/big.safetensors" 2>/dev/null)
    check_match "js: PutObject" "$out" '^ok js: PutObject'
    check_match "js: multipart upload" "$out" 'ok js: multipart upload'
else
    bad "@aws-sdk/client-s3 in tests/clients/node_modules" "run npm ci in tests/clients (.ci/deps)"
fi
stop_daemon

# ---- without write rights
start_daemon "$ROOT" || finish
s3py_checks no_writes "$URL" "$ROOT"
finish
