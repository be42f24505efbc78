#!/usr/bin/env bash
# t_s3: ztensord --upstream s3://BUCKET/PREFIX in front of moto (the reference
# S3): the sidecar serves the store's .zt files as a ztensord on the same
# files would (/raw byte-exact, a component, zt pull through it), a second
# request is answered from the cache without asking the store, its S3 front and
# /v1/files list the store's objects and the safetensors view of each .zt (made here
# from the .zt, byte-identical to zt convert's, the store never asked for it; a view
# safetensors cannot express listed as an error by /v1/files, not by S3) and serve
# them (aws s3 sync twice), --prefetch expands a prefix with the store's objects, and a relay
# that flips bytes makes every fill fail its digest check with nothing cached;
# eight concurrent GetObjects of one object through the sidecar's S3 front
# cost the store about one copy (a relay counts its bytes); the store's .zt files are opened
# several at a time to list their views.
# Requests are signed with the keys of the environment (AWS_*): the second
# part runs moto in auth mode, which checks every signature (botocore).
. "$(dirname "$0")/lib.sh" "$@"
. "$UPSTREAM_DIR/../sh/s3.sh"

mkdir -p "$T/files" "$T/side"
rand "$T/w.bin" 3000000
rand "$T/t.bin" 4096
pack "$T/files/model.zt" w=u8:3000000:"$T/w.bin" t=f32:1024:"$T/t.bin" || finish
# A file whose view safetensors cannot express (complex64): its view is listed as an error
# by /v1/files and not at all by the S3 front, as a local one is.
CPX=${ZT_CORPUS_V2_DIR:-}/accept/type_complex64.zt
if [ -f "$CPX" ]; then cp "$CPX" "$T/files/cpx.zt"; else skip "a refused view" "ZT_CORPUS_V2_DIR not set"; fi
start_moto MP || finish
$FILL "http://127.0.0.1:$MP" put models llama/ "$T/files" --create || bad "s3fill put"

# gets: the GETs moto has answered for the object so far.
gets() { grep -c 'GET /models/llama/model.zt' "$T/moto-$MP.log"; }

export AWS_ENDPOINT_URL=http://127.0.0.1:$MP
start_sidecar "$T/side" "s3://models/llama/" "$T/cache" || finish
check_match "start-up says what the upstream is" "$(cat "$D_ERR")" \
    "upstream s3://models/llama/ is an S3 store: objects at http://127.0.0.1:$MP/models/llama/NAME, requests signed \(SigV4\)"
http "$T/r" "$URL/v1/files/model.zt/raw"
check_code "raw" 200
check_same "raw is the object" "$T/r.body" "$T/files/model.zt"
http "$T/r" "$URL/v1/files/model.zt/objects/w/data"
check_code "a component" 200
check_same "its bytes" "$T/r.body" "$T/w.bin"
n1=$(gets)
http "$T/r" "$URL/v1/files/model.zt/objects/w/data"
check_same "again: its bytes" "$T/r.body" "$T/w.bin"
check_eq "again: from the cache, the store not asked" "$(gets)" "$n1"
"$ZT" pull "$URL/v1/files/model.zt" -o "$T/pulled" --quiet
check_eq "zt pull through the sidecar: exit status 0" $? 0
cmp -s "$T/files/model.zt" "$T/pulled/model.zt" && ok "byte-exact" || bad "byte-exact"
http "$T/r" "$URL/v1/files/absent.zt"
check_code "an object the store lacks: 404" 404
# The S3 front of this node-local cache lists the store's objects (the store's own
# ListObjectsV2, names relative to the prefix) and serves them: an engine with
# AWS_ENDPOINT_URL at the sidecar lists, then reads.
out=$(curl -s "$URL/models?list-type=2")
check_match "the sidecar's S3 front lists the store's object, its size and date" "$out" \
    "<Key>model\.zt</Key><LastModified>20[0-9-]{8}T[0-9:]{8}\.000Z</LastModified><ETag>[^<]+</ETag><Size>$(stat -c %s "$T/files/model.zt")</Size>"
http "$T/r" "$URL/models/model.zt"
check_code "GetObject through the sidecar's S3 front" 200
check_same "GetObject: the object's bytes" "$T/r.body" "$T/files/model.zt"
# The views of the store's .zt objects (issue 24): model.safetensors is listed by /v1/files
# and ListObjectsV2 with its size, and made here from model.zt's bytes, byte-identical to
# zt convert's output; the store is never asked for that key.
"$ZT" convert "$T/files/model.zt" -o "$T/model.safetensors" >/dev/null || bad "zt convert"
vsize=$(stat -c %s "$T/model.safetensors")
http "$T/r" "$URL/v1/files"
check_code "/v1/files of the sidecar" 200
check_eq "/v1/files lists the store's object" "$($HELP listing "$T/r.body" model.zt size)" \
    "$(stat -c %s "$T/files/model.zt")"
check_eq "/v1/files lists its view, with its size" \
    "$($HELP listing "$T/r.body" model.safetensors size)" "$vsize"
check_eq "the view's format" "$($HELP listing "$T/r.body" model.safetensors format)" \
    safetensors-view
check_eq "the view's view_of" "$($HELP listing "$T/r.body" model.safetensors view_of)" model.zt
if [ -f "$T/files/cpx.zt" ]; then
    check_eq "a view safetensors cannot express: listed by /v1/files as an error" \
        "$($HELP listing "$T/r.body" cpx.safetensors error.code)" view_unsupported
fi
out=$(curl -s "$URL/models?list-type=2")
check_match "ListObjectsV2 lists the view with its size" "$out" \
    "<Key>model\.safetensors</Key><LastModified>[^<]+</LastModified><ETag>[^<]+</ETag><Size>$vsize</Size>"
if [ -f "$T/files/cpx.zt" ]; then
    check_match "ListObjectsV2 lists the file whose view is refused" "$out" "<Key>cpx\.zt</Key>"
    if grep -q '<Key>cpx\.safetensors</Key>' <<<"$out"; then
        bad "ListObjectsV2: a view safetensors cannot express is not listed"
    else ok "ListObjectsV2: a view safetensors cannot express is not listed"; fi
fi
http "$T/r" "$URL/models/model.safetensors"
check_code "GetObject of the view" 200
check_same "GetObject of the view: zt convert's output" "$T/r.body" "$T/model.safetensors"
http "$T/r" "$URL/v1/files/model.safetensors/raw"
check_code "/v1/files/model.safetensors/raw" 200
check_same "its bytes: zt convert's output" "$T/r.body" "$T/model.safetensors"
check_eq "the store was never asked for the view's key" \
    "$(grep -c 'models/llama/model\.safetensors' "$T/moto-$MP.log")" 0
AWS_ENDPOINT_URL=$URL aws s3 sync s3://models/ "$T/synced" >/dev/null 2>&1
check_same "aws s3 sync through the sidecar's S3 front" "$T/synced/model.zt" "$T/files/model.zt"
check_eq "a second sync copies nothing" "$(AWS_ENDPOINT_URL=$URL aws s3 sync s3://models/ "$T/synced" 2>&1)" ""
stop_daemon

# --prefetch of a prefix on an S3 store: expanded with the store's objects (the files, not
# the views made from them) and filled at start-up; the view is then read with no GET of
# the store. The wait is bounded (60 s), not timed.
NO_READY=1 start_sidecar "$T/side" "s3://models/" "$T/cache7" --prefetch llama/ || finish
ready=
for i in $(seq 1 600); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ] && ready=1 && break
    sleep 0.1
done
check "prefetch of a prefix of the store: /readyz 200 once done" [ -n "$ready" ]
check_eq "prefetched: the store's files under the prefix, no view" \
    "$(metric "$URL" '^ztensord_prefetch_files\{state="done"\}')" "$(find "$T/files" -type f | wc -l)"
n1=$(gets)
http "$T/r" "$URL/models/llama/model.safetensors"
check_code "GetObject of the view after the prefetch" 200
check_same "its bytes: zt convert's output" "$T/r.body" "$T/model.safetensors"
check_eq "from the prefetched cache: the store not asked for model.zt" "$(gets)" "$n1"
stop_daemon

# A relay that flips a byte of every answer after the open's two.
start_relay "$MP" flip 2 || finish
AWS_ENDPOINT_URL=http://127.0.0.1:$RPORT start_sidecar "$T/side" "s3://models/llama/" \
    "$T/cache2" --upstream-retries 0 || finish
complete=0
for i in 1 2 3; do
    code=$(curl -s --max-time 60 -o "$T/flip$i" -w '%{http_code}' \
        "$URL/v1/files/model.zt/objects/w/data")
    rc=$?
    if [ "$code" = 200 ] && [ "$rc" = 0 ] && cmp -s "$T/flip$i" "$T/w.bin"; then
        complete=$((complete + 1))
    fi
    if [ "$code" = 200 ] && [ "$rc" = 0 ] && ! cmp -s "$T/flip$i" "$T/w.bin"; then
        bad "flipped bytes never served complete" "request $i"
    fi
done
check_eq "flipped fills: no request served the component" "$complete" 0
check_eq "flipped fills: nothing in the cache" "$(metric "$URL" '^ztensord_cache_items$')" 0
stop_daemon
stop_relay

# Signed requests checked by moto in auth mode: the right keys, then wrong ones.
start_moto AP INITIAL_NO_AUTH_ACTION_COUNT=4 || finish
$FILL "http://127.0.0.1:$AP" iam "$T/keys" || bad "s3fill iam"
read -r KEY SECRET <"$T/keys"
AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET $FILL "http://127.0.0.1:$AP" put private m/ \
    "$T/files" --create || bad "s3fill put (auth)"
AWS_ENDPOINT_URL=http://127.0.0.1:$AP AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET \
    start_sidecar "$T/side" "s3://private/m" "$T/cache3" || finish
http "$T/r" "$URL/v1/files/model.zt/raw"
check_code "signed: raw" 200
check_same "signed: the object" "$T/r.body" "$T/files/model.zt"
stop_daemon
AWS_ENDPOINT_URL=http://127.0.0.1:$AP AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=wrong \
    start_sidecar "$T/side" "s3://private/m" "$T/cache4" --upstream-retries 0 || finish
http "$T/r" "$URL/v1/files/model.zt/raw"
[ "$CODE" != 200 ] && ok "a wrong secret: refused ($CODE)" || bad "a wrong secret refused"
check_match "the store's word in the answer" "$(cat "$T/r.body")" 'SignatureDoesNotMatch|403'
stop_daemon

# Eight readers of one 64 MiB object at once, through the sidecar's S3 front
# (GetObject of a file only the store has): each gets every byte, and the
# store sends about one copy (a relay counts its body bytes).
rand "$T/big.bin" $((64 << 20))
mkdir -p "$T/bigfiles"
pack "$T/bigfiles/big.zt" w=u8:$((64 << 20)):"$T/big.bin" || finish
$FILL "http://127.0.0.1:$MP" put models big/ "$T/bigfiles" || bad "s3fill put big"
start_relay "$MP" count || finish
AWS_ENDPOINT_URL=http://127.0.0.1:$RPORT start_sidecar "$T/side" "s3://models/big/" "$T/cache6" || finish
pids=()
for i in 1 2 3 4 5 6 7 8; do
    curl -s --max-time 300 -o "$T/reader$i" "$URL/models/big.zt" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
same=0
for i in 1 2 3 4 5 6 7 8; do cmp -s "$T/reader$i" "$T/bigfiles/big.zt" && same=$((same + 1)); done
check_eq "eight concurrent S3 GetObjects through the sidecar: each byte-exact" "$same" 8
size=$(stat -c %s "$T/bigfiles/big.zt")
sent=$(awk '/GET \/models\/big\/big\.zt/ && $NF ~ /^[0-9]+$/ { s += $NF } END { print s + 0 }' "$RLOG")
check "the store sent about one copy ($sent bytes for an object of $size, at most 1.1x)" \
    awk -v a="$sent" -v b="$size" 'BEGIN { exit !(a >= b && a <= 1.1 * b) }'
rm -f "$T"/reader? "$T/big.bin"
stop_daemon
stop_relay

# The store's tensor files are opened several at a time while the listing is made: a relay
# holds each request until 4 are in it at once (2 s at most) and logs the most it saw.
mkdir -p "$T/manyfiles"
for i in 1 2 3 4 5 6; do pack "$T/manyfiles/m$i.zt" t=f32:1024:"$T/t.bin" || finish; done
$FILL "http://127.0.0.1:$MP" put models many/ "$T/manyfiles" || bad "s3fill put many"
start_relay "$MP" gather 4 2 || finish
AWS_ENDPOINT_URL=http://127.0.0.1:$RPORT start_sidecar "$T/side" "s3://models/many/" "$T/cache7" || finish
http "$T/r" "$URL/v1/files"
check_code "a listing of six .zt objects through the gathering relay" 200
check_eq "every object's view is listed" "$(grep -o '"m[1-6]\.safetensors"' "$T/r.body" | sort -u | wc -l)" 6
peak=$(sed -n 's/.* peak \([0-9]*\)$/\1/p' "$RLOG" | sort -n | tail -1)
check "the opens ran at least 4 at once (most in the relay at once: ${peak:-none})" \
    test "${peak:-0}" -ge 4
stop_daemon
stop_relay

# upstream_kind ztensord cannot be an S3 store.
"$ZTENSORD" --root "$T/side" --upstream s3://models/llama --upstream-kind ztensord \
    --cache-dir "$T/cache5" --listen 127.0.0.1:0 >"$T/bad.out" 2>&1 &
pid=$!
wait_exit "$pid" 30
check_match "upstream_kind ztensord with s3://: refused at start-up" "$(cat "$T/bad.out")" \
    'is an S3 store: upstream_kind must be auto or plain'
finish
