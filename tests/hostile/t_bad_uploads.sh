#!/bin/bash
# Hostile .zt files uploaded with PUT: each is refused with 422 and a JSON error whose
# message names the problem (the libztensor code, and the object, component and byte
# where it applies); nothing is published, the file it would replace is untouched, the
# staging directory is emptied, and memory stays bounded (a zstd bomb, a 2^64 length).
#
# The files: every reject/ file of tests/corpus's generator (an encoder independent of
# libztensor: truncation at every structural boundary, bad magic, manifest sizes that lie,
# offsets and lengths out of bounds or overflowing, deep CBOR nesting, digest mismatches,
# zstd bombs and lies; its NAME.why gives the code the message must contain), plus files
# made here with `zt pack` and byte edits: cut short, magic damaged at either end, the
# footer's size lying, junk before or after, a component moved past the end, and two
# components made to overlap. (tests/uploads/t_put.sh has the basic random/truncated/
# flipped-digest PUTs; this is the exhaustive version.) Overlapping components are valid
# zTensor (docs/FORMAT-NOTES.md): accepted when their digests hold, refused when not.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/g.raw" 5000
pack "$R/good.zt" w=u8:5000:"$T/g.raw"
cp "$R/good.zt" "$T/good.zt"
start_daemon "$R" "${OPEN[@]}" || finish
GOOD_ETAG=$(listing_field good.zt etag)
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$D_PID/status"; }
HWM0=$(hwm)

# refused LABEL FILE WHY_ERE [NAME]: PUT FILE as NAME (default bad.zt): 422, a JSON error
# invalid_file or digest_mismatch whose message matches WHY_ERE.
refused() {
    local label=$1 file=$2 why=$3 name=${4:-bad.zt} code
    put "$name" "$file"
    code=$(jerr_code "$LAST.body")
    if [ "$CODE" != 422 ] || ! [[ $code =~ ^(invalid_file|digest_mismatch)$ ]]; then
        bad "$label" "HTTP $CODE $(head -c 300 "$LAST.body")"
    elif ! grep -Eq -- "$why" "$LAST.body"; then
        bad "$label" "the message does not say /$why/: $(head -c 300 "$LAST.body")"
    else
        ok "$label: 422 $code /$why/"
    fi
}

# ---- the corpus
CORPUS=$T/corpus
if [ -x "${ZT_GEN_CORPUS:-}" ] && "$ZT_GEN_CORPUS" "$CORPUS" >"$T/gen.out" 2>&1; then
    n=0
    : >"$T/corpus.cfg"
    for f in "$CORPUS"/reject/*.zt; do
        [ "$(stat -c %s "$f")" -le $((4 << 20)) ] || continue # the 101 MiB sparse file
        b=$(basename "$f" .zt)
        printf 'url = "%s/v1/files/c-%s.zt"\nupload-file = "%s"\noutput = "%s"\n' \
            "$URL" "$b" "$f" "$T/c-$b.body" >>"$T/corpus.cfg"
        n=$((n + 1))
    done
    # One curl for all of them (it reconnects where the server closes).
    curl -s --max-time 120 -K "$T/corpus.cfg" -w '%{http_code} %{url_effective}\n' >"$T/corpus.codes" 2>"$T/corpus.err"
    check_eq "corpus: $n reject files uploaded" "$(wc -l <"$T/corpus.codes")" "$n"
    bad_n=0
    while read -r st u; do
        b=${u##*/c-}
        b=${b%.zt}
        why=$(cat "$CORPUS/reject/$b.why")
        code=$(jerr_code "$T/c-$b.body")
        if [ "$st" != 422 ] || ! [[ $code =~ ^(invalid_file|digest_mismatch)$ ]] ||
            ! grep -Eq -- "($why)" "$T/c-$b.body"; then
            bad "corpus $b" "HTTP $st, want 422 naming $why: $(head -c 300 "$T/c-$b.body")"
            bad_n=$((bad_n + 1))
        fi
    done <"$T/corpus.codes"
    check_eq "corpus: every reject file refused with 422 naming its code" "$bad_n" 0
    refused "corpus: deep CBOR over an existing file" "$CORPUS/reject/cbor_depth_100000.zt" ZT_E_DEPTH good.zt
    refused "corpus: zstd bomb over an existing file" "$CORPUS/reject/zstd_bomb_1GiB.zt" ZT_E_SIZE good.zt
else
    skip "the corpus reject files" "ZT_GEN_CORPUS is not set or gen_corpus failed: $(head -c 200 "$T/gen.out" 2>/dev/null)"
fi

# ---- files made here
rand "$T/big.raw" $((1 << 20))
pack "$T/v.zt" big=u8:$((1 << 20)):"$T/big.raw" small=u8:5000:"$T/g.raw"
V=$T/v.zt
SZ=$(stat -c %s "$V")
# edit OUT PYTHON: OUT is v.zt changed by the Python statements acting on the bytearray d.
edit() { "$PY" -c "import struct, sys; d = bytearray(open('$V', 'rb').read()); $2; open('$1', 'wb').write(d)"; }

for cut in 1 7 8 63 64 65 $((SZ / 2)) $((SZ - 17)) $((SZ - 16)) $((SZ - 9)) $((SZ - 8)) $((SZ - 1)); do
    head -c "$cut" "$V" >"$T/cut.zt"
    refused "cut to $cut of $SZ bytes" "$T/cut.zt" 'ZT_E_(TRUNCATED|MANIFEST_SIZE|MAGIC|CBOR|BOUNDS)'
done
edit "$T/e.zt" "d[0:8] = b'ZTEN2000'"
refused "header magic damaged" "$T/e.zt" 'ZT_E_MAGIC.*byte 0'
edit "$T/e.zt" "d[-8:] = b'ZTEN100X'"
refused "footer magic damaged" "$T/e.zt" 'ZT_E_(TRUNCATED|MAGIC)'
for lie in '+1' '-1' '*0' '*0+8' '*0+len(d)' '*0+len(d)-16' '*0+(1<<64)-1' '*0+(1<<63)' '*0+(64<<20)+1'; do
    edit "$T/e.zt" "n = struct.unpack('<Q', d[-16:-8])[0]; d[-16:-8] = struct.pack('<Q', n$lie)"
    refused "footer size lies (size$lie)" "$T/e.zt" 'ZT_E_(MANIFEST_SIZE|LIMIT|CBOR|SCHEMA|TRUNCATED|BOUNDS)'
done
edit "$T/e.zt" "d[0:0] = b'junk' * 16"
refused "64 bytes of junk before the file" "$T/e.zt" 'ZT_E_MAGIC'
edit "$T/e.zt" "d += b'junk' * 16"
refused "64 bytes of junk after the file" "$T/e.zt" 'ZT_E_(TRUNCATED|MAGIC)'
edit "$T/e.zt" "d += bytes(1 << 20)"
refused "1 MiB of zeros after the file" "$T/e.zt" 'ZT_E_(TRUNCATED|MAGIC|MANIFEST_SIZE)'
# The manifest is CBOR at the end: "offset" (a 6-byte text, 0x66) then the value; the
# first component sits at 64 (0x18 0x40). Move it far past the end of the file.
edit "$T/e.zt" "i = d.rindex(b'\x66offset\x18\x40'); d[i + 7:i + 9] = b'\x19\xff\xc0'; d[-16:-8] = struct.pack('<Q', struct.unpack('<Q', d[-16:-8])[0] + 1)"
refused "a component moved past the end of the file" "$T/e.zt" 'ZT_E_(BOUNDS|ALIGN).*object \\"(big|small)'

# Two 64-byte components, a at offset 64 and b at 128 (0x18 0x80); b's offset made 64.
rand "$T/o.raw" 64
pack "$T/same.zt" a=u8:64:"$T/o.raw" b=u8:64:"$T/o.raw"
rand "$T/o2.raw" 64
pack "$T/diff.zt" a=u8:64:"$T/o.raw" b=u8:64:"$T/o2.raw"
for f in same diff; do
    "$PY" -c "import sys; d = open(sys.argv[1], 'rb').read(); old = b'\x66offset\x18\x80'
assert d.count(old) == 1; open(sys.argv[2], 'wb').write(d.replace(old, b'\x66offset\x18\x40'))" \
        "$T/$f.zt" "$T/overlap-$f.zt"
done
refused "b moved onto a, other bytes than b's digest" "$T/overlap-diff.zt" 'ZT_E_DIGEST_MISMATCH.*object \\"b'
put overlap.zt "$T/overlap-same.zt"
check_code "b moved onto a with the same bytes: valid (components may overlap), 201" 201
req "overlapping components: b served" 200 "$URL/v1/files/overlap.zt/objects/b/data"
check_same "overlapping components: b's bytes are a's" "$LAST.body" "$T/o.raw"
req "overlapping components: DELETE" 204 -X DELETE "$URL/v1/files/overlap.zt"

# ---- several at once
pids=()
for i in 1 2 3 4 5 6 7 8; do
    head -c $((i * 1000)) "$V" >"$T/par$i.zt"
    curl -s --max-time 60 -o /dev/null -w '%{http_code}\n' -T "$T/par$i.zt" "$URL/v1/files/par$i.zt" >"$T/par$i.code" &
    pids+=($!)
done
wait "${pids[@]}"
check_eq "8 truncated files at once: all 422" "$(cat "$T"/par*.code | sort | uniq -c | awk '{print $1 "x" $2}')" 8x422

# ---- nothing published, nothing left behind, memory bounded
check_eq "nothing but good.zt published" "$(published_files "$R" | tr '\n' ' ')" "good.zt "
check_same "good.zt untouched" "$R/good.zt" "$T/good.zt"
check_eq "good.zt's ETag unchanged" "$(listing_field good.zt etag)" "$GOOD_ETAG"
check_staging_empty "staging empty" "$R"
HWM1=$(hwm)
note "daemon peak RSS: $((HWM0 / 1024)) MiB before the uploads, $((HWM1 / 1024)) MiB after"
check "peak RSS grew by less than 256 MiB (a zstd bomb, a 2^64 length)" [ $((HWM1 - HWM0)) -lt $((256 << 10)) ]
daemon_alive "daemon alive"
finish
