#!/usr/bin/env bash
# End to end: `zt convert` over the fixtures gen_foreign writes. Round trips
# safetensors -> .zt -> safetensors must give the same file byte for byte
# (the fixtures are written the way Hugging Face's library writes them); every
# .zt is checked by zt_read.py, an independent reader of the zTensor spec.
#   test_convert.sh ZT GEN_FOREIGN WORKDIR
set -euo pipefail
zt=$1 gen=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$gen" .
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
check() { if "$@" >/dev/null 2>check.err; then ok; else bad "$*"; cat check.err; fi; }
# expect CODE PATTERN CMD...: exit status CODE and PATTERN on stderr
expect() {
  local code=$1 pat=$2; shift 2
  local rc=0; "$@" >/dev/null 2>expect.err || rc=$?
  if [ "$rc" = "$code" ] && grep -q -- "$pat" expect.err; then ok
  else bad "$* -> $rc (want $code, /$pat/)"; cat expect.err; fi
}
zread() { python3 "$here/zt_read.py" "$@"; }

# safetensors -> zt -> safetensors, with every digest and with compression
for st in plain ollama-int4 ollama-nvfp4 ollama-experts; do
  for opt in "" "--digest none" "--digest crc32c" "--compress" "--compress=9 --digest none"; do
    # shellcheck disable=SC2086
    check "$zt" convert "$st.safetensors" -o "$st.zt" $opt
    check "$zt" verify "$st.zt"
    check zread check-st "$st.safetensors" "$st.zt"
    check "$zt" convert "$st.zt" -o "$st.back.safetensors"
    check cmp "$st.safetensors" "$st.back.safetensors"
  done
done

# Ollama triples are quantized_group objects with their attributes
"$zt" info --json ollama-int4.zt >int4.json
check python3 - int4.json <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["objects"]["model.layers.0.mlp.up_proj.weight"]
a = o["attributes"]
assert o["format"] == "quantized_group" and o["shape"] == [64, 256], o
assert (a["bits"], a["group_size"], a["quant_type"], a["packing"], a["mode"]) == (4, 32, "int4", "8_per_u32", "affine"), a
assert sorted(o["components"]) == ["packed_weight", "scales", "zeros"]
PY
"$zt" info --json ollama-experts.safetensors >experts.json
check python3 - experts.json <<'PY'
import json, sys
objs = json.load(open(sys.argv[1]))["objects"]
q = [n for n, o in objs.items() if o["format"] == "quantized_group"]
assert len(q) == 8 and len(objs) == 9, sorted(objs)
a = objs["model.layers.1.mlp.experts.2.gate_proj.weight"]["attributes"]
assert (a["bits"], a["group_size"], a["quant_type"], a["mode"]) == (8, 32, "mxfp8", "mxfp8"), a
assert objs["model.layers.1.mlp.gate.weight"]["format"] == "dense"
PY

# the original names stay reachable: zt get NAME.scale reads the scales
"$zt" get ollama-int4.safetensors model.layers.0.mlp.up_proj.weight scales >scales.bin
"$zt" get ollama-int4.zt model.layers.0.mlp.up_proj.weight scales >scales.zt.bin
check cmp scales.bin scales.zt.bin
"$zt" get ollama-int4.safetensors model.layers.0.mlp.up_proj.weight.scale >scales.byname.bin
check cmp scales.bin scales.byname.bin
"$zt" get ollama-int4.zt model.layers.0.mlp.up_proj.weight.bias >bias.zt.bin
"$zt" get ollama-int4.safetensors model.layers.0.mlp.up_proj.weight zeros >bias.bin
check cmp bias.bin bias.zt.bin

# shards -> one .zt
check "$zt" convert model-0000{1,2,3}-of-00003.safetensors -o model.zt
check zread check-st model-0000{1,2,3}-of-00003.safetensors model.zt
[ "$("$zt" info model.zt | head -1 | grep -o '[0-9]* objects')" = "12 objects" ] && ok || bad "shards: 12 objects"
expect 1 'is in both' "$zt" convert plain.safetensors plain.safetensors -o twice.zt
[ ! -e twice.zt ] && ok || bad "a failed convert left its output"

# ALT -> .zt
for opt in "" "--compress --digest crc32c"; do
  # shellcheck disable=SC2086
  check "$zt" convert model.alt -o model-alt.zt $opt
  check "$zt" verify model-alt.zt
  check zread check-alt model.alt model-alt.zt
done
"$zt" info --json model-alt.zt >alt.json
check python3 - alt.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
a = m["attributes"]
assert a["model_type"] == "mistral" and a["hidden_size"] == 64 and a["rope_theta"] == 10000.0, a
assert a["rms_norm_eps"] == 9.999999747378752e-06 and a["tokenizer.pad_id"] == -1, a
assert m["objects"]["tokenizer.vocab"]["attributes"] == {"layout": "i32_length_prefixed", "count": 8}
assert m["objects"]["lm_head.qweight"]["components"]["data"]["dtype"] == "i8"
PY

# what safetensors cannot express is refused, naming the object
head -c 16 /dev/zero >c64.raw
check "$zt" pack -o c64.zt "z=complex64:2:c64.raw"
expect 1 'object "z"' "$zt" convert c64.zt -o c64.safetensors
[ ! -e c64.safetensors ] && ok || bad "refused export left its output"

# usage and input errors
expect 2 'need IN' "$zt" convert plain.safetensors
expect 2 'one IN' "$zt" convert plain.zt plain.zt -o x.safetensors
expect 2 'unknown option' "$zt" convert --bogus plain.safetensors -o x.zt
expect 3 'No such file' "$zt" convert missing.safetensors -o x.zt
printf '\x10\x00\x00\x00\x00\x00\x00\x00{"a":{"dtype":"F32"' >broken.safetensors
expect 1 'ZT_E_' "$zt" convert broken.safetensors -o x.zt
expect 0 'SYNOPSIS' sh -c "'$zt' convert --help >&2"

# the progress bar appears on a terminal, and only there
if command -v script >/dev/null; then
  script -qec "'$zt' convert plain.safetensors -o tty.zt" /dev/null >tty.out 2>&1 || true
  grep -q '100%' tty.out && ok || bad "no progress bar on a terminal"
  "$zt" convert plain.safetensors -o notty.zt 2>notty.err
  [ ! -s notty.err ] && ok || bad "progress printed to a non-terminal"
fi

echo "test_convert.sh: $pass passed, $fail failed"
[ "$fail" = 0 ]
