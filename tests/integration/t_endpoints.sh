#!/bin/bash
# Endpoints: health, readiness, listing, manifest, objects, components, HEAD, /raw, blobs,
# errors (404 JSON, 405 with Allow).
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R/sub/dir"
rand "$T/w.raw" 10000
rand "$T/f.raw" 1024
rand "$T/c.raw" 3000
rand "$T/n.raw" 2048
rand "$T/s.raw" 512
pack "$R/a.zt" w=u8:10000:"$T/w.raw" f=f32:16x16:"$T/f.raw"
pack "$R/crc.zt" --digest crc32c c=i16:1500:"$T/c.raw"
pack "$R/nod.zt" --digest none n=u64:256:"$T/n.raw"
pack "$R/sub/dir/s.zt" s=u8:512:"$T/s.raw"
printf 'this is not a zTensor file\n' >"$R/bad.zt"
head -c 40 "$R/a.zt" >"$R/short.zt" # the header but nothing else
info_json "$R/a.zt" "$T/a.info.json"

start_daemon "$R" || finish

# ---- health and readiness
req "GET /healthz" 200 "$URL/healthz"
check_eq "/healthz Content-Type" "$(hdr "$LAST.hdr" Content-Type)" application/json
check "/healthz body is JSON" $PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$LAST.body"
head_req "HEAD /healthz" 200 /healthz
req "GET /readyz after the scan" 200 "$URL/readyz"

# ---- listing
req "GET /v1/files" 200 "$URL/v1/files"
cp "$LAST.body" "$T/list.json"
check_eq "listing Content-Type" "$(hdr "$LAST.hdr" Content-Type)" application/json
# 6 files, the safetensors views of the 4 valid ones, and the root's index (3 files)
check_eq "listing count" "$($HELP listcount "$T/list.json")" 11
lf() { $HELP listing "$T/list.json" "$1" "$2"; }
check_eq "listing a.zt size" "$(lf a.zt size)" "$(stat -c %s "$R/a.zt")"
check_eq "listing a.zt format" "$(lf a.zt format)" zt-1.2
check_eq "listing a.zt version" "$(lf a.zt version)" 1.2.0
check_eq "listing a.zt objects" "$(lf a.zt objects)" 2
check_eq "listing a.zt status" "$(lf a.zt status)" ok
check_match "listing a.zt etag is a quoted strong tag" "$(lf a.zt etag)" '^"[^"]+"$'
check_eq "listing sub/dir/s.zt status" "$(lf sub/dir/s.zt status)" ok
check_eq "listing crc.zt objects" "$(lf crc.zt objects)" 1
check_eq "listing bad.zt status" "$(lf bad.zt status)" error
check_match "listing bad.zt error message" "$(lf bad.zt error.message)" 'magic|ZT_E_'
check_match "listing bad.zt error code" "$(lf bad.zt error.code)" '^ZT_E_'
check_eq "listing bad.zt size" "$(lf bad.zt size)" "$(stat -c %s "$R/bad.zt")"
check_eq "listing short.zt status" "$(lf short.zt status)" error
check_match "listing short.zt error message" "$(lf short.zt error.message)" '.'
head_req "HEAD /v1/files" 200 /v1/files
check_eq "HEAD /v1/files Content-Length" "$(hdr "$LAST.hdr" Content-Length)" "$(stat -c %s "$T/list.json")"

# ---- an invalid file is not served
check_err "GET /v1/files/bad.zt" 404 file_invalid "$URL/v1/files/bad.zt"
check_match "file_invalid message names the error" "$(cat "$LAST.body")" 'magic|ZT_E_'
check_err "GET /v1/files/bad.zt/raw" 404 file_invalid "$URL/v1/files/bad.zt/raw"
check_err "GET /v1/files/short.zt/objects/w/data" 404 file_invalid "$URL/v1/files/short.zt/objects/w/data"

# ---- manifest = zt info --json
req "GET manifest" 200 "$URL/v1/files/a.zt"
check_eq "manifest Content-Type" "$(hdr "$LAST.hdr" Content-Type)" application/json
check "manifest equals zt info --json" $HELP jsoneq "$LAST.body" "$T/a.info.json"
for f in crc.zt nod.zt sub/dir/s.zt; do
    info_json "$R/$f" "$T/x.info.json"
    req "GET manifest $f" 200 "$URL/v1/files/$f"
    check "manifest $f equals zt info --json" $HELP jsoneq "$LAST.body" "$T/x.info.json"
done
check_match "manifest has an ETag" "$(hdr "$LAST.hdr" ETag)" '^"[^"]+"$'

# ---- objects
for o in w f; do
    req "GET object $o" 200 "$URL/v1/files/a.zt/objects/$o"
    check_eq "object $o Content-Type" "$(hdr "$LAST.hdr" Content-Type)" application/json
    check "object $o JSON equals the manifest's" $HELP jsonsub "$T/a.info.json" objects "$o" "$LAST.body"
done

# ---- components = zt get
comp_check() { # FILE OBJECT LABEL
    zget "$R/$1" "$2" data >"$T/want.bin"
    req "GET $3 component" 200 "$URL/v1/files/$1/objects/$2/data"
    check_same "$3 component bytes equal zt get" "$LAST.body" "$T/want.bin"
    check_eq "$3 Content-Length" "$(hdr "$LAST.hdr" Content-Length)" "$(stat -c %s "$T/want.bin")"
    check_eq "$3 Content-Type" "$(hdr "$LAST.hdr" Content-Type)" application/octet-stream
    check_eq "$3 Accept-Ranges" "$(hdr "$LAST.hdr" Accept-Ranges)" bytes
    cp "$LAST.hdr" "$T/get.hdr"
    head_req "HEAD $3 component" 200 "/v1/files/$1/objects/$2/data"
    if diff <(headers_no_date "$T/get.hdr") <(headers_no_date "$LAST.hdr") >"$T/hd.diff"; then
        ok "HEAD $3 headers equal GET's"
    else
        bad "HEAD $3 headers equal GET's" "$(tr '\n' ' ' <"$T/hd.diff")"
    fi
}
comp_check a.zt w "a.zt/w"
comp_check a.zt f "a.zt/f"
comp_check crc.zt c "crc.zt/c"
comp_check nod.zt n "nod.zt/n"
comp_check sub/dir/s.zt s "sub/dir/s.zt/s"

req "GET f metadata" 200 "$URL/v1/files/a.zt/objects/f/data"
check_eq "X-Ztensor-Dtype" "$(hdr "$LAST.hdr" X-Ztensor-Dtype)" f32
check_eq "X-Ztensor-Shape" "$(hdr "$LAST.hdr" X-Ztensor-Shape)" 16,16
check_eq "X-Ztensor-Encoding" "$(hdr "$LAST.hdr" X-Ztensor-Encoding)" raw
check_eq "no X-Ztensor-Offset (it is in the object JSON)" "$(hdr "$LAST.hdr" X-Ztensor-Offset)" ""

# HEAD on the manifest too
req "GET manifest again" 200 "$URL/v1/files/a.zt"
cp "$LAST.hdr" "$T/get.hdr"
head_req "HEAD manifest" 200 /v1/files/a.zt
check_eq "HEAD manifest headers equal GET's" "$(headers_no_date "$LAST.hdr")" "$(headers_no_date "$T/get.hdr")"

# ---- /raw = the file
req "GET raw" 200 "$URL/v1/files/a.zt/raw"
check_same "raw bytes equal the file" "$LAST.body" "$R/a.zt"
check_eq "raw ETag equals the listing's" "$(hdr "$LAST.hdr" ETag)" "$(lf a.zt etag)"
check_eq "raw Accept-Ranges" "$(hdr "$LAST.hdr" Accept-Ranges)" bytes
cp "$LAST.hdr" "$T/get.hdr"
head_req "HEAD raw" 200 /v1/files/a.zt/raw
check_eq "HEAD raw headers equal GET's" "$(headers_no_date "$LAST.hdr")" "$(headers_no_date "$T/get.hdr")"
req "GET raw in a subdirectory" 200 "$URL/v1/files/sub/dir/s.zt/raw"
check_same "sub/dir raw bytes" "$LAST.body" "$R/sub/dir/s.zt"

# ---- content-addressed blobs
dig=$(cfield "$T/a.info.json" w data digest)
hex=${dig#sha256:}
zget "$R/a.zt" w >"$T/w.bin"
check_eq "manifest digest is the sha256 of the bytes" "$hex" "$(sha256_hex "$T/w.bin")"
req "GET blob" 200 "$URL/v1/blobs/sha256:$hex"
check_same "blob bytes" "$LAST.body" "$T/w.bin"
check_match "blob Cache-Control immutable" "$(hdr "$LAST.hdr" Cache-Control)" 'immutable'
check_eq "blob ETag" "$(hdr "$LAST.hdr" ETag)" "\"sha256:$hex\""
req "GET blob, upper-case hex" 200 "$URL/v1/blobs/sha256:$(printf '%s' "$hex" | tr a-f A-F)"
check_same "blob bytes (upper-case hex)" "$LAST.body" "$T/w.bin"
head_req "HEAD blob" 200 "/v1/blobs/sha256:$hex"
check_eq "HEAD blob Content-Length" "$(hdr "$LAST.hdr" Content-Length)" 10000
check_nomatch "raw URL is not immutable" "$(hdr "$T/get.hdr" Cache-Control)" 'immutable'
zero=0000000000000000000000000000000000000000000000000000000000000000
check_err "unknown blob" 404 blob_not_found "$URL/v1/blobs/sha256:$zero"
check_err "blob digest too short" 400 bad_request "$URL/v1/blobs/sha256:abcd"
check_err "blob digest not hex" 400 bad_request "$URL/v1/blobs/sha256:${zero%??}zz"
check_err "blob without sha256: prefix" 400 bad_request "$URL/v1/blobs/$zero"

# ---- unknown names
check_err "unknown file" 404 file_not_found "$URL/v1/files/nope.zt"
check_err "unknown file, raw" 404 file_not_found "$URL/v1/files/nope.zt/raw"
check_err "unknown object" 404 object_not_found "$URL/v1/files/a.zt/objects/nope"
check_err "unknown object, component" 404 object_not_found "$URL/v1/files/a.zt/objects/nope/data"
check_err "unknown component" 404 component_not_found "$URL/v1/files/a.zt/objects/w/nope"
check_err "unknown endpoint" 404 not_found "$URL/v1/nope"
# any other first segment is an S3 bucket's (docs/S3.md): S3's XML error
http "$T/x" "$URL/v2/files"
check_code "an unknown bucket: 404" 404
check_match "an unknown bucket: S3's NoSuchBucket" "$(cat "$T/x.body")" "<Code>NoSuchBucket</Code>"
check_err "unknown file route suffix" 404 not_found "$URL/v1/files/a.zt/bogus"
check_err "trailing slash" 404 not_found "$URL/v1/files/"
head_req "HEAD unknown file" 404 /v1/files/nope.zt
check_eq "HEAD unknown file: Content-Type" "$(hdr "$LAST.hdr" Content-Type)" application/json

# ---- wrong methods
for spec in "POST /healthz" "DELETE /readyz" "POST /v1/files" "POST /v1/files/a.zt/raw" \
    "DELETE /v1/files/a.zt/objects/w" "PUT /v1/files/a.zt/objects/w/data" \
    "POST /v1/blobs/sha256:$hex"; do
    m=${spec%% *}
    p=${spec#* }
    check_err "$m ${p:0:40}" 405 method_not_allowed -X "$m" "$URL$p"
    check_match "$m ${p:0:40}: Allow lists GET and HEAD" "$(hdr "$LAST.hdr" Allow)" '^GET, HEAD'
done
check_err "lower-case method" 405 method_not_allowed -X get "$URL/healthz"

daemon_alive "daemon still running"
finish
