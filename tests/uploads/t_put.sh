#!/bin/bash
# Whole-file uploads: PUT /v1/files/{file} (201/200, JSON summary, ETag), the hidden staging
# directory, Content-Digest, validation (422), If-None-Match / If-Match, DELETE, and
# downloads in flight while their file is replaced or deleted.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/w1.raw" 5000
rand "$T/w2.raw" 7000
pack "$T/v1.zt" w=u8:5000:"$T/w1.raw"
pack "$T/v2.zt" w=u8:7000:"$T/w2.raw"
pack "$T/pre.zt" w=u8:5000:"$T/w1.raw"
cp "$T/pre.zt" "$R/pre.zt"

start_daemon "$R" "${OPEN[@]}" || finish

# ---- create, replace
put a.zt "$T/v1.zt"
check_code "PUT new file: 201" 201
E1=$(hdr "$LAST.hdr" ETag)
check_match "PUT new: ETag header" "$E1" '^"[^"]+"$'
check_eq "PUT new: JSON name" "$(jget "$LAST.body" name)" a.zt
check_eq "PUT new: JSON size" "$(jget "$LAST.body" size)" "$(stat -c %s "$T/v1.zt")"
check_eq "PUT new: JSON objects" "$(jget "$LAST.body" objects)" 1
check_eq "PUT new: JSON replaced" "$(jget "$LAST.body" replaced)" false
check_eq "PUT new: JSON etag = ETag header" "$(jget "$LAST.body" etag)" "$E1"
check_eq "PUT new: Content-Type" "$(hdr "$LAST.hdr" Content-Type)" application/json
check_eq "PUT new: Location" "$(hdr "$LAST.hdr" Location)" /v1/files/a.zt
check_eq "PUT new: /v1/files etag = PUT ETag" "$(listing_field a.zt etag)" "$E1"
check_eq "PUT new: /v1/files status ok" "$(listing_field a.zt status)" ok
req "GET new /raw" 200 "$URL/v1/files/a.zt/raw"
check_same "GET new /raw: bytes = uploaded file" "$LAST.body" "$T/v1.zt"
check_eq "GET new /raw: ETag = PUT ETag" "$(hdr "$LAST.hdr" ETag)" "$E1"
check_same "published file on disk = uploaded" "$R/a.zt" "$T/v1.zt"
check_staging_empty "staging empty after PUT" "$R"

put a.zt "$T/v2.zt"
check_code "PUT existing: 200" 200
E2=$(hdr "$LAST.hdr" ETag)
check_eq "PUT existing: JSON replaced" "$(jget "$LAST.body" replaced)" true
check_eq "PUT existing: JSON etag = ETag header" "$(jget "$LAST.body" etag)" "$E2"
check_ne "PUT existing: ETag changed" "$E2" "$E1"
check_eq "PUT existing: /v1/files etag = new ETag" "$(listing_field a.zt etag)" "$E2"
req "GET replaced /raw" 200 "$URL/v1/files/a.zt/raw"
check_same "GET replaced /raw: new bytes" "$LAST.body" "$T/v2.zt"
check_eq "GET replaced /raw: ETag = new ETag" "$(hdr "$LAST.hdr" ETag)" "$E2"
req "GET replaced component" 200 "$URL/v1/files/a.zt/objects/w/data"
check_same "GET replaced component: new bytes" "$LAST.body" "$T/w2.raw"

put sub/dir/n.zt "$T/v1.zt"
check_code "PUT into new subdirectories: 201" 201
check_same "PUT into subdirectories: file on disk" "$R/sub/dir/n.zt" "$T/v1.zt"
check_eq "PUT into subdirectories: listed" "$(listing_field sub/dir/n.zt etag)" "$(hdr "$LAST.hdr" ETag)"

put notzt.safetensors "$T/v1.zt"
check_code "PUT a .safetensors name: 400" 400
check_errbody "PUT a .safetensors name" bad_name
check_eq "a refused .safetensors name: nothing written" "$(ls "$R"/notzt.* 2>/dev/null)" ""
# a name without a tensor extension is a plain file's: published as it is (t_plain.sh)
put notzt.bin "$T/v1.zt"
check_code "PUT a plain file's name (no tensor extension): 201" 201
check_same "PUT a plain file's name: its bytes as sent" "$R/notzt.bin" "$T/v1.zt"
rm -f "$R/notzt.bin"
put ../x.zt "$T/v1.zt"
check_code "PUT ../x.zt: 400" 400
check_eq "PUT ../x.zt: nothing outside root" "$(ls "$T"/x.zt 2>/dev/null)" ""

# ---- the staging directory is hidden and unreachable
$HELP partial "$PORT" PUT /v1/files/slow.zt "$T/v1.zt" 1000 3 >"$T/partial.out" &
PPID1=$!
for i in $(seq 1 40); do [ "$(staging_count "$R")" -gt 0 ] && break; sleep 0.05; done
SNAME=$(staging_files "$R" | head -1)
check_ne "a PUT in progress has a staging file" "$SNAME" ""
cp "$T/v1.zt" "$R/$STAGING/visible.zt"
kill -HUP "$D_PID"
sleep 0.5
curl -s --max-time 10 -o "$T/list.json" "$URL/v1/files"
check_nomatch "/v1/files does not list staging" "$($HELP names "$T/list.json" | tr '\n' ' ')" 'ztensord-staging|slow\.zt|visible'
for p in "$STAGING/visible.zt" "$STAGING/visible.zt/raw" "$STAGING/$SNAME/raw" "%2Eztensord-staging/visible.zt/raw" \
    "sub/..%2F$STAGING/visible.zt/raw" "$STAGING%2Fvisible.zt/raw"; do
    http "$T/s" "$URL/v1/files/$p"
    check_match "GET /v1/files/$p is refused" "$CODE" '^(400|404)$'
done
http "$T/s" "$URL/$STAGING/visible.zt"
check_match "GET /$STAGING/visible.zt is refused" "$CODE" '^(400|404)$'
put "$STAGING/x.zt" "$T/v1.zt"
check_match "PUT into the staging directory is refused" "$CODE" '^(400|404)$'
check_eq "PUT into the staging directory: nothing written" "$(ls "$R/$STAGING/x.zt" 2>/dev/null)" ""
session_open "$STAGING/y.zt"
check_code "session for a staging name: 400" 400
rm -f "$R/$STAGING/visible.zt"
wait "$PPID1"
check_staging_empty "staging empty after the client went away" "$R"
check_eq "the abandoned PUT published nothing" "$(ls "$R"/slow.zt 2>/dev/null)" ""

# ---- Content-Digest
put d.zt "$T/v1.zt" -H "Content-Digest: sha-256=:$(sha256_b64 "$T/v1.zt"):"
check_code "Content-Digest matches: 201" 201
DE=$(hdr "$LAST.hdr" ETag)
put d.zt "$T/v2.zt" -H "Content-Digest: sha-256=:$(sha256_b64 "$T/v1.zt"):"
check_code "Content-Digest mismatch: 400" 400
check_errbody "Content-Digest mismatch" digest_mismatch
check_same "Content-Digest mismatch: old file kept" "$R/d.zt" "$T/v1.zt"
check_eq "Content-Digest mismatch: ETag unchanged" "$(listing_field d.zt etag)" "$DE"
put d2.zt "$T/v2.zt" -H "Content-Digest: sha-256=:$(sha256_b64 "$T/v1.zt"):"
check_code "Content-Digest mismatch, new name: 400" 400
check_eq "Content-Digest mismatch, new name: nothing published" "$(listing_field d2.zt etag)" MISSING
check_eq "Content-Digest mismatch, new name: no file" "$(ls "$R"/d2.zt 2>/dev/null)" ""
put d2.zt "$T/v2.zt" -H "Repr-Digest: sha-256=:$(sha256_b64 "$T/v2.zt"):"
check_code "Repr-Digest matches: 201" 201
# a body of several 1 MiB buffers: its digest is computed on another thread
rand "$T/w5.raw" $((5 << 20))
pack "$T/v5.zt" a=u8:$((3 << 20)):<(head -c $((3 << 20)) "$T/w5.raw") b=u8:$((2 << 20)):<(tail -c $((2 << 20)) "$T/w5.raw")
put d5.zt "$T/v5.zt" -H "Content-Digest: sha-256=:$(sha256_b64 "$T/v1.zt"):"
check_code "5 MiB body, Content-Digest mismatch: 400" 400
check_eq "5 MiB body, mismatch: nothing published" "$(ls "$R"/d5.zt 2>/dev/null)" ""
put d5.zt "$T/v5.zt" -H "Content-Digest: sha-256=:$(sha256_b64 "$T/v5.zt"):"
check_code "5 MiB body, Content-Digest matches: 201" 201
check_same "5 MiB body: published byte for byte" "$R/d5.zt" "$T/v5.zt"
put d3.zt "$T/v2.zt" -H "Content-Digest: sha-256=:nonsense:"
check_code "malformed Content-Digest: 400" 400
check_errbody "malformed Content-Digest" bad_digest_header
check_eq "malformed Content-Digest: nothing published" "$(ls "$R"/d3.zt 2>/dev/null)" ""
check_staging_empty "staging empty after the digest checks" "$R"

# ---- invalid bodies: 422, nothing published
rand "$T/junk.bin" 3000
put bad.zt "$T/junk.bin"
check_code "random bytes: 422" 422
check_errbody "random bytes" invalid_file
check_match "random bytes: the message names a problem" "$ERRMSG" 'not valid: .{4,}'
head -c 2000 "$T/v1.zt" >"$T/trunc.zt"
put bad.zt "$T/trunc.zt"
check_code "truncated .zt: 422" 422
check_errbody "truncated .zt" invalid_file
: >"$T/empty.zt"
put bad.zt "$T/empty.zt"
check_code "empty body: 422" 422
# A component byte flipped: its sha256 no longer matches the manifest.
cp "$T/v1.zt" "$T/flip.zt"
printf '\377' | dd of="$T/flip.zt" bs=1 seek=100 conv=notrunc status=none
if cmp -s "$T/flip.zt" "$T/v1.zt"; then printf '\000' | dd of="$T/flip.zt" bs=1 seek=100 conv=notrunc status=none; fi
put bad.zt "$T/flip.zt"
check_code "component digest wrong: 422" 422
check_errbody "component digest wrong" digest_mismatch
put a.zt "$T/flip.zt"
check_code "component digest wrong over an existing file: 422" 422
check_same "component digest wrong: existing file untouched" "$R/a.zt" "$T/v2.zt"
# A zstd component whose stream is corrupt (no digest to catch it): decoding must fail.
text "$T/t.raw" 200000
pack "$T/z.zt" --compress --digest none t=u8:200000:"$T/t.raw"
cp "$T/z.zt" "$T/zbad.zt"
printf XXXX | dd of="$T/zbad.zt" bs=1 seek=64 conv=notrunc status=none # the frame magic
put bad.zt "$T/zbad.zt"
check_code "corrupt zstd stream: 422" 422
put z.zt "$T/z.zt"
check_code "valid zstd file: 201" 201
check_eq "invalid bodies published nothing" "$(ls "$R"/bad.zt 2>/dev/null)" ""
check_eq "invalid bodies: not listed" "$(listing_field bad.zt etag)" MISSING
check_staging_empty "staging empty after the invalid bodies" "$R"

# ---- If-None-Match: * (create only)
put a.zt "$T/v1.zt" -H 'If-None-Match: *'
check_code "If-None-Match: * on an existing file: 412" 412
check_errbody "If-None-Match: * on an existing file" precondition_failed
check_same "If-None-Match: * refused: file untouched" "$R/a.zt" "$T/v2.zt"
put c.zt "$T/v1.zt" -H 'If-None-Match: *'
check_code "If-None-Match: * on a new name: 201" 201

# ---- If-Match (compare and swap)
CUR=$(listing_field a.zt etag)
put a.zt "$T/v1.zt" -H 'If-Match: "0000000000000000"'
check_code "If-Match with a stale ETag: 412" 412
check_errbody "If-Match with a stale ETag" precondition_failed
check_same "If-Match stale: file untouched" "$R/a.zt" "$T/v2.zt"
put a.zt "$T/v1.zt" -H "If-Match: $CUR"
check_code "If-Match with the current ETag: 200" 200
NEW=$(hdr "$LAST.hdr" ETag)
check_same "If-Match current: file replaced" "$R/a.zt" "$T/v1.zt"
put a.zt "$T/v2.zt" -H "If-Match: $CUR"
check_code "If-Match with the ETag it had before the swap: 412" 412
check_same "second swap with the old ETag: file untouched" "$R/a.zt" "$T/v1.zt"
put nothere.zt "$T/v1.zt" -H "If-Match: $NEW"
check_code "If-Match on a missing file: 412" 412
check_eq "If-Match on a missing file: nothing published" "$(ls "$R"/nothere.zt 2>/dev/null)" ""
put a.zt "$T/v2.zt" -H 'If-Match: *'
check_code "If-Match: * on an existing file: 200" 200

# ---- DELETE
req "DELETE with a stale If-Match: 412" 412 -X DELETE -H 'If-Match: "00000000"' "$URL/v1/files/c.zt"
check_eq "DELETE refused: still listed" "$(listing_field c.zt status)" ok
req "DELETE: 204" 204 -X DELETE "$URL/v1/files/c.zt"
check_eq "DELETE: no body" "$(stat -c %s "$LAST.body")" 0
req "GET after DELETE: 404" 404 "$URL/v1/files/c.zt"
req "GET /raw after DELETE: 404" 404 "$URL/v1/files/c.zt/raw"
check_eq "DELETE: not listed" "$(listing_field c.zt etag)" MISSING
check_eq "DELETE: file gone from disk" "$(ls "$R"/c.zt 2>/dev/null)" ""
req "DELETE again: 404" 404 -X DELETE "$URL/v1/files/c.zt"
req "DELETE a file that was put in place by hand: 204" 204 -X DELETE "$URL/v1/files/pre.zt"

# ---- downloads in flight keep the old bytes
rand "$T/big.raw" $((24 << 20))
pack "$T/big.zt" w=u8:$((24 << 20)):"$T/big.raw"
# slow_get_during LABEL WHAT: download /raw of big.zt slowly, and while it runs do WHAT.
slow_get_during() {
    local label=$1 what=$2
    put big.zt "$T/big.zt"
    [ "$CODE" = 200 ] || [ "$CODE" = 201 ] || bad "$label: big.zt uploaded" "HTTP $CODE"
    local old
    old=$(hdr "$LAST.hdr" ETag)
    curl -sS --max-time 60 --limit-rate 6M -o "$T/slow.body" -D "$T/slow.hdr" "$URL/v1/files/big.zt/raw" 2>"$T/slow.err" &
    local cp=$!
    sleep 0.6
    case $what in
    replace)
        put big.zt "$T/v1.zt"
        check_code "$label: the replacing PUT: 200" 200
        ;;
    delete)
        req "$label: the DELETE: 204" 204 -X DELETE "$URL/v1/files/big.zt"
        ;;
    esac
    if kill -0 "$cp" 2>/dev/null; then ok "$label: the download was still running"; else bad "$label: the download was still running" "it had already finished; the check proves nothing"; fi
    wait "$cp"
    check_eq "$label: download exit status" "$?" 0
    check_same "$label: the download has the old bytes entirely" "$T/slow.body" "$T/big.zt"
    check_eq "$label: the download has the old ETag" "$(hdr "$T/slow.hdr" ETag)" "$old"
}
slow_get_during "replaced while downloading" replace
req "after the replace: new bytes" 200 "$URL/v1/files/big.zt/raw"
check_same "after the replace: /raw is the new file" "$LAST.body" "$T/v1.zt"
slow_get_during "deleted while downloading" delete
req "after the delete: 404" 404 "$URL/v1/files/big.zt/raw"

check_staging_empty "staging empty at the end" "$R"
daemon_alive "daemon still running"
finish
