#!/bin/bash
# The S3 front with real clients (docs/S3.md): boto3 (paginated lists,
# head, get, ranges, conditions, overrides, errors, a presigned GET,
# download_file), the Run:ai streamer's pattern (16 concurrent 8 MiB ranged
# GETs over a 128 MiB object), aws-cli (ls, cp, sync twice), rclone (lsf,
# copy, check with 0 differences and no hash errors), s3cmd (ls, get) and
# the AWS SDK for JavaScript (list, ranged get). Reads are anonymous: no
# keys file, so the dummy keys' signatures are not checked.
. "$(dirname "$0")/lib.sh" "$@"
need_s3py
need_tool rclone
need_tool s3cmd

ROOT=$T/root
make_tree "$ROOT"
st "$ROOT/llm/big/model.safetensors" $((32 * 1024 * 1024)) # 128 MiB
start_daemon "$ROOT" --s3-bucket models --s3-bucket llm=llm || finish
note "serving $URL"

# ---- boto3
s3py_checks boto3 "$URL" "$ROOT"
s3py_checks streamer "$URL" "$ROOT" llm/big/model.safetensors

# ---- aws-cli
AWS=(aws --endpoint-url "$URL")
out=$("${AWS[@]}" s3 ls s3://models/llm/shards/ 2>&1)
check_match "aws s3 ls lists the shards" "$out" 'model-00002\.safetensors'
"${AWS[@]}" s3 cp s3://models/a.safetensors "$T/a.cp" >/dev/null 2>"$T/aws.err"
check_same "aws s3 cp downloads the bytes" "$T/a.cp" "$ROOT/a.safetensors"
"${AWS[@]}" s3 sync s3://models/llm/shards "$T/sync" >"$T/sync1.out" 2>&1
check_same "aws s3 sync copies shard 1" "$T/sync/model-00001.safetensors" "$ROOT/llm/shards/model-00001.safetensors"
check_same "aws s3 sync copies shard 2" "$T/sync/model-00002.safetensors" "$ROOT/llm/shards/model-00002.safetensors"
"${AWS[@]}" s3 sync s3://models/llm/shards "$T/sync" >"$T/sync2.out" 2>&1
check_eq "the second aws s3 sync copies nothing" "$(cat "$T/sync2.out")" ""

# ---- rclone (configured from the environment, no file)
export RCLONE_CONFIG_ZT_TYPE=s3 RCLONE_CONFIG_ZT_PROVIDER=Other RCLONE_CONFIG_ZT_ENDPOINT=$URL
export RCLONE_CONFIG_ZT_FORCE_PATH_STYLE=true RCLONE_CONFIG_ZT_ACCESS_KEY_ID=dummy
export RCLONE_CONFIG_ZT_SECRET_ACCESS_KEY=dummy RCLONE_CONFIG=/dev/null
out=$(rclone lsf -R zt:models/llm 2>&1)
check_match "rclone lsf lists recursively" "$out" 'shards/model-00001\.safetensors'
rclone copy zt:models/llm "$T/rc" >"$T/rc.out" 2>&1
check_same "rclone copy: the big file" "$T/rc/big/model.safetensors" "$ROOT/llm/big/model.safetensors"
check_same "rclone copy: a shard" "$T/rc/shards/model-00002.safetensors" "$ROOT/llm/shards/model-00002.safetensors"
check_nomatch "rclone copy logs no error" "$(cat "$T/rc.out")" 'ERROR|corrupted|hash'
if rclone check zt:models/llm "$T/rc" >"$T/check.out" 2>&1; then ok "rclone check exits 0"; else bad "rclone check exits 0" "$(tail -c 600 "$T/check.out")"; fi
check_match "rclone check: 0 differences" "$(cat "$T/check.out")" ' 0 differences found'
check_nomatch "rclone check: no hash errors" "$(cat "$T/check.out")" 'ERROR|hash differ|corrupted'
# the ETags are in the multipart form: rclone knows they are no MD5 and says so
check_match "rclone check: hashes not compared (ETag HEX-1 is no MD5)" "$(cat "$T/check.out")" 'hashes could not be checked'

# ---- s3cmd (path style: host_bucket without %(bucket)s)
cat >"$T/s3cfg" <<CFG
[default]
access_key = dummy
secret_key = dummy
host_base = 127.0.0.1:$PORT
host_bucket = 127.0.0.1:$PORT
use_https = False
signature_v2 = False
CFG
out=$(s3cmd -c "$T/s3cfg" ls s3://models/llm/shards/ 2>&1)
check_match "s3cmd ls" "$out" 's3://models/llm/shards/model-00001\.safetensors'
s3cmd -c "$T/s3cfg" get s3://models/llm/shards/model-00001.safetensors "$T/s3cmd.bin" >"$T/s3cmd.out" 2>&1
check_same "s3cmd get" "$T/s3cmd.bin" "$ROOT/llm/shards/model-00001.safetensors"
check_nomatch "s3cmd get: no MD5 warning" "$(cat "$T/s3cmd.out")" 'MD5|WARNING'

# ---- the AWS SDK for JavaScript v3
MODS=$REPO/tests/clients/node_modules
if [ -d "$MODS/@aws-sdk/client-s3" ] && command -v node >/dev/null; then
    want=$(head -c 16 "$ROOT/llm/model.safetensors" | od -An -tx1 | tr -d ' \n')
    out=$(node "$S3_DIR/js_check.cjs" "$MODS" "$URL" llm/model.safetensors "$want" 2>&1)
    check_match "js: list" "$out" '^ok js: list'
    check_match "js: ranged get" "$out" 'ok js: ranged get'
else
    bad "@aws-sdk/client-s3 in tests/clients/node_modules" "run npm ci in tests/clients (.ci/deps)"
fi
finish
