#!/usr/bin/env bash
# t_s3_index: a sidecar of an S3 store (moto) lists and serves
# DIR/model.safetensors.index.json for each store directory whose tensor objects form one
# model, as a ztensord --root on the same files does: two .zt shards; a .zt beside a
# .safetensors object. /v1/files lists it (format, size, ETag as locally), ListObjectsV2
# lists it, /v1 and S3 GetObject/HeadObject (Range, If-None-Match) answer the local root's
# bytes, made on the sidecar (moto is never asked for the key), also when the index is
# the first thing asked. No index for a directory with a view safetensors cannot express
# (complex64), nor where two files hold one tensor name; an object of the store named
# model.safetensors.index.json is served as it is.
. "$(dirname "$0")/lib.sh" "$@"
. "$UPSTREAM_DIR/../sh/s3.sh"

F=$T/files
mkdir -p "$F/shard" "$F/mixed" "$F/refused" "$F/dup" "$F/taken" "$T/side" "$T/tmp"
rand "$T/a.bin" 4096
rand "$T/b.bin" 8192
rand "$T/c.bin" 2048
pack "$F/shard/model-00001-of-00002.zt" a.weight=f32:1024:"$T/a.bin" || finish
pack "$F/shard/model-00002-of-00002.zt" b.weight=u8:8192:"$T/b.bin" c.bias=f32:512:"$T/c.bin" || finish
pack "$F/mixed/a.zt" x=f32:1024:"$T/a.bin" || finish
pack "$T/tmp/y.zt" y=u8:8192:"$T/b.bin" || finish
"$ZT" convert "$T/tmp/y.zt" -o "$F/mixed/y.safetensors" >/dev/null || bad "zt convert"
pack "$F/dup/a.zt" same=f32:1024:"$T/a.bin" || finish
pack "$F/dup/b.zt" same=f32:512:"$T/c.bin" || finish
pack "$F/taken/a.zt" p=f32:1024:"$T/a.bin" || finish
pack "$F/taken/b.zt" q=f32:512:"$T/c.bin" || finish
printf '{"weight_map": {}}\n' >"$F/taken/model.safetensors.index.json"
CPX=${ZT_CORPUS_V2_DIR:-}/accept/type_complex64.zt
if [ -f "$CPX" ]; then
    pack "$F/refused/a.zt" z=f32:1024:"$T/a.bin" || finish
    cp "$CPX" "$F/refused/cpx.zt"
else skip "a directory with a refused view" "ZT_CORPUS_V2_DIR not set"; fi

# The reference: a local root over the same files.
start_origin "$F" || finish
http "$T/r" "$O_URL/v1/files"
cp "$T/r.body" "$T/local.json"
for d in shard mixed; do
    http "$T/r" "$O_URL/v1/files/$d/model.safetensors.index.json/raw"
    check_code "the local root serves $d's index" 200
    cp "$T/r.body" "$T/$d.index.json"
done
check_eq "the local root lists no index where two files hold one tensor name" \
    "$($HELP listing "$T/local.json" dup/model.safetensors.index.json format)" MISSING
[ -f "$CPX" ] && check_eq "the local root lists no index where a view is refused" \
    "$($HELP listing "$T/local.json" refused/model.safetensors.index.json format)" MISSING

start_moto MP || finish
$FILL "http://127.0.0.1:$MP" put models m/ "$F" --create || bad "s3fill put"
export AWS_ENDPOINT_URL=http://127.0.0.1:$MP
start_sidecar "$T/side" "s3://models/m/" "$T/cache" || finish

http "$T/r" "$URL/v1/files"
check_code "/v1/files of the sidecar" 200
for d in shard mixed; do
    I=$d/model.safetensors.index.json
    check_eq "/v1/files lists $I as an index" "$($HELP listing "$T/r.body" "$I" format)" \
        safetensors-index
    check_eq "$I: the local root's size" "$($HELP listing "$T/r.body" "$I" size)" \
        "$(stat -c %s "$T/$d.index.json")"
    check_eq "$I: the local root's ETag" "$($HELP listing "$T/r.body" "$I" etag)" \
        "$($HELP listing "$T/local.json" "$I" etag)"
done
check_eq "no index where two files hold one tensor name" \
    "$($HELP listing "$T/r.body" dup/model.safetensors.index.json format)" MISSING
[ -f "$CPX" ] && check_eq "no index for a directory with a refused view" \
    "$($HELP listing "$T/r.body" refused/model.safetensors.index.json format)" MISSING
[ -f "$CPX" ] && check_match "the refused view is logged as why" "$(cat "$D_ERR")" \
    "refused/model\.safetensors\.index\.json is not made: refused/cpx\.zt has no safetensors view"
check_eq "the store's own index object is listed as a file" \
    "$($HELP listing "$T/r.body" taken/model.safetensors.index.json size)" \
    "$(stat -c %s "$F/taken/model.safetensors.index.json")"
check_match "the clash is logged" "$(cat "$D_ERR")" \
    "taken/model\.safetensors\.index\.json is an object of the store: it is served instead of the index"

out=$(curl -s "$URL/models?list-type=2")
check_match "ListObjectsV2 lists shard's index with its size" "$out" \
    "<Key>shard/model\.safetensors\.index\.json</Key><LastModified>[^<]+</LastModified><ETag>[^<]+</ETag><Size>$(stat -c %s "$T/shard.index.json")</Size>"
check_match "ListObjectsV2 lists mixed's index" "$out" "<Key>mixed/model\.safetensors\.index\.json</Key>"
check_nomatch "ListObjectsV2 lists no index for dup" "$out" "<Key>dup/model\.safetensors\.index\.json</Key>"

for d in shard mixed; do
    I=$d/model.safetensors.index.json
    http "$T/r" "$URL/v1/files/$I/raw"
    check_code "/v1/files/$I/raw" 200
    check_same "its bytes: the local root's" "$T/r.body" "$T/$d.index.json"
    check_eq "its ETag: the listing's" "$(hdr "$T/r.hdr" ETag)" \
        "$($HELP listing "$T/local.json" "$I" etag)"
    # its document (its listing object), as the local root's but for the date (the
    # objects' in the store, the files' locally)
    http "$T/r" "$URL/v1/files/$I"
    check_code "/v1/files/$I" 200
    http "$T/l" "$O_URL/v1/files/$I"
    check_eq "/v1/files/$I: the local root's document but for its date" \
        "$(sed 's/"last_modified":"[^"]*"//' "$T/r.body")" "$(sed 's/"last_modified":"[^"]*"//' "$T/l.body")"
    http "$T/r" "$URL/models/$I"
    check_code "GetObject of $I" 200
    check_same "GetObject: the local root's bytes" "$T/r.body" "$T/$d.index.json"
done
I=shard/model.safetensors.index.json
etag=$($HELP listing "$T/local.json" "$I" etag)
http "$T/r" -I "$URL/models/$I"
check_code "HeadObject of the index" 200
check_eq "HeadObject: its length" "$(hdr "$T/r.hdr" Content-Length)" "$(stat -c %s "$T/shard.index.json")"
http "$T/r" -I "$URL/v1/files/$I/raw"
check_code "HEAD of /raw" 200
check_eq "HEAD of /raw: its ETag" "$(hdr "$T/r.hdr" ETag)" "$etag"
http "$T/r" -r 10-29 "$URL/models/$I"
check_code "GetObject with a Range" 206
check_eq "the range's bytes" "$(cat "$T/r.body")" "$(head -c 30 "$T/shard.index.json" | tail -c 20)"
http "$T/r" -H "If-None-Match: $etag" "$URL/v1/files/$I/raw"
check_code "/raw with If-None-Match: its ETag" 304
http "$T/r" -H "If-None-Match: $etag" "$URL/models/$I"
check_code "GetObject with If-None-Match: its ETag" 304
http "$T/r" "$URL/models/taken/model.safetensors.index.json"
check_same "the store's own index object: its bytes" "$T/r.body" "$F/taken/model.safetensors.index.json"
http "$T/r" "$URL/v1/files/dup/model.safetensors.index.json/raw"
check_code "no index for dup: 404" 404
check_eq "the store was never asked for a made index's key" \
    "$(grep -Ec '(shard|mixed)/model\.safetensors\.index\.json' "$T/moto-$MP.log")" 0
stop_daemon

# A sidecar whose first request is the index: the store's listing is made for it.
start_sidecar "$T/side" "s3://models/m/" "$T/cache2" || finish
http "$T/r" "$URL/models/mixed/model.safetensors.index.json"
check_code "the first request, GetObject of the index" 200
check_same "its bytes: the local root's" "$T/r.body" "$T/mixed.index.json"
check_eq "the store was never asked for it" \
    "$(grep -Ec '(shard|mixed)/model\.safetensors\.index\.json' "$T/moto-$MP.log")" 0
stop_daemon
stop_motos
finish
