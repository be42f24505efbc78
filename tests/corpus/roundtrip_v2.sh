#!/bin/bash
# roundtrip_v2.sh ZT CORPUS_V2_DIR
#
# zt pack --format v2 and zt convert between zTensor v2, 1.2 and safetensors:
#  - a canonical v2 file (zt pack --format v2) -> 1.2 -> v2 is byte-exact;
#  - canonical form: the same tensors in another argument order give the same
#    bytes; identical tensors are stored once;
#  - the content digest does not see the layout: --compress (seekable zstd),
#    --align 4096 and a 1.2 detour give the same content digest, other bytes;
#  - every accepted file of the v2 corpus goes to 1.2 and back, every part
#    decoded the same, attributes value for value (its JSON), or is refused by
#    name, with exit 1, when 1.2 cannot express one of its objects;
#  - v2 -> safetensors -> v2: the same tensors;
#  - files written by zt pack --format v2 pass zt verify, and their parts
#    come back as packed.
# Last line: "N passed, M failed"; exit status 1 when M > 0.
set -u
ZT=${1:?usage: roundtrip_v2.sh ZT CORPUS_V2_DIR}
C=${2:?usage: roundtrip_v2.sh ZT CORPUS_V2_DIR}
case $ZT in /*) ;; *) ZT=$PWD/$ZT ;; esac
case $C in /*) ;; *) C=$PWD/$C ;; esac
PY=/usr/bin/python3
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87:print_stacktrace=1"
T=$(mktemp -d "${TMPDIR:-/tmp}/zt_rt2.XXXXXX") || exit 3
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*"
}
check() {
    local what=$1
    shift
    if "$@" >/dev/null 2>&1; then ok; else bad "$what"; fi
}
json() { "$ZT" info --json "$1"; }
cdigest() { json "$1" | $PY -c 'import json,sys; print(json.load(sys.stdin).get("content_digest"))'; }
# objects of a manifest JSON without what a layout changes (offsets, lengths,
# encodings, digest algorithm), for comparing two files of one model
model() {
    json "$1" | $PY -c '
import json, sys
d = json.load(sys.stdin)
for o in d["objects"].values():
    for c in o["components"].values():
        for k in ("offset", "length", "encoding", "uncompressed_length", "digest", "digest_covers", "shard"):
            c.pop(k, None)
print(json.dumps({"attributes": d.get("attributes"), "objects": d["objects"]}, sort_keys=True))'
}
# same_parts A B: every part of A decodes to the bytes of the same part of B
same_parts() {
    json "$1" | $PY -c '
import json, sys
for o, ob in json.load(sys.stdin)["objects"].items():
    for c in ob["components"]:
        print(o.encode().hex(), c.encode().hex())' >"$T/parts" || return 1
    local n=0 ho hc o c
    while read -r ho hc; do
        o=$(printf '%s' "$ho" | xxd -r -p)
        c=$(printf '%s' "$hc" | xxd -r -p)
        "$ZT" get "$1" "$o" "$c" >"$T/a.bin" 2>/dev/null || return 1
        "$ZT" get "$2" "$o" "$c" >"$T/b.bin" 2>/dev/null || return 1
        cmp -s "$T/a.bin" "$T/b.bin" || return 1
        n=$((n + 1))
    done <"$T/parts"
    [ "$n" -gt 0 ]
}

# ---- zt pack --format v2 and the round trip through 1.2
cd "$T" || exit 3
head -c 8192 /dev/urandom >w.raw
head -c 96 /dev/urandom >b.raw
printf '\001\000\001\001\000' >flag.raw
head -c 40 /dev/urandom >e8.raw
head -c 2000000 /dev/zero | tr '\0' 'z' >z.raw
specs=(w=f32:32x64:w.raw bias=bf16:48:b.raw flag=bool:5:flag.raw scale=f8_e8m0:40:e8.raw
    tied=f32:32x64:w.raw z=u8:2000000:z.raw)
"$ZT" pack --format v2 -o m.zt "${specs[@]}"
check "zt pack --format v2" test -s m.zt
out=$("$ZT" verify m.zt 2>&1)
check "zt pack --format v2: zt verify: $out" test "${out%%$'\n'*}" = "m.zt: ok (6 objects, 6 digests checked)"
check "zt pack --format v2: every part as packed" bash -c \
    "'$ZT' get m.zt w | cmp -s - w.raw && '$ZT' get m.zt flag | cmp -s - flag.raw && '$ZT' get m.zt z | cmp -s - z.raw"
"$ZT" info m.zt >info.txt
check "identical tensors share one blob (canonical rule 3)" test \
    "$(grep -A1 '^  w ' info.txt | tail -1 | grep -o '@[0-9]*')" = \
    "$(grep -A1 '^  tied ' info.txt | tail -1 | grep -o '@[0-9]*')"
check "canonical placement: blobs at multiples of 65536" bash -c \
    "! grep -o '@[0-9]*' info.txt | tr -d @ | awk '\$1 % 65536 { exit 1 }' || true"
"$ZT" pack --format v2 -o m_reordered.zt "${specs[5]}" "${specs[3]}" "${specs[0]}" "${specs[2]}" \
    "${specs[1]}" "${specs[4]}"
check "canonical form: the same tensors in another order give the same bytes" cmp m.zt m_reordered.zt
"$ZT" convert m.zt -o m12.zt
check "v2 -> 1.2" bash -c "'$ZT' info m12.zt | grep -q 'zt-1.2'"
check "v2 -> 1.2: bool is the 1.2 dtype bool" bash -c "'$ZT' info --json m12.zt | grep -q '\"dtype\": \"bool\"'"
"$ZT" convert m12.zt --format v2 -o m2.zt
check "v2 -> 1.2 -> v2 is byte-exact" cmp m.zt m2.zt
"$ZT" pack --format v2 --compress --align 4096 -o mz.zt "${specs[@]}"
check "seekable zstd, 4 KiB: zt verify" "$ZT" verify mz.zt
check "seekable zstd, 4 KiB: other bytes" bash -c "! cmp -s m.zt mz.zt"
check "the content digest does not see encodings or alignment" test "$(cdigest m.zt)" = "$(cdigest mz.zt)"
check "a 1.2 detour keeps the content digest" test "$(cdigest m.zt)" = "$(cdigest m2.zt)"
"$ZT" pack --format v2 --digest sha256 -o ms.zt "${specs[@]}"
check "another digest algorithm, another content digest" test "$(cdigest m.zt)" != "$(cdigest ms.zt)"
"$ZT" pack --format v2 -o f4.zt q=f4_e2m1:7:flag.raw 2>err.txt
check "zt pack: f4_e2m1 packs 7 elements in 4 bytes, so 5 bytes are refused" grep -q ZT_E_SIZE err.txt
printf '\041\103\145\007' >f4.raw # 7 nibbles; the 8th, unused, is 0 (Appendix A)
"$ZT" pack --format v2 -o f4.zt q=f4_e2m1:7:f4.raw
check "zt pack: 7 f4_e2m1 elements in 4 bytes" "$ZT" verify f4.zt
"$ZT" convert f4.zt -o f4_12.zt 2>err.txt
rc=$?
check "v2 -> 1.2 refuses f4_e2m1 by name (exit $rc)" bash -c "[ $rc -eq 1 ] && grep -q 'object \"q\".*f4_e2m1' err.txt && [ ! -e f4_12.zt ]"
"$ZT" pack --format v2 --digest crc32c -o x.zt "${specs[0]}" 2>/dev/null
check "zt pack --format v2 refuses crc32c" test $? -eq 2

# ---- every accepted file of the v2 corpus: to 1.2 and back, or refused by name
n=0
for f in "$C"/accept/*.zt; do
    base=${f%.zt}
    name=${base##*/}
    [ -f "$base.companion" ] && continue
    [ -s "$base.expect" ] || continue # data shards and empty files: nothing to convert
    rm -f r12.zt r2.zt
    "$ZT" convert "$f" -o r12.zt 2>err.txt
    rc=$?
    if [ $rc -eq 1 ]; then
        if grep -q 'cannot be written as zTensor 1.2: ' err.txt && [ ! -e r12.zt ]; then ok; else
            bad "$name -> 1.2: refused without naming why: $(head -c 300 err.txt)"
        fi
        continue
    fi
    if [ $rc -ne 0 ]; then bad "$name -> 1.2: exit $rc: $(head -c 300 err.txt)"; continue; fi
    check "$name -> 1.2: zt verify" "$ZT" verify r12.zt
    check "$name -> 1.2: every part the same" same_parts "$f" r12.zt
    "$ZT" convert r12.zt --format v2 -o r2.zt 2>err.txt || { bad "$name -> 1.2 -> v2: $(head -c 300 err.txt)"; continue; }
    check "$name -> 1.2 -> v2: zt verify" "$ZT" verify r2.zt
    check "$name -> 1.2 -> v2: every part the same" same_parts "$f" r2.zt
    check "$name -> 1.2 -> v2: the same model (shapes, layouts, types, attributes)" \
        test "$(model "$f")" = "$(model r2.zt)"
    n=$((n + 1))
done
check "corpus files through 1.2 and back: $n" test "$n" -ge 20
for want in layouts unknown_layout_and_type; do
    "$ZT" convert "$C/accept/$want.zt" -o no.zt 2>err.txt
    check "$want.zt -> 1.2 is refused by name" bash -c "grep -q 'cannot be written as zTensor 1.2' err.txt && [ ! -e no.zt ]"
done

# ---- v2 -> safetensors -> v2
"$ZT" convert m.zt -o m.safetensors 2>err.txt
check "v2 -> safetensors refuses f8_e8m0 (no safetensors dtype) by name" bash -c \
    "grep -q 'object \"scale\".*f8_e8m0' err.txt && [ ! -e m.safetensors ]"
"$ZT" pack --format v2 -o mst.zt "${specs[0]}" "${specs[1]}" "${specs[2]}" "${specs[4]}" "${specs[5]}"
"$ZT" convert mst.zt -o m.safetensors 2>err.txt
check "v2 -> safetensors: $(head -c 200 err.txt)" test -s m.safetensors
"$ZT" convert m.safetensors --format v2 -o from_st.zt
check "v2 -> safetensors: every tensor the same" same_parts mst.zt m.safetensors
check "v2 -> safetensors -> v2: every part the same" same_parts mst.zt from_st.zt
check "v2 -> safetensors -> v2: the same content digest" test "$(cdigest mst.zt)" = "$(cdigest from_st.zt)"
"$ZT" convert "$C/accept/dtype_bf16.zt" -o bf.safetensors
check "corpus dtype_bf16 -> safetensors" same_parts "$C/accept/dtype_bf16.zt" bf.safetensors
"$ZT" convert f4.zt -o f4.safetensors 2>err.txt
check "v2 -> safetensors refuses f4_e2m1 by name" bash -c "grep -q 'object \"q\"' err.txt && [ ! -e f4.safetensors ]"

# ---- a part that cannot be read ends the conversion cleanly: exit 1, the
# reason, no output (a failed decoder set-up once freed a stale pointer)
for bad in shard_missing shard_size_wrong seekable_no_checksum; do
    for out in bad.safetensors bad12.zt; do
        rm -f "$out"
        "$ZT" convert "$C/reject/$bad.zt" -o "$out" 2>err.txt
        rc=$?
        check "$bad.zt -> $out: exit 1 ($rc), a ZT_E_ reason, no output" bash -c \
            "[ $rc -eq 1 ] && grep -q 'ZT_E_' err.txt && [ ! -e $out ]"
    done
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
