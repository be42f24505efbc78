#!/bin/bash
# Safetensors views (GET|HEAD /v1/files/{file}/safetensors), end to end:
#  - every file of the zTensor 1.2 corpus, of the v2 corpus (the sharded model
#    included) and of the foreign fixtures: the view ztensord sends is cmp-equal
#    to `zt convert FILE -o OUT.safetensors`, and st_read.py (an independent
#    reader, numpy) reads it back against FILE's tensors; a file zt convert
#    refuses gets 422 view_unsupported naming the object, never a 200;
#  - a .safetensors file is its own view (its /raw bytes and ETag);
#  - 200 random ranges of a raw and of a zstd view (many crossing the header /
#    data boundary and tensor boundaries) equal the same slices of zt convert's
#    output; several ranges give the whole; 416 past the end;
#  - HEAD, If-None-Match (304), If-Match (412), If-Range; the ETag is the
#    digests' on every copy of a file once verified, the file identity's
#    without digests; Content-Disposition names STEM.safetensors (filename*
#    for UTF-8 names);
#  - a corrupt zstd frame: the connection closes before Content-Length.
#   t_view.sh ZTENSORD ZT GEN_FOREIGN CORPUS_DIR CORPUS_V2_DIR
GEN=${3:?usage: $0 ZTENSORD ZT GEN_FOREIGN CORPUS_DIR CORPUS_V2_DIR}
C1=${4:?} C2=${5:?}
. "$(dirname "$0")/lib.sh" "$1" "$2"
case $GEN in /*) ;; *) GEN=$PWD/$GEN ;; esac
ST_READ=$REPO/tests/foreign/st_read.py

R=$T/root
mkdir -p "$R/c1" "$R/c2" "$R/fo" "$R/own" "$T/conv" "$T/rg"
cp "$C1"/accept/*.zt "$R/c1/" && cp "$C2"/accept/*.zt "$C2"/accept/*.companion "$R/c2/" || { bad "corpora copied" "missing"; finish; }
(cd "$R/fo" && "$GEN" . >/dev/null) || { bad "fixtures generated" "gen_foreign failed"; finish; }

# Files of this test: raw and zstd models of several tensors (boundaries inside
# the ranges), the raw one twice (a second copy: another inode), one without
# digests, one with a UTF-8 name, and a zstd frame damaged in its middle.
rand "$T/a.bin" 1200000
text "$T/b.bin" 700000
rand "$T/c.bin" 4096
text "$T/big.bin" 6000000
ARGS=(w.a=f32:300x1000:"$T/a.bin" w.b=u8:700000:"$T/b.bin" w.c=i16:2048:"$T/c.bin")
pack "$R/m.zt" "${ARGS[@]}" || finish
cp "$R/m.zt" "$R/m_copy.zt"
pack "$R/z.zt" --compress "${ARGS[@]}" || finish
pack "$R/nd.zt" --digest none "${ARGS[@]}" || finish
pack "$R/météo.zt" w=u8:4096:"$T/c.bin" || finish
pack "$R/bad.zt" --compress --digest none big=u8:6000000:"$T/big.bin" small=u8:4096:"$T/c.bin" || finish
info_json "$R/bad.zt" "$T/bad.json"
off=$(cfield "$T/bad.json" big data offset)
len=$(cfield "$T/bad.json" big data length)
head -c 65536 /dev/urandom | dd of="$R/bad.zt" bs=1 seek=$((off + len / 2)) conv=notrunc 2>/dev/null
cp "$R/fo/plain.safetensors" "$R/own/p.safetensors"

start_daemon "$R" || finish
vurl() { printf '%s/v1/files/%s/safetensors' "$URL" "$($HELP quote "$1")"; }

# ---- every file: the view is zt convert's output, or both refuse
views=0 refused=0 others=0
for f in "$R"/c1/*.zt "$R"/c2/*.zt "$R"/fo/*.safetensors "$R"/fo/*.alt; do
    rel=${f#"$R"/}
    out=$T/conv/$(printf '%s' "$rel" | tr '/' '_').safetensors
    "$ZT" convert "$f" -o "$out" >/dev/null 2>"$T/conv.err"
    rc=$?
    http "$T/v" "$(vurl "$rel")"
    if [ $rc -eq 0 ]; then
        if [ "$CODE" != 200 ] || ! cmp -s "$T/v.body" "$out"; then
            bad "$rel: the view is zt convert's output" "HTTP $CODE, $(stat -c %s "$T/v.body") bytes vs $(stat -c %s "$out"): $(head -c 300 "$T/v.body")"
        elif ! $PY "$ST_READ" check "$ZT" "$f" "$T/v.body" >/dev/null 2>"$T/st.err"; then
            bad "$rel: st_read.py reads the view back" "$(head -c 300 "$T/st.err")"
        else
            views=$((views + 1))
        fi
    elif grep -q 'object ".*" cannot be written as safetensors: ' "$T/conv.err"; then
        obj=$(sed -n 's/.*object "\([^"]*\)" cannot be written as safetensors: .*/\1/p' "$T/conv.err" | head -1)
        if [ "$CODE" = 422 ] && ERRMSG=$($HELP errbody "$T/v.body" view_unsupported 2>&1) &&
            grep -qF "object \"$obj\" cannot be written as safetensors: " <<<"$ERRMSG"; then
            refused=$((refused + 1))
        else
            bad "$rel: refused as zt convert refuses (object \"$obj\")" "HTTP $CODE: $(head -c 300 "$T/v.body")"
        fi
    else
        others=$((others + 1))
        note "$rel: zt convert failed otherwise ($(head -c 200 "$T/conv.err")); the view: HTTP $CODE"
        check_ne "$rel: no 200 for a file zt convert cannot write" "$CODE" 200
    fi
done
note "$views views equal to zt convert's and read back, $refused refused alike, $others other failures"
check_ge "views compared" "$views" 85
check_ge "refusals compared" "$refused" 15
check "the sharded v2 model's view" cmp -s <(curl -s "$(vurl c2/sharded.zt)") "$T/conv/c2_sharded.zt.safetensors"

# ---- a .safetensors file is its own view
req "own view" 200 "$(vurl own/p.safetensors)"
check_same "own view: the file's bytes" "$LAST.body" "$R/own/p.safetensors"
cp "$LAST.hdr" "$T/own.hdr"
req "own view: /raw" 200 "$URL/v1/files/own/p.safetensors/raw"
check_eq "own view: /raw's ETag" "$(hdr "$T/own.hdr" ETag)" "$(hdr "$LAST.hdr" ETag)"
check_eq "own view: Content-Disposition" "$(hdr "$T/own.hdr" Content-Disposition)" \
    'attachment; filename="p.safetensors"'

# ---- headers, validators
for n in m z nd m_copy; do "$ZT" convert "$R/$n.zt" -o "$T/$n.safetensors" >/dev/null 2>&1; done
SIZE=$(stat -c %s "$T/m.safetensors")
req "raw model view" 200 "$(vurl m.zt)"
check_same "raw model view: zt convert's bytes" "$LAST.body" "$T/m.safetensors"
ETAG=$(hdr "$LAST.hdr" ETag)
check_match "ETag of verified digests" "$ETAG" '^"st-[0-9a-f]{32}"$'
check_eq "Content-Type" "$(hdr "$LAST.hdr" Content-Type)" application/octet-stream
check_eq "Content-Length" "$(hdr "$LAST.hdr" Content-Length)" "$SIZE"
check_eq "Content-Disposition" "$(hdr "$LAST.hdr" Content-Disposition)" 'attachment; filename="m.safetensors"'
check_eq "Accept-Ranges" "$(hdr "$LAST.hdr" Accept-Ranges)" bytes
req "another copy of the file" 200 "$(vurl m_copy.zt)"
check_eq "another copy: the same ETag (the digests')" "$(hdr "$LAST.hdr" ETag)" "$ETAG"
req "/raw of the copy" 200 "$URL/v1/files/m_copy.zt/raw"
check_ne "(the copies' /raw ETags differ)" "$(hdr "$LAST.hdr" ETag)" "$(curl -sI "$URL/v1/files/m.zt/raw" | tr -d '\r' | awk 'tolower($1)=="etag:"{print $2}')"
req "zstd model view" 200 "$(vurl z.zt)"
check_same "zstd model view: zt convert's bytes" "$LAST.body" "$T/z.safetensors"
check_same "the zstd model's view is the raw one's" "$LAST.body" "$T/m.safetensors"
check_match "zstd model: ETag of verified digests" "$(hdr "$LAST.hdr" ETag)" '^"st-[0-9a-f]{32}"$'
check_ne "zstd model: its own ETag (other digests)" "$(hdr "$LAST.hdr" ETag)" "$ETAG"
check_eq "zstd model: no Content-Encoding" "$(hdr "$LAST.hdr" Content-Encoding)" ""
req "no digests" 200 "$(vurl nd.zt)"
check_same "no digests: zt convert's bytes" "$LAST.body" "$T/nd.safetensors"
check_match "no digests: the file identity's ETag" "$(hdr "$LAST.hdr" ETag)" '^"st-file-[0-9a-f]{32}"$'
req "UTF-8 name" 200 "$(vurl météo.zt)"
check_eq "UTF-8 name: Content-Disposition" "$(hdr "$LAST.hdr" Content-Disposition)" \
    "attachment; filename=\"m__t__o.safetensors\"; filename*=UTF-8''m%C3%A9t%C3%A9o.safetensors"
head_req "HEAD" 200 "/v1/files/m.zt/safetensors"
check_eq "HEAD: ETag" "$(hdr "$LAST.hdr" ETag)" "$ETAG"
check_eq "HEAD: Content-Length" "$(hdr "$LAST.hdr" Content-Length)" "$SIZE"
head_req "HEAD of a range" 206 "/v1/files/z.zt/safetensors" 'Range: bytes=10-1000009'
check_eq "HEAD of a range: Content-Range" "$(hdr "$LAST.hdr" Content-Range)" "bytes 10-1000009/$SIZE"
req "If-None-Match" 304 -H "If-None-Match: $ETAG" "$(vurl m.zt)"
check_eq "304: ETag" "$(hdr "$LAST.hdr" ETag)" "$ETAG"
check_err "If-Match another ETag" 412 precondition_failed -H 'If-Match: "st-0"' "$(vurl m.zt)"
req "If-Match the ETag" 200 -H "If-Match: $ETAG" "$(vurl m.zt)"
req "If-Range the ETag" 206 -H "If-Range: $ETAG" -r 5-20 "$(vurl m.zt)"
slice "$T/m.safetensors" 5 16 >"$T/want"
check_same "If-Range the ETag: the range" "$LAST.body" "$T/want"
req "If-Range another ETag: the whole" 200 -H 'If-Range: "st-0"' -r 5-20 "$(vurl m.zt)"
check_same "If-Range another ETag: the bytes" "$LAST.body" "$T/m.safetensors"
req "several ranges: the whole" 200 -r 0-9,100-199,-10 "$(vurl z.zt)"
check_same "several ranges: the bytes" "$LAST.body" "$T/m.safetensors"
check_err "past the end" 416 range_not_satisfiable -r "$SIZE-" "$(vurl m.zt)"
check_err "no such file" 404 file_not_found "$(vurl nope.zt)"
check_err "POST" 405 method_not_allowed -X POST "$(vurl m.zt)"

# ---- 200 random ranges of a raw and of a zstd view
$PY - "$T/m.safetensors" 200 >"$T/ranges" <<'EOF'
import json, random, struct, sys
buf = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", buf[:8])[0]
hdr = json.loads(buf[8:8 + n])
data = 8 + n
bounds = sorted({data + v["data_offsets"][i] for k, v in hdr.items() if k != "__metadata__" for i in (0, 1)})
inner = [b for b in bounds if 0 < b < len(buf)]
rnd = random.Random(23)
for i in range(int(sys.argv[2])):
    kind = i % 5
    if kind == 0:  # across the header / data boundary
        a = rnd.randrange(0, data); b = rnd.randrange(data, min(len(buf), data + 70000))
    elif kind == 1:  # across a tensor boundary
        m = rnd.choice(inner); a = rnd.randrange(max(0, m - 70000), m); b = rnd.randrange(m, min(len(buf), m + 70000))
    elif kind == 2:  # anywhere
        a = rnd.randrange(0, len(buf)); b = rnd.randrange(a, min(len(buf), a + 300000))
    elif kind == 3:  # open-ended
        a = rnd.randrange(0, len(buf)); print("%d-" % a, a, len(buf) - a); continue
    else:  # suffix
        k = rnd.randrange(1, len(buf) + 1); print("-%d" % k, len(buf) - k, k); continue
    print("%d-%d" % (a, b), a, b - a + 1)
EOF
check_eq "ranges generated" "$(wc -l <"$T/ranges")" 200
for v in m z; do
    i=0 codes=
    while read -r spec start len; do
        i=$((i + 1))
        codes+=$(curl -s --max-time 60 -r "$spec" -o "$T/rg/$v.$i" -w '%{http_code}' "$(vurl $v.zt)")" "
        echo "$T/rg/$v.$i $start $len" >>"$T/rg/$v.list"
    done <"$T/ranges"
    check_eq "$v: 200 ranges answered 206" "$(tr ' ' '\n' <<<"$codes" | grep -c '^206$')" 200
    bad_ranges=$($PY - "$T/m.safetensors" "$T/rg/$v.list" <<'EOF'
import sys
full = open(sys.argv[1], "rb").read()
for line in open(sys.argv[2]):
    path, a, n = line.split(); a, n = int(a), int(n)
    if open(path, "rb").read() != full[a:a + n]:
        print(path, a, n)
EOF
)
    check_eq "$v: every range equals zt convert's slice" "$bad_ranges" ""
done

# ---- a corrupt zstd frame: cut short, never a whole-looking 200
want=$(curl -sI "$(vurl bad.zt)" | tr -d '\r' | awk 'tolower($1)=="content-length:"{print $2}')
got=$(curl -s --max-time 60 -o "$T/bad.body" -w '%{http_code} %{size_download}' "$(vurl bad.zt)")
rc=$?
note "corrupt frame: curl exit $rc, '$got' of $want bytes"
check_match "corrupt frame: curl sees the connection end early (18 or 56)" "$rc" '^(18|56)$'
check "corrupt frame: fewer bytes than Content-Length" [ "${got#* }" -lt "${want:-0}" ]
daemon_alive "daemon alive after the corrupt frame"
# now known not to decode: refused before any byte
check_err "corrupt frame, again: an error before the body" 500 component_corrupt "$(vurl bad.zt)"

stop_daemon
finish
