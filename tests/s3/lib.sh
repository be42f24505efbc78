# lib.sh: shared code of the S3 front's scripts. Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT. It takes tests/sh/common.sh and adds the S3
# clients: S3PY (the python3 on PATH, which has boto3, aws-cli and moto; not
# Debian's), dummy AWS keys in the environment (the server checks no
# signature yet: reads are anonymous), and make_tree.
S3_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$S3_DIR/../sh/common.sh" "$1" "$2"
S3PY=$(command -v python3)
export AWS_ACCESS_KEY_ID=dummy AWS_SECRET_ACCESS_KEY=dummy AWS_DEFAULT_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export T
# The endpoints are plain HTTP; rclone 1.60 fails to start with any
# AWS_CA_BUNDLE ("unsupported transport"), which some machines set.
unset AWS_CA_BUNDLE

need_s3py() {
    if [ -z "$S3PY" ] || [ "$S3PY" = /usr/bin/python3 ] || ! "$S3PY" -c 'import boto3' 2>/dev/null; then
        bad "python3 with boto3 on PATH" "found '$S3PY' (the 3.11 on PATH has boto3, aws-cli and moto)"
        finish
    fi
}

# st FILE N: a safetensors file with one F32 tensor of N random floats.
st() {
    $PY - "$1" "$2" <<'PYEOF'
import json, os, struct, sys
path, n = sys.argv[1], int(sys.argv[2])
h = json.dumps({"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
h += b" " * (-len(h) % 8)
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    left = 4 * n
    while left:
        k = min(left, 8 << 20)
        f.write(os.urandom(k))
        left -= k
PYEOF
}

# make_tree ROOT: the files the scripts serve.
make_tree() {
    st "$1/a.safetensors" 1000
    st "$1/llm/model.safetensors" 300000
    st "$1/llm/shards/model-00001.safetensors" 5000
    st "$1/llm/shards/model-00002.safetensors" 7000
    st "$1/odd/with space+plus.safetensors" 10
    st "$1/odd/caf$(printf '\xc3\xa9').safetensors" 10
    st "$1/zz/last.safetensors" 10
}

# s3py_checks SUBCOMMAND ARGS...: run s3check.py (or moto_diff.py for
# SUBCOMMAND moto_diff, s3auth.py for "auth SUBCOMMAND") and count its lines.
s3py_checks() {
    local out line
    local script=$S3_DIR/s3check.py
    [ "$1" = moto_diff ] && { script=$S3_DIR/moto_diff.py; shift; }
    [ "$1" = auth ] && { script=$S3_DIR/s3auth.py; shift; }
    [ "$1" = big ] && { script=$S3_DIR/s3big.py; shift; }
    out=$("$S3PY" "$script" "$@" 2>&1)
    local rc=$?
    while IFS= read -r line; do
        case $line in
        "ok "*) ok "${line#ok }" ;;
        "FAIL "*) bad "${line#FAIL }" "" ;;
        *) note "$line" ;;
        esac
    done <<<"$out"
    [ $rc -eq 0 ] || bad "$(basename "$script") $1 ends well" "exit $rc: $(tail -c 600 <<<"$out")"
    grep -q '^ok ' <<<"$out" || bad "$(basename "$script") $1 ran" "$(tail -c 600 <<<"$out")"
}
