#!/bin/bash
# Through the cache from an S3 store: an `--upstream s3://BUCKET/PREFIX` sidecar with an
# empty root answers HF clients for the store's repositories (the objects under
# PREFIX/org/model/ in moto, the reference S3), built from the store's listing
# (server/hf/hf_store_repo.c, docs/HF.md "Through the cache"). Its info lists every object
# and the .zt's safetensors view; the .zt's digest is its zTensor identity and the view's
# is made from it, as a local ztensord over the same files gives them; the other objects'
# digests come from the store's ETag and claim no sha256 (no lfs block); the commit is
# stable. The real @huggingface/hub (snapshotDownload and the rest, hf_js.mjs) downloads
# every file byte-identical to the object in moto, the view to `zt convert`'s output, and
# the store is never asked for the view's key. An object replaced in moto gives a new
# commit once upstream_ttl has passed; the old commit then answers RevisionNotFound, and
# main gives the new bytes under the new commit (or a 503 until the sidecar's pinned
# version is revalidated), never a mix.
#   t_s3_store.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$@"
. "$HF_DIR/../sh/s3.sh"

R=$T/root
D=$R/org/model
mkdir -p "$D" "$T/src" "$T/side" "$T/cache"
# Tensors of odd sizes: padding between the blobs, which the identity reads (never a blob).
rand "$T/src/a.raw" 1000001
rand "$T/src/w.raw" 2000003
rand "$T/src/t.raw" 4004
rand "$T/src/x.raw" 256
pack "$D/model.zt" --format v2 a=u8:1000001:"$T/src/a.raw" w=u8:2000003:"$T/src/w.raw" \
    t=f32:1001:"$T/src/t.raw"
pack "$T/other.zt" --format v2 x=f32:64:"$T/src/x.raw"
"$ZT" convert "$T/other.zt" -o "$D/weights.safetensors" >/dev/null || bad "zt convert"
printf '{"model_type": "test", "hidden_size": 64}\n' >"$D/config.json"
printf '{"version": "1.0", "model": {"type": "BPE"}}\n' >"$D/tokenizer.json"
FILES=$(repo_files "$D")
E=$T/expect
expect_dir "$D" "$E"
repo_files "$D" >"$E/.nolfs" # no digest of a store's file is its bytes' sha256

# oid_of TREE PATH: the oid a tree document gives the file at PATH.
oid_of() {
    $PY -c 'import json, sys
print(next((i["oid"] for i in json.load(open(sys.argv[1])) if i["path"] == sys.argv[2]), "NONE"))' "$1" "$2"
}
# What a local ztensord over the same files says the .zt's and the view's digests are.
start_daemon "$R" || finish
req "local: tree" 200 "$URL/hf/api/models/org/model/tree/main"
LOCAL_ZT=$(oid_of "$LAST.body" model.zt)
LOCAL_VIEW=$(oid_of "$LAST.body" model.safetensors)
LOCAL_INDEX=$(oid_of "$LAST.body" model.safetensors.index.json)
check_match "local: the .zt's oid" "$LOCAL_ZT" '^[0-9a-f]{64}$'
# model.zt and weights.safetensors form one model: its index, made by the server (with an
# lfs block: its digest is its JSON's sha256)
req "local: the model index" 200 "$URL/v1/files/org/model/model.safetensors.index.json/raw"
cp "$LAST.body" "$E/model.safetensors.index.json"
check_eq "local: the index's oid is its sha256" "$LOCAL_INDEX" "$(sha256_hex "$E/model.safetensors.index.json")"
FILES=$(printf '%s\n' $FILES model.safetensors.index.json | LC_ALL=C sort)
stop_daemon

start_moto MP || finish
$FILL "http://127.0.0.1:$MP" put models hub/org/model/ "$D" --create || bad "s3fill put"
export AWS_ENDPOINT_URL=http://127.0.0.1:$MP
start_daemon "$T/side" --upstream s3://models/hub/ --cache-dir "$T/cache" --upstream-ttl 2s || finish
H=$URL/hf

req "sidecar: model info" 200 "$H/api/models/org/model"
cp "$LAST.body" "$T/info.json"
# shellcheck disable=SC2086
if ERR=$($HFC info "$T/info.json" org/model "$E" $FILES 2>&1); then
    ok "info: every object and the view, sizes, digests, no lfs block"
else bad "info" "$ERR"; fi
SHA=$($HFC field "$T/info.json" sha)
check_match "info: sha is 40 hex" "$SHA" '^[0-9a-f]{40}$'
check_eq "info: X-Repo-Commit" "$(hdr "$LAST.hdr" X-Repo-Commit)" "$SHA"
req "sidecar: model info again" 200 "$H/api/models/org/model"
check_eq "info again: the same commit" "$($HFC field "$LAST.body" sha)" "$SHA"
req "sidecar: tree" 200 "$H/api/models/org/model/tree/main?recursive=true"
# shellcheck disable=SC2086
if ERR=$($HFC tree "$LAST.body" "$E" $FILES 2>&1); then ok "tree"; else bad "tree" "$ERR"; fi
check_eq "the .zt's oid: its zTensor identity, as a local ztensord gives it" \
    "$(oid_of "$LAST.body" model.zt)" "$LOCAL_ZT"
check_eq "the view's oid: made from it, as a local ztensord gives it" \
    "$(oid_of "$LAST.body" model.safetensors)" "$LOCAL_VIEW"
check_eq "the model index's oid: made on the sidecar, as a local ztensord gives it" \
    "$(oid_of "$LAST.body" model.safetensors.index.json)" "$LOCAL_INDEX"
req "sidecar: paths-info" 200 -X POST --data 'paths=model.zt&paths=config.json' \
    "$H/api/models/org/model/paths-info/$SHA"
check_eq "paths-info" "$($HFC paths "$LAST.body" | tr '\n' ,)" "file model.zt,file config.json,"
hf_err "a repository the store lacks" 404 RepoNotFound "$H/api/models/org/nope"
hf_err "a file the store lacks" 404 EntryNotFound "$H/org/model/resolve/main/nope.bin"

for f in $FILES; do
    req "resolve $f at the commit" 200 "$H/org/model/resolve/$SHA/$f"
    check_eq "$f: byte-exact" "$(sha256_hex "$LAST.body")" "$(sha256_hex "$E/$f")"
    check_eq "$f: X-Repo-Commit" "$(hdr "$LAST.hdr" X-Repo-Commit)" "$SHA"
    check_match "$f: X-Linked-Etag is its oid" "$(hdr "$LAST.hdr" X-Linked-Etag)" '^"[0-9a-f]{64}"$'
done
req "a range of model.zt" 206 -H 'Range: bytes=1000-1999' "$H/org/model/resolve/main/model.zt"
check_eq "the range's bytes" "$(sha256_hex "$LAST.body")" \
    "$(tail -c +1001 "$E/model.zt" | head -c 1000 | openssl dgst -sha256 -r | cut -d' ' -f1)"

CLIENTS=$REPO/tests/clients
if command -v node >/dev/null && [ -f "$CLIENTS/node_modules/@huggingface/hub/package.json" ]; then
    # shellcheck disable=SC2086
    node "$HF_DIR/hf_js.mjs" "$CLIENTS" "$H" org/model "$E" "$T/jscache" $FILES >"$T/js.out" 2>"$T/js.err"
    check_eq "@huggingface/hub (snapshotDownload, downloadFile, ...) through the sidecar" \
        "$? $(grep -c '^FAIL' "$T/js.out")" "0 0"
    grep '^FAIL' "$T/js.out" | head -5
else
    bad "@huggingface/hub is installed" "node or tests/clients/node_modules missing (.ci/deps)"
fi
check_eq "the store was never asked for the view's key" \
    "$(grep -c 'models/hub/org/model/model\.safetensors' "$T/moto-$MP.log")" 0

# config.json replaced in the store: a new commit once the listing is older than
# upstream_ttl (2 s; polled, at most 30 s).
printf '{"model_type": "test", "hidden_size": 128}' >"$T/config2.json" # s3fill key: no newline
$FILL "http://127.0.0.1:$MP" key models hub/org/model/config.json "$(cat "$T/config2.json")" ||
    bad "s3fill key"
SHA2=$(new_commit "$H/api/models/org/model" "$SHA" 150 0.2)
check_match "main moved to a new commit" "$SHA2" '^[0-9a-f]{40}$'
[ "$SHA2" != "$SHA" ] && ok "the new commit differs" || bad "the new commit differs" "still $SHA"
hf_err "the old commit: resolve" 404 RevisionNotFound "$H/org/model/resolve/$SHA/config.json"
hf_err "the old commit: info" 404 RevisionNotFound "$H/api/models/org/model/revision/$SHA"
got=
for _ in $(seq 1 150); do
    http "$T/n" "$H/org/model/resolve/main/config.json"
    if [ "$CODE" = 200 ]; then
        got="$(hdr "$T/n.hdr" X-Repo-Commit) $(sha256_hex "$T/n.body")"
        [ "${got%% *}" = "$SHA2" ] && break # a later commit would be a store change: none
    fi
    [ "$CODE" = 200 ] || [ "$CODE" = 503 ] || break
    sleep 0.2
done
check_eq "config.json at main: the new commit with the new bytes" "$got" \
    "$SHA2 $(sha256_hex "$T/config2.json")"
req "model.zt at the new commit" 200 "$H/org/model/resolve/$SHA2/model.zt"
check_eq "model.zt: byte-exact" "$(sha256_hex "$LAST.body")" "$(sha256_hex "$E/model.zt")"
req "tree at the new commit" 200 "$H/api/models/org/model/tree/$SHA2"
check_eq "model.zt's oid unchanged (its bytes are)" "$(oid_of "$LAST.body" model.zt)" "$LOCAL_ZT"

# model.zt replaced: a new identity, a new view digest, and its view at the new commit
# made from the new bytes (retried while the sidecar's entry is older than the listing).
mkdir -p "$T/new"
pack "$T/new/model.zt" --format v2 a=u8:1000001:"$T/src/a.raw" t=f32:1001:"$T/src/t.raw"
"$ZT" convert "$T/new/model.zt" -o "$T/model2.safetensors" >/dev/null || bad "zt convert"
$FILL "http://127.0.0.1:$MP" put models hub/org/model/ "$T/new" || bad "s3fill put model.zt"
SHA3=$SHA2
for _ in $(seq 1 150); do
    http "$T/i" "$H/api/models/org/model/tree/main"
    [ "$CODE" = 200 ] && SHA3=$(hdr "$T/i.hdr" X-Repo-Commit)
    [ -n "$SHA3" ] && [ "$SHA3" != "$SHA2" ] && break
    sleep 0.2
done
[ "$SHA3" != "$SHA2" ] && ok "model.zt replaced: a new commit" || bad "model.zt replaced: a new commit" "still $SHA2"
check "model.zt replaced: a new oid" [ "$(oid_of "$T/i.body" model.zt)" != "$LOCAL_ZT" ]
check "model.zt replaced: a new view oid" [ "$(oid_of "$T/i.body" model.safetensors)" != "$LOCAL_VIEW" ]
got=
for _ in $(seq 1 150); do
    http "$T/n" "$H/org/model/resolve/$SHA3/model.safetensors"
    [ "$CODE" = 200 ] && got=$(sha256_hex "$T/n.body") && break
    [ "$CODE" = 503 ] || break
    sleep 0.2
done
check_eq "the view at the new commit: zt convert of the new model.zt" "$got" \
    "$(sha256_hex "$T/model2.safetensors")"
check_eq "the store was never asked for the view's key" \
    "$(grep -c 'models/hub/org/model/model\.safetensors' "$T/moto-$MP.log")" 0
stop_daemon
finish
