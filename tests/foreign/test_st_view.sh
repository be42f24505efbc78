#!/usr/bin/env bash
# Safetensors views, end to end: `zt convert X -o X.safetensors` over every
# accepted file of the zTensor 1.2 and v2 corpora and over the foreign
# fixtures. Each output is read back by st_read.py, an independent reader
# written from the safetensors description (numpy), which checks the layout
# and that every tensor equals X's decoded tensor; or the conversion is
# refused with exit 1, naming the object, leaving no file. A safetensors
# fixture written as Hugging Face writes is its own view, byte for byte.
#   test_st_view.sh ZT GEN_FOREIGN CORPUS_DIR CORPUS_V2_DIR WORKDIR
set -uo pipefail
zt=$1 gen=$2 c1=$3 c2=$4 work=$5
case $zt in /*) ;; *) zt=$PWD/$zt ;; esac
for v in gen c1 c2; do case ${!v} in /*) ;; *) printf -v "$v" %s "$PWD/${!v}" ;; esac; done
here=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
rm -rf "$work" && mkdir -p "$work/fo" "$work/out" && cd "$work" || exit 3
(cd fo && "$gen" . >/dev/null) || { echo "gen_foreign failed"; exit 1; }
pass=0 fail=0 views=0 refused=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# view SRC: convert, then read back or check the refusal
view() {
    local src=$1 out
    out=out/$(printf '%s' "$src" | tr '/' '_').safetensors
    "$zt" convert "$src" -o "$out" 2>err.txt
    local rc=$?
    if [ $rc -eq 0 ]; then
        if $PY "$here/st_read.py" check "$zt" "$src" "$out" >/dev/null 2>st.err; then
            ok; views=$((views + 1))
        else bad "$src: $(head -c 300 st.err)"; fi
    elif [ $rc -eq 1 ] && grep -q 'object ".*" cannot be written as safetensors: ' err.txt &&
        [ ! -e "$out" ]; then
        ok; refused=$((refused + 1))
    else
        bad "$src: exit $rc: $(head -c 300 err.txt)"
    fi
}

for f in "$c1"/accept/*.zt "$c2"/accept/*.zt fo/*.safetensors fo/model.alt; do
    view "$f"
done
sharded=out/$(printf '%s' "$c2/accept/sharded.zt" | tr '/' '_').safetensors
[ -s "$sharded" ] && ok || bad "the sharded v2 model (corpus_v2 sharded.zt) has no view"
[ "$views" -ge 85 ] && ok || bad "only $views views read back (want >= 85)"
[ "$refused" -ge 15 ] && ok || bad "only $refused refusals (want >= 15)"

# a safetensors file written as Hugging Face writes is its own view
for st in plain ollama-int4 ollama-nvfp4 ollama-experts model-00001-of-00003; do
    cmp -s "fo/$st.safetensors" "out/fo_$st.safetensors.safetensors" && ok ||
        bad "$st.safetensors: its view is not the file itself"
done

# the reader itself catches a bad file: a flipped tensor byte, a cut file
cp out/fo_plain.safetensors.safetensors flipped.safetensors
sz=$(stat -c %s flipped.safetensors)
b=$(od -An -tu1 -j $((sz - 1)) -N1 flipped.safetensors | tr -d ' ') # inverted: a constant could equal it
printf "\\$(printf '%03o' $((b ^ 255)))" | dd of=flipped.safetensors bs=1 seek=$((sz - 1)) conv=notrunc 2>/dev/null
cmp -s flipped.safetensors out/fo_plain.safetensors.safetensors && bad "the flip changed nothing"
$PY "$here/st_read.py" check "$zt" fo/plain.safetensors flipped.safetensors >/dev/null 2>&1 &&
    bad "st_read.py took a changed tensor byte" || ok
head -c $((sz - 1)) out/fo_plain.safetensors.safetensors >cut.safetensors
$PY "$here/st_read.py" check "$zt" fo/plain.safetensors cut.safetensors >/dev/null 2>&1 &&
    bad "st_read.py took a cut file" || ok

echo "test_st_view.sh: $views views read back, $refused refused; $pass passed, $fail failed"
[ "$fail" = 0 ]
