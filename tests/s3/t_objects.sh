#!/bin/bash
# Every catalog entry is an S3 object (docs/S3.md "Objects: files and
# views"): in a .zt model directory with config.json, ListObjectsV2 shows
# the plain files, each STEM.zt's safetensors view STEM.safetensors and the
# model's model.safetensors.index.json, with the sizes GetObject sends;
# `aws s3 cp` of a view is byte for byte `zt convert`'s output, of a plain
# file its bytes, of the index its JSON; HEAD, Range and If-None-Match work
# on a view with the ETag the listing gave.
. "$(dirname "$0")/lib.sh" "$@"
need_s3py

R=$T/root
D=$R/org/m
mkdir -p "$D" "$T/src"
rand "$T/src/w.raw" 16384
rand "$T/src/b.raw" 256
pack "$D/model-00001-of-00002.zt" --format v2 w=f32:64x64:"$T/src/w.raw"
pack "$D/model-00002-of-00002.zt" --format v2 b=f32:64:"$T/src/b.raw"
printf '{"model_type": "test", "hidden_size": 64}\n' >"$D/config.json"
for i in 1 2; do
    "$ZT" convert "$D/model-0000$i-of-00002.zt" -o "$T/conv$i.safetensors" >/dev/null
done
start_daemon "$R" || finish

AWS=(aws --endpoint-url "$URL")
"${AWS[@]}" s3api list-objects-v2 --bucket models --prefix org/m/ >"$T/list.json" 2>"$T/list.err"
keys=$($PY -c 'import json,sys; print(" ".join("%s=%s" % (o["Key"], o["Size"]) for o in json.load(open(sys.argv[1]))["Contents"]))' "$T/list.json" 2>&1)
note "listed: $keys"
check_match "the listing has config.json, with its size" "$keys" "org/m/config\.json=$(stat -c %s "$D/config.json")( |$)"
for i in 1 2; do
    check_match "the listing has the view of shard $i, with zt convert's size" "$keys" \
        "org/m/model-0000$i-of-00002\.safetensors=$(stat -c %s "$T/conv$i.safetensors")( |$)"
done
check_match "the listing has the model's index" "$keys" 'org/m/model\.safetensors\.index\.json='

for i in 1 2; do
    "${AWS[@]}" s3 cp "s3://models/org/m/model-0000$i-of-00002.safetensors" "$T/view$i.safetensors" >"$T/cp$i.out" 2>&1
    check_same "aws s3 cp of view $i is zt convert's output" "$T/view$i.safetensors" "$T/conv$i.safetensors"
done
"${AWS[@]}" s3 cp s3://models/org/m/config.json "$T/config.json" >"$T/cpc.out" 2>&1
check_same "aws s3 cp of config.json" "$T/config.json" "$D/config.json"
"${AWS[@]}" s3 cp s3://models/org/m/model.safetensors.index.json "$T/index.json" >"$T/cpi.out" 2>&1
check_eq "the index maps each tensor to its view" "$($PY -c '
import json,sys; print(json.load(open(sys.argv[1]))["weight_map"])' "$T/index.json" 2>&1)" \
    "{'b': 'model-00002-of-00002.safetensors', 'w': 'model-00001-of-00002.safetensors'}"
isize=$($PY -c 'import json,sys; print([o["Size"] for o in json.load(open(sys.argv[1]))["Contents"] if o["Key"].endswith("index.json")][0])' "$T/list.json" 2>&1)
check_eq "the index's listed size is its length" "$isize" "$(stat -c %s "$T/index.json" 2>/dev/null)"

# HEAD, Range and conditions on a view, with the listing's ETag
V=$URL/models/org/m/model-00001-of-00002.safetensors
etag=$($PY -c 'import json,sys; print([o["ETag"] for o in json.load(open(sys.argv[1]))["Contents"] if o["Key"].endswith("00001-of-00002.safetensors")][0])' "$T/list.json" 2>&1)
check_match "the view's listed ETag is in the multipart form" "$etag" '^"[0-9a-f]{32}-1"$'
http "$T/h" -I "$V"
check_eq "HEAD of the view: 200" "$CODE" 200
check_eq "HEAD of the view: the listing's ETag" "$(hdr "$T/h.hdr" ETag)" "$etag"
check_eq "HEAD of the view: Content-Length" "$(hdr "$T/h.hdr" Content-Length)" "$(stat -c %s "$T/conv1.safetensors")"
check_match "HEAD of the view: x-amz-request-id" "$(tr 'A-Z' 'a-z' <"$T/h.hdr")" 'x-amz-request-id: [0-9a-f]+'
http "$T/g" -H 'Range: bytes=100-4195' "$V"
check_eq "ranged GET of the view: 206" "$CODE" 206
check_eq "ranged GET of the view: the bytes" "$(sha256_hex "$T/g.body")" "$(tail -c +101 "$T/conv1.safetensors" | head -c 4096 | openssl dgst -sha256 -r | cut -d' ' -f1)"
http "$T/n" -H "If-None-Match: $etag" "$V"
check_eq "GET of the view If-None-Match its ETag: 304" "$CODE" 304
http "$T/p" -H 'If-Match: "0123"' "$V"
check_match "GET of the view with a failed If-Match: 412 PreconditionFailed" "$CODE $(tr -d '\n' <"$T/p.body")" '^412 .*<Code>PreconditionFailed</Code>'
http "$T/x" "$URL/models/org/m/model-00003-of-00002.safetensors"
check_match "a view that does not exist: NoSuchKey" "$CODE $(tr -d '\n' <"$T/x.body")" '^404 .*<Code>NoSuchKey</Code>'
finish
