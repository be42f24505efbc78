#!/bin/bash
# A .zt-only repository, as an engine loads it through /hf (issue 25): a model in two
# zTensor v2 shards (model-0000N-of-00002.zt) plus config.json and tokenizer.json. The
# repository lists each shard's safetensors view (model-0000N-of-00002.safetensors) and
# model.safetensors.index.json; downloaded by resolve into a directory, the model loads
# through its index with an independent reader (tests/foreign/st_index_load.py, numpy)
# and every tensor equals its source; each view is byte-identical to `zt convert`'s
# output and claims no sha256 (no lfs block), the index's lfs sha256 is its bytes'. The
# same model through @huggingface/hub's snapshotDownload loads from its snapshot too.
#   t_zt_only.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$@"
LOAD=$REPO/tests/foreign/st_index_load.py

R=$T/root
D=$R/org/ztonly
S1=model-00001-of-00002 S2=model-00002-of-00002
mkdir -p "$D" "$T/src" "$T/dl" "$T/conv"
rand "$T/src/w.raw" 16384
rand "$T/src/b.raw" 256
rand "$T/src/e.raw" 4096
pack "$D/$S1.zt" --format v2 l0.w=f32:64x64:"$T/src/w.raw" l0.b=f32:64:"$T/src/b.raw"
pack "$D/$S2.zt" --format v2 l1.w=u8:4096:"$T/src/e.raw"
printf '{"model_type": "test", "hidden_size": 64}\n' >"$D/config.json"
printf '{"version": "1.0", "model": {"type": "BPE"}}\n' >"$D/tokenizer.json"
for s in $S1 $S2; do "$ZT" convert "$D/$s.zt" -o "$T/conv/$s.safetensors" >/dev/null; done
start_daemon "$R" || finish
H=$URL/hf

req "info" 200 "$H/api/models/org/ztonly"
cp "$LAST.body" "$T/info.json"
check_eq "info: the files, the shards' views and the index" \
    "$($PY -c 'import json,sys; print(" ".join(s["rfilename"] for s in json.load(open(sys.argv[1]))["siblings"]))' "$T/info.json")" \
    "config.json $S1.safetensors $S1.zt $S2.safetensors $S2.zt model.safetensors.index.json tokenizer.json"
sib() { # sib NAME KEY...: a field of NAME's sibling (MISSING when absent)
    $PY -c 'import json,sys
s=[s for s in json.load(open(sys.argv[1]))["siblings"] if s["rfilename"]==sys.argv[2]][0]
for k in sys.argv[3:]: s=s.get(k, "MISSING") if isinstance(s, dict) else "MISSING"
print(s if isinstance(s, str) else json.dumps(s))' "$T/info.json" "$@"
}

for s in $S1 $S2; do
    v=$s.safetensors
    req "GET $v" 200 "$H/org/ztonly/resolve/main/$v"
    cp "$LAST.body" "$T/dl/$v"
    check_eq "$v: byte-identical to zt convert's output" "$(sha256_hex "$T/dl/$v")" "$(sha256_hex "$T/conv/$v")"
    check_eq "$v: size in info" "$(sib "$v" size)" "$(stat -c %s "$T/conv/$v")"
    check_eq "$v: no lfs block (a view's digest is not its bytes' sha256)" "$(sib "$v" lfs)" MISSING
    head_req "HEAD $v" 200 "/hf/org/ztonly/resolve/main/$v"
    check_eq "HEAD $v: X-Linked-Size" "$(hdr "$LAST.hdr" X-Linked-Size)" "$(stat -c %s "$T/conv/$v")"
    check_eq "HEAD $v: X-Linked-Etag is the blobId" "$(hdr "$LAST.hdr" X-Linked-Etag)" "\"$(sib "$v" blobId)\""
done
if ERR=$($HFC st "$T/dl/$S1.safetensors" "$T/src/w.raw:l0.w" "$T/src/b.raw:l0.b" 2>&1) &&
    ERR=$($HFC st "$T/dl/$S2.safetensors" "$T/src/e.raw:l1.w" 2>&1); then
    ok "the views: every tensor equals its raw source"
else
    bad "the views' tensors" "$ERR"
fi

I=model.safetensors.index.json
req "GET $I" 200 "$H/org/ztonly/resolve/main/$I"
cp "$LAST.body" "$T/dl/$I"
check_eq "$I: lfs sha256 is its bytes'" "$(sib "$I" lfs sha256)" "$(sha256_hex "$T/dl/$I")"
check_eq "$I: size in info" "$(sib "$I" size)" "$(stat -c %s "$T/dl/$I")"
check_eq "$I: the blobId is its sha256" "$(sib "$I" blobId)" "$(sha256_hex "$T/dl/$I")"
if OUT=$($PY "$LOAD" "$T/dl" "$ZT" "$D/$S1.zt" "$D/$S2.zt" 2>&1); then
    ok "the model loads through its index, every tensor equals the source ($OUT)"
else
    bad "the model through its index" "$OUT"
fi

# As an engine gets it: @huggingface/hub's snapshotDownload into the hub's cache layout,
# then the model loads from the snapshot directory through its index.
CLIENTS=$REPO/tests/clients
if [ -f "$CLIENTS/node_modules/@huggingface/hub/package.json" ] && command -v node >/dev/null; then
    SNAP=$(node --input-type=module -e '
const [clients, hubUrl, cacheDir] = process.argv.slice(1);
const hub = await import(clients + "/node_modules/@huggingface/hub/dist/index.mjs");
console.debug = () => {};
console.log(await hub.snapshotDownload({ repo: "org/ztonly", hubUrl, cacheDir }));' \
        "$CLIENTS" "$H" "$T/cache" 2>"$T/snap.err")
    check_match "snapshotDownload: snapshots/<commit>" "$SNAP" "/snapshots/$($HFC field "$T/info.json" sha)\$"
    if OUT=$($PY "$LOAD" "$SNAP" "$ZT" "$D/$S1.zt" "$D/$S2.zt" 2>&1); then
        ok "the snapshot loads through its index, every tensor equals the source ($OUT)"
    else
        bad "the snapshot through its index" "$OUT $(head -5 "$T/snap.err")"
    fi
else
    bad "@huggingface/hub is installed" "run npm ci in tests/clients (.ci/deps)"
fi

for f in config.json tokenizer.json; do
    req "$f" 200 "$H/org/ztonly/resolve/main/$f"
    check_eq "$f: byte-exact" "$(sha256_hex "$LAST.body")" "$(sha256_hex "$D/$f")"
    check_eq "$f: lfs sha256 is its sha256" "$(sib "$f" lfs sha256)" "$(sha256_hex "$D/$f")"
done
finish
