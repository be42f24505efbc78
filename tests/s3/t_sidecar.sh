#!/bin/bash
# The S3 front of a sidecar (docs/S3.md, "A node-local cache"): a ztensord with
# --upstream in front of an origin ztensord answers ListObjectsV2 with the origin's
# files (merged with its own root's) and GetObject/HeadObject by filling from the
# origin, as /raw does. The whole boto3 suite of t_clients runs against the sidecar
# (paginated lists, head, get, ranges, conditions, errors in S3's XML), aws s3 sync
# twice copies nothing the second time, and the origin sends each byte once.
# (t_clients.sh runs the same suite against a ztensord serving the files itself.)
. "$(dirname "$0")/lib.sh" "$@"
need_s3py

ROOT=$T/root
make_tree "$ROOT"
st "$ROOT/llm/big/model.safetensors" $((2 * 1024 * 1024)) # 8 MiB
start_daemon "$ROOT" --s3-bucket models --s3-bucket llm=llm || finish
O_PID=$D_PID O_URL=$URL O_ERR=$D_ERR
D_PID=
at_exit "kill -KILL $O_PID 2>/dev/null"
mkdir -p "$T/side" "$T/cache"
start_daemon "$T/side" --upstream "$O_URL" --cache-dir "$T/cache" --upstream-ttl 1h --s3-bucket models --s3-bucket llm=llm || finish
note "sidecar $URL in front of $O_URL"

origin_bytes() {
    curl -s "$O_URL/metrics" | awk '$0 !~ /^#/ && $1 ~ /^ztensord_response_bytes_total/ && $1 !~ /metrics/ { s += $2 } END { printf "%.0f\n", s }'
}
origin_routes() { curl -s "$O_URL/metrics" | grep '^ztensord_response_bytes_total' | grep -v ' 0$'; }

# ---- a list through the sidecar names the origin's files
out=$(curl -s "$URL/models?list-type=2&prefix=llm/shards/")
check_match "ListObjectsV2 on the sidecar lists the origin's shard 1" "$out" '<Key>llm/shards/model-00001\.safetensors</Key>'
check_match "ListObjectsV2 on the sidecar gives its size" "$out" "<Size>$(stat -c %s "$ROOT/llm/shards/model-00001.safetensors")</Size>"
out=$(curl -s -w '\n%{http_code}' "$URL/models/llm/nope.safetensors")
check_match "a key neither has: 404 NoSuchKey in S3's XML" "$out" '<Code>NoSuchKey</Code>.*'$'\n''404$'

# ---- boto3's suite, against the sidecar
s3py_checks boto3 "$URL" "$ROOT"

# ---- aws-cli sync, twice, then a second copy: the origin sends the file once (and the
# region a sidecar reads first to open a tensor file: at most 64 KiB more)
before=$(origin_bytes)
origin_routes >"$T/routes.before"
AWS=(aws --endpoint-url "$URL")
BIG=$ROOT/llm/big/model.safetensors
"${AWS[@]}" s3 sync s3://models/llm/big "$T/sync" >"$T/sync1.out" 2>&1
check_same "aws s3 sync through the sidecar: the bytes" "$T/sync/model.safetensors" "$BIG"
"${AWS[@]}" s3 sync s3://models/llm/big "$T/sync" >"$T/sync2.out" 2>&1
check_eq "the second aws s3 sync through the sidecar copies nothing" "$(cat "$T/sync2.out")" ""
"${AWS[@]}" s3 sync s3://models/llm/big "$T/sync3" >/dev/null 2>&1
check_same "a second copy elsewhere: the same bytes" "$T/sync3/model.safetensors" "$BIG"
sent=$(($(origin_bytes) - before))
size=$(stat -c %s "$BIG")
if [ "$sent" -le $((size + 65536 + 16384)) ]; then
    ok "two syncs and a copy of $size bytes: the origin sent $sent bytes"
else
    bad "the origin sends each byte once" "it sent $sent bytes for $size: $(origin_routes | diff "$T/routes.before" - | tr '\n' ' ')"
fi

kill "$O_PID" 2>/dev/null
wait "$O_PID" 2>/dev/null
finish
