#!/bin/bash
# A .zt-only repository (a zTensor v2 model plus config.json and tokenizer.json), as an
# engine would load it through /hf: the listed safetensors view (model.safetensors beside
# model.zt) and plain files, downloaded by resolve and by @huggingface/hub, read by an
# independent safetensors reader (hfcheck.py st): every tensor equals the source.
# Each part runs once the catalog lists what it needs, and is a SKIP line until then:
# the safetensors views and the plain files are other changes of the catalog.
#   t_zt_only.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
D=$R/org/ztonly
mkdir -p "$D" "$T/src"
rand "$T/src/w.raw" 16384
rand "$T/src/b.raw" 256
pack "$D/model.zt" --format v2 w=f32:64x64:"$T/src/w.raw" b=f32:64:"$T/src/b.raw"
printf '{"model_type": "test", "hidden_size": 64}\n' >"$D/config.json"
printf '{"version": "1.0", "model": {"type": "BPE"}}\n' >"$D/tokenizer.json"
start_daemon "$R" || finish
H=$URL/hf

req "info" 200 "$H/api/models/org/ztonly"
cp "$LAST.body" "$T/info.json"
listed() { $PY -c 'import json,sys; sys.exit(0 if sys.argv[2] in [s["rfilename"] for s in json.load(open(sys.argv[1]))["siblings"]] else 1)' "$T/info.json" "$1"; }
check_eq "model.zt is listed" "$(listed model.zt && echo yes)" yes

if listed model.safetensors; then
    req "the view" 200 "$H/org/ztonly/resolve/main/model.safetensors"
    cp "$LAST.body" "$T/view.safetensors"
    if ERR=$($HFC st "$T/view.safetensors" "$T/src/w.raw:w" "$T/src/b.raw:b" 2>&1); then
        ok "the view: every tensor equals the source"
    else
        bad "the view" "$ERR"
    fi
    "$ZT" convert "$D/model.zt" -o "$T/conv.safetensors" >/dev/null
    check_eq "the view is zt convert's output" "$(sha256_hex "$T/view.safetensors")" "$(sha256_hex "$T/conv.safetensors")"
    head_req "HEAD the view" 200 "/hf/org/ztonly/resolve/main/model.safetensors"
    check_eq "the view: X-Linked-Size" "$(hdr "$LAST.hdr" X-Linked-Size)" "$(stat -c %s "$T/conv.safetensors")"
    if listed model.safetensors.index.json; then
        req "the index" 200 "$H/org/ztonly/resolve/main/model.safetensors.index.json"
        check_eq "the index maps every tensor to a listed file" "$($PY -c '
import json,sys
idx=json.load(open(sys.argv[1])); names=[s["rfilename"] for s in json.load(open(sys.argv[2]))["siblings"]]
print(sorted(idx["weight_map"]) == ["b", "w"] and all(v in names for v in idx["weight_map"].values()))' "$LAST.body" "$T/info.json")" True
    else
        skip "the index" "model.safetensors.index.json is not listed yet (the views' index)"
    fi
else
    skip "the safetensors view" "model.safetensors is not listed yet (the catalog's safetensors views)"
fi
for f in config.json tokenizer.json; do
    if listed "$f"; then
        req "$f" 200 "$H/org/ztonly/resolve/main/$f"
        check_eq "$f: byte-exact" "$(sha256_hex "$LAST.body")" "$(sha256_hex "$D/$f")"
        check_eq "$f: lfs sha256 is its sha256" "$($PY -c 'import json,sys; print([s["lfs"]["sha256"] for s in json.load(open(sys.argv[1]))["siblings"] if s["rfilename"]==sys.argv[2]][0])' "$T/info.json" "$f")" "$(sha256_hex "$D/$f")"
    else
        skip "$f" "plain files are not catalog entries yet"
    fi
done
finish
