#!/bin/bash
# Objects: the safetensors views and the model indexes as entries of /v1/files
# (issue 23, "Naming in listings" and "Multi-file models"):
#  - a directory with two .zt shards and one with a sharded v2 model: each
#    tensor file's view is listed as STEM.safetensors beside it
#    ("format": "safetensors-view", "view_of", the view's size), and each
#    directory's model.safetensors.index.json ("format": "safetensors-index"),
#    in the unpaged listing and page by page alike; v2 data shards get none;
#  - a real STEM.safetensors wins over the view (and the clash is logged);
#    once it is removed, the view takes the name;
#  - /v1/files/STEM.safetensors/raw is cmp-equal to `zt convert STEM.zt` and
#    to /v1/files/STEM.zt/safetensors, with ranges, HEAD, If-None-Match and
#    If-Range; its JSON routes say what it is a view of;
#  - the index: strong ETag of its content, ranges, 304; its weight_map names
#    every tensor once, and st_index_load.py (an independent loader, numpy)
#    reads the model through it, every tensor equal to its source;
#  - two files holding one tensor name: no index (logged);
#  - a file replaced on disk: its view entry and the index follow.
#   t_objects.sh ZTENSORD ZT CORPUS_V2_DIR
C2=${3:?usage: $0 ZTENSORD ZT CORPUS_V2_DIR}
. "$(dirname "$0")/lib.sh" "$1" "$2"
LOAD=$REPO/tests/foreign/st_index_load.py

R=$T/root
mkdir -p "$R/m" "$R/v2" "$R/c" "$R/dup" "$R/no" "$T/dl" "$T/v2dl" "$T/new"
rand "$T/a.bin" 40000
rand "$T/b.bin" 30000
rand "$T/e.bin" 4096
M1=m/model-00001-of-00002 M2=m/model-00002-of-00002
pack "$R/$M1.zt" l0.w=f32:100x100:"$T/a.bin" l0.b=u8:4096:"$T/e.bin" || finish
pack "$R/$M2.zt" --compress l1.w=u8:30000:"$T/b.bin" || finish
cp "$C2"/accept/sharded.zt "$C2"/accept/sharded-0000[12]-of-00002.zt "$R/v2/" || { bad "v2 model copied" "missing"; finish; }
cp "$C2"/accept/type_complex64.zt "$R/no/c64.zt" || { bad "v2 complex64 file copied" "missing"; finish; }
pack "$R/c/x.zt" x=u8:4096:"$T/e.bin" || finish
pack "$T/y.zt" y=u8:4096:"$T/e.bin" || finish
"$ZT" convert "$T/y.zt" -o "$R/c/x.safetensors" >/dev/null || { bad "zt convert y.zt" "failed"; finish; }
pack "$R/dup/p.zt" t=u8:4096:"$T/e.bin" || finish
pack "$R/dup/q.zt" t=u8:4096:"$T/e.bin" || finish
for f in $M1 $M2 v2/sharded c/x dup/p; do
    "$ZT" convert "$R/$f.zt" -o "$T/$(basename $f).safetensors" >/dev/null || bad "zt convert $f.zt" "failed"
done

start_daemon "$R" || finish
raw() { printf '%s/v1/files/%s/raw' "$URL" "$1"; }

# ---- the listing
req "listing" 200 "$URL/v1/files"
cp "$LAST.body" "$T/list.json"
check_eq "listed names" "$($HELP names "$T/list.json" | tr '\n' ' ')" \
    "c/x.safetensors c/x.zt dup/p.safetensors dup/p.zt dup/q.safetensors dup/q.zt $M1.safetensors $M1.zt $M2.safetensors $M2.zt m/model.safetensors.index.json no/c64.safetensors no/c64.zt v2/model.safetensors.index.json v2/sharded-00001-of-00002.zt v2/sharded-00002-of-00002.zt v2/sharded.safetensors v2/sharded.zt "
lf() { $HELP listing "$T/list.json" "$1" "$2"; }
for f in $M1 $M2 v2/sharded dup/p; do
    check_eq "$f.safetensors: format" "$(lf $f.safetensors format)" safetensors-view
    check_eq "$f.safetensors: view_of" "$(lf $f.safetensors view_of)" "$f.zt"
    check_eq "$f.safetensors: the view's size" "$(lf $f.safetensors size)" "$(stat -c %s "$T/$(basename $f).safetensors")"
    check_eq "$f.safetensors: status" "$(lf $f.safetensors status)" ok
done
check_eq "the real c/x.safetensors is listed as itself" "$(lf c/x.safetensors format) $(lf c/x.safetensors view_of)" "safetensors -"
check_eq "its size" "$(lf c/x.safetensors size)" "$(stat -c %s "$R/c/x.safetensors")"
check_match "the clash is logged" "$(cat "$D_ERR")" 'c/x\.safetensors is a real file: the safetensors view of c/x\.zt is not listed'
check_eq "m's index: format" "$(lf m/model.safetensors.index.json format)" safetensors-index
check_eq "v2's index: format" "$(lf v2/model.safetensors.index.json format)" safetensors-index
check_match "dup: no index (two files hold tensor t), logged" "$(cat "$D_ERR")" \
    'dup/model\.safetensors\.index\.json is not made: .*is in two views'
# a view safetensors cannot express: listed, with the error naming the object; 422
check_eq "refused view: status" "$(lf no/c64.safetensors status)" error
check_eq "refused view: code" "$(lf no/c64.safetensors error.code)" view_unsupported
check_match "refused view: the message names the object" "$(lf no/c64.safetensors error.message)" 'object "t" cannot be written as safetensors'
check_err "refused view: /raw" 422 view_unsupported "$URL/v1/files/no/c64.safetensors/raw"
check_match "refused view: the answer names the file and the object" "$(cat "$LAST.body")" 'no/c64\.zt.*object \\"t\\" cannot be written'
# page by page: the same entries
names= cursor= pages=0
while [ $pages -lt 40 ]; do
    pages=$((pages + 1))
    http "$T/p" "$URL/v1/files?limit=3${cursor:+&cursor=$cursor}"
    names+=$($HELP names "$T/p.body" | tr '\n' ' ')
    cursor=$(jget "$T/p.body" next_cursor)
    [ -n "$cursor" ] && [ "$cursor" != MISSING ] || break
done
check_eq "paged listing: the same names" "$names" "$($HELP names "$T/list.json" | tr '\n' ' ')"
req "prefix listing" 200 "$URL/v1/files?prefix=m/"
check_eq "prefix m/: the shards, their views, the index" "$($HELP listcount "$LAST.body")" 5

# ---- a view's bytes
for f in $M1 $M2 v2/sharded; do
    out=$T/$(basename $f).safetensors
    req "$f.safetensors/raw" 200 "$(raw $f.safetensors)"
    check_same "$f.safetensors/raw: zt convert's bytes" "$LAST.body" "$out"
    check_eq "$f.safetensors/raw: Content-Disposition" "$(hdr "$LAST.hdr" Content-Disposition)" \
        "attachment; filename=\"$(basename $f).safetensors\""
    check "$f.safetensors/raw: /safetensors of $f.zt" cmp -s "$LAST.body" <(curl -s "$URL/v1/files/$f.zt/safetensors")
done
V=$(raw $M1.safetensors) W=$T/model-00001-of-00002.safetensors
SIZE=$(stat -c %s "$W")
req "view: GET" 200 "$V"
ETAG=$(hdr "$LAST.hdr" ETag)
check_match "view: a strong ETag of the digests" "$ETAG" '^"st-[0-9a-f]{32}"$'
check_eq "view: the ETag of /safetensors" "$(curl -sI "$URL/v1/files/$M1.zt/safetensors" | tr -d '\r' | awk 'tolower($1)=="etag:"{print $2}')" "$ETAG"
head_req "view: HEAD" 200 "/v1/files/$M1.safetensors/raw"
check_eq "view: HEAD Content-Length" "$(hdr "$LAST.hdr" Content-Length)" "$SIZE"
for spec in 0-7 5-300 100-40100 $((SIZE - 10))- -77; do
    req "view: range $spec" 206 -r "$spec" "$V"
    case $spec in
    -*) a=$((SIZE + spec)) n=$((-spec)) ;;
    *-) a=${spec%-} n=$((SIZE - ${spec%-})) ;;
    *) a=${spec%-*} n=$((${spec#*-} - ${spec%-*} + 1)) ;;
    esac
    slice "$W" "$a" "$n" >"$T/want"
    check_same "view: range $spec: the bytes" "$LAST.body" "$T/want"
done
req "view: If-None-Match" 304 -H "If-None-Match: $ETAG" "$V"
req "view: If-Range the ETag" 206 -H "If-Range: $ETAG" -r 10-20 "$V"
req "view: If-Range another" 200 -H 'If-Range: "st-0"' -r 10-20 "$V"
check_err "view: past the end" 416 range_not_satisfiable -r "$SIZE-" "$V"
req "the real c/x.safetensors/raw" 200 "$(raw c/x.safetensors)"
check_same "the real file's bytes, not x.zt's view" "$LAST.body" "$R/c/x.safetensors"
req "view: its JSON document" 200 "$URL/v1/files/$M1.safetensors"
check_eq "view: the document names the file it views" "$(jget "$LAST.body" view_of)" "$M1.zt"
check_eq "view: the document ends with a newline" "$(tail -c 1 "$LAST.body" | od -An -c | tr -d ' ')" '\n'
check_err "view: no objects of its own" 404 object_not_found "$URL/v1/files/$M1.safetensors/objects/l0.w/data"
req "view: /safetensors of the view" 200 "$URL/v1/files/$M1.safetensors/safetensors"
check_same "view: /safetensors of the view is the view" "$LAST.body" "$W"

# ---- the index
I=$(raw m/model.safetensors.index.json)
req "index: GET" 200 "$I"
cp "$LAST.body" "$T/dl/model.safetensors.index.json"
IETAG=$(hdr "$LAST.hdr" ETag)
check_match "index: a strong ETag of its content" "$IETAG" '^"idx-[0-9a-f]{32}"$'
check_eq "index: Content-Type" "$(hdr "$LAST.hdr" Content-Type)" application/json
check_eq "index: its listed size" "$(stat -c %s "$LAST.body")" "$(lf m/model.safetensors.index.json size)"
check_eq "index: weight_map" "$($PY -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["weight_map"], sort_keys=True))' "$LAST.body")" \
    '{"l0.b": "model-00001-of-00002.safetensors", "l0.w": "model-00001-of-00002.safetensors", "l1.w": "model-00002-of-00002.safetensors"}'
check_eq "index: total_size, the tensors' bytes" "$(jget "$LAST.body" metadata total_size)" $((40000 + 4096 + 30000))
req "index: If-None-Match" 304 -H "If-None-Match: $IETAG" "$I"
req "index: a range" 206 -r 2-12 "$I"
check_same "index: the range's bytes" "$LAST.body" <(slice "$T/dl/model.safetensors.index.json" 2 11)
for f in $(jget "$T/dl/model.safetensors.index.json" weight_map | $PY -c 'import json,sys; print(" ".join(sorted(set(json.load(sys.stdin).values()))))'); do
    curl -s -o "$T/dl/$f" "$(raw "m/$f")"
done
check "an independent loader reads the model through the index" \
    $PY "$LOAD" "$T/dl" "$ZT" "$R/$M1.zt" "$R/$M2.zt"
curl -s -o "$T/v2dl/model.safetensors.index.json" "$(raw v2/model.safetensors.index.json)"
curl -s -o "$T/v2dl/sharded.safetensors" "$(raw v2/sharded.safetensors)"
check "the v2 model through its index" $PY "$LOAD" "$T/v2dl" "$ZT" "$R/v2/sharded.zt"

# ---- changes on disk
pack "$T/new/m1.zt" l0.w=f32:100x100:"$T/a.bin" l0.b=u8:4096:"$T/e.bin" l0.extra=u8:30000:"$T/b.bin" || finish
"$ZT" convert "$T/new/m1.zt" -o "$T/new/m1.safetensors" >/dev/null
cp "$T/new/m1.zt" "$R/m/.m1.tmp" && mv "$R/m/.m1.tmp" "$R/$M1.zt"
listed_size() { curl -s --max-time 5 "$URL/v1/files?prefix=$1" -o "$T/l.json" && [ "$($HELP listing "$T/l.json" "$1" size)" = "$2" ]; }
wait_until() { local i; for i in $(seq 1 300); do "$@" && return 0; sleep 0.1; done; return 1; }
check "a file replaced: its view's listed size follows" wait_until listed_size "$M1.safetensors" "$(stat -c %s "$T/new/m1.safetensors")"
req "a file replaced: the view's bytes" 200 "$V"
check_same "a file replaced: the new view" "$LAST.body" "$T/new/m1.safetensors"
req "a file replaced: the index" 200 "$I"
check_eq "a file replaced: the index names the new tensor" "$(jget "$LAST.body" weight_map l0.extra)" model-00001-of-00002.safetensors
check_ne "a file replaced: the index's ETag changed" "$(hdr "$LAST.hdr" ETag)" "$IETAG"
rm -f "$R/c/x.safetensors"
is_view() { curl -s --max-time 5 "$URL/v1/files?prefix=c/" -o "$T/l.json" && [ "$($HELP listing "$T/l.json" c/x.safetensors view_of)" = c/x.zt ]; }
check "the real file removed: the view takes its name" wait_until is_view
req "the real file removed: the view's bytes" 200 "$(raw c/x.safetensors)"
check_same "the real file removed: x.zt's view" "$LAST.body" "$T/x.safetensors"

stop_daemon
finish
