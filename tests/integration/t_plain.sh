#!/bin/bash
# Plain files (issue 23 §1): every regular file of a model directory that is not a tensor
# file is listed ("format": "file") and served at /v1/files/NAME/raw (ranges, conditionals,
# Content-Disposition for curl -OJ), with a small JSON document at /v1/files/NAME; its
# sha256 names its bytes (listing, strong ETag, Repr-Digest) only once the background
# verifier has hashed it; a plain file changed in place aborts a download in flight, as a
# tensor file does; hidden and excluded files are neither listed nor served; traversal is
# still 400; PUT and DELETE publish and remove plain files; every JSON body ends with a
# newline.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R/m" "$R/.hid" "$R/cache" "$R/sub"
printf '{"architectures": ["Tiny"], "hidden_size": 64}\n' >"$R/m/config.json"
text "$R/m/tokenizer.json" 300000
printf 'do_sample: true\n' >"$R/m/generation_config.json"
printf '# Tiny\n' >"$R/README.md"
printf 'SECRET=1\n' >"$R/.env"
printf 'x\n' >"$R/.hid/f.json"
printf 'cached\n' >"$R/cache/c.json"
printf 'old\n' >"$R/m/w.bak"
printf 'accent\n' >"$R/sub/déjà vu.txt"
printf 'raw file\n' >"$R/sub/raw"
ln -s ../m/config.json "$R/sub/link.json"
printf 'outside\n' >"$T/outside.json"
ln -s "$T/outside.json" "$R/sub/out.json"
rand "$T/w.raw" 4096
pack "$R/m/model.zt" w=u8:4096:"$T/w.raw" || finish
BIG=$((64 << 20))
rand "$T/big1" $BIG
rand "$T/big2" $BIG
cp "$T/big1" "$R/big.bin"

# ================= without the verifier: nothing is hashed, nothing is claimed
WAIT_VERIFIED=0 # nothing is ever verified here
start_daemon "$R" --no-verify-digests --exclude '*.bak,cache' || finish
req "listing" 200 "$URL/v1/files"
cp "$LAST.body" "$T/l0.json"
check_eq "listing: the names (no hidden, excluded or outside-root file; model.zt's view)" \
    "$($HELP names "$T/l0.json" | tr '\n' ' ')" \
    "README.md big.bin m/config.json m/generation_config.json m/model.safetensors m/model.zt m/tokenizer.json sub/déjà vu.txt sub/link.json sub/raw "
check_eq "listing: m/model.safetensors is model.zt's view" \
    "$($HELP listing "$T/l0.json" m/model.safetensors format) $($HELP listing "$T/l0.json" m/model.safetensors view_of)" \
    "safetensors-view m/model.zt"
check_eq "listing: a plain file's format" "$($HELP listing "$T/l0.json" m/config.json format)" file
check_eq "listing: a plain file's size" "$($HELP listing "$T/l0.json" m/tokenizer.json size)" 300000
check_eq "listing: a plain file's status" "$($HELP listing "$T/l0.json" m/config.json status)" ok
check_eq "listing: no sha256 before hashing" "$($HELP listing "$T/l0.json" m/config.json sha256)" -
check_eq "listing: the tensor file is still a tensor file" "$($HELP listing "$T/l0.json" m/model.zt format)" zt-1.2
check_eq "listing: ends with a newline" "$(tail -c 1 "$T/l0.json" | od -An -c | tr -d ' ')" '\n'
req "listing page" 200 "$URL/v1/files?prefix=m%2F&limit=2"
check_eq "listing page: plain files in pages too" "$($HELP names "$LAST.body" | tr '\n' ' ')" \
    "m/config.json m/generation_config.json "
check_eq "listing page: ends with a newline" "$(tail -c 1 "$LAST.body" | od -An -c | tr -d ' ')" '\n'

req "raw of a plain file" 200 "$URL/v1/files/m/config.json/raw"
check_same "raw: its bytes" "$LAST.body" "$R/m/config.json"
check_eq "raw: octet-stream" "$(hdr "$LAST.hdr" Content-Type)" application/octet-stream
ETAG0=$(hdr "$LAST.hdr" ETag)
check_match "raw before hashing: the identity ETag" "$ETAG0" '^"[0-9a-f]{32}"$'
check_eq "raw before hashing: the listing's etag" "$($HELP listing "$T/l0.json" m/config.json etag)" "$ETAG0"
check_eq "raw before hashing: no Repr-Digest" "$(hdr "$LAST.hdr" Repr-Digest)" ""
check_nomatch "raw before hashing: not immutable" "$(hdr "$LAST.hdr" Cache-Control)" immutable
check_eq "raw: Content-Disposition" "$(hdr "$LAST.hdr" Content-Disposition)" 'attachment; filename="config.json"'
req "raw: If-None-Match" 304 -H "If-None-Match: $ETAG0" "$URL/v1/files/m/config.json/raw"
req "raw: If-Match another" 412 -H 'If-Match: "nope"' "$URL/v1/files/m/config.json/raw"
req "raw: a range" 206 -r 1000-1999 "$URL/v1/files/m/tokenizer.json/raw"
slice "$R/m/tokenizer.json" 1000 1000 >"$T/want"
check_same "raw: the range's bytes" "$LAST.body" "$T/want"
check_eq "raw: Content-Range" "$(hdr "$LAST.hdr" Content-Range)" "bytes 1000-1999/300000"
req "raw: a suffix range" 206 -r -10 "$URL/v1/files/m/tokenizer.json/raw"
slice "$R/m/tokenizer.json" 299990 10 >"$T/want"
check_same "raw: the suffix's bytes" "$LAST.body" "$T/want"
req "raw: two ranges" 206 -r 0-9,100-109 "$URL/v1/files/m/tokenizer.json/raw"
check_match "raw: multipart" "$(hdr "$LAST.hdr" Content-Type)" '^multipart/byteranges'
check "raw: the multipart parts" $HELP multipart "$LAST.body" "$(hdr "$LAST.hdr" Content-Type)" \
    "$R/m/tokenizer.json" 300000 0-9 100-109
req "raw: a range past the end" 416 -r 400000-400010 "$URL/v1/files/m/tokenizer.json/raw"
head_req "raw: HEAD" 200 /v1/files/m/tokenizer.json/raw
req "raw through a symlink inside the root" 200 "$URL/v1/files/sub/link.json/raw"
check_same "raw through a symlink: the target's bytes" "$LAST.body" "$R/m/config.json"

req "the plain file's document" 200 "$URL/v1/files/m/config.json"
check_eq "document: JSON" "$(hdr "$LAST.hdr" Content-Type)" application/json
check_eq "document: name" "$(jget "$LAST.body" name)" m/config.json
check_eq "document: format" "$(jget "$LAST.body" format)" file
check_eq "document: size" "$(jget "$LAST.body" size)" "$(stat -c %s "$R/m/config.json")"
check_eq "document: no sha256 before hashing" "$(jget "$LAST.body" sha256)" MISSING
check_match "document: last_modified" "$(jget "$LAST.body" last_modified)" 'GMT$'
check_eq "document: ends with a newline" "$(tail -c 1 "$LAST.body" | od -An -c | tr -d ' ')" '\n'

# names: a file named raw is reached with the segment or the slash encoded
req "a file named raw: %72aw" 200 "$URL/v1/files/sub/%72aw"
check_eq "a file named raw: its document" "$(jget "$LAST.body" name)" sub/raw
req "a file named raw: its bytes" 200 "$URL/v1/files/sub%2Fraw/raw"
check_same "a file named raw: the bytes" "$LAST.body" "$R/sub/raw"
check_err "sub/raw is the bytes of a file sub" 404 file_not_found "$URL/v1/files/sub/raw"
req "non-ASCII name" 200 "$URL/v1/files/sub/d%C3%A9j%C3%A0%20vu.txt/raw"
check_eq "non-ASCII name: filename* (RFC 8187)" "$(hdr "$LAST.hdr" Content-Disposition)" \
    "attachment; filename=\"d__j__ vu.txt\"; filename*=UTF-8''d%C3%A9j%C3%A0%20vu.txt"

# curl -OJ saves the right names
mkdir -p "$T/dl"
(cd "$T/dl" && curl -s -OJ "$URL/v1/files/m/tokenizer.json/raw" && curl -s -OJ "$URL/v1/files/m/model.zt/raw" &&
    curl -s -OJ "$URL/v1/files/m/model.zt/objects/w/data")
check_same "curl -OJ of a plain file: saved as tokenizer.json" "$T/dl/tokenizer.json" "$R/m/tokenizer.json"
check_same "curl -OJ of a tensor file's /raw: saved as model.zt" "$T/dl/model.zt" "$R/m/model.zt"
check_same "curl -OJ of a component: saved as w.data" "$T/dl/w.data" "$T/w.raw"

# tensor-only routes under a plain file
check_err "objects under a plain file" 404 not_a_tensor_file "$URL/v1/files/m/config.json/objects/x"
check_match "objects under a plain file: names it" "$ERRMSG" '"m/config.json" is a plain file'
check_err "a component under a plain file" 404 not_a_tensor_file "$URL/v1/files/m/config.json/objects/x/data"
check_err "the safetensors view of a plain file" 404 not_a_tensor_file "$URL/v1/files/m/config.json/safetensors"
check_eq "an error body ends with a newline" "$(tail -c 1 "$LAST.body" | od -An -c | tr -d ' ')" '\n'

# hidden, excluded, outside the root, traversal
check_err "a dotfile" 400 bad_request "$URL/v1/files/.env/raw"
check_err "a file in a hidden directory" 400 bad_request "$URL/v1/files/.hid/f.json/raw"
check_err "an excluded file (*.bak)" 404 file_not_found "$URL/v1/files/m/w.bak/raw"
check_err "a file in an excluded directory (cache)" 404 file_not_found "$URL/v1/files/cache/c.json/raw"
check_err "a symlink leading out of the root" 404 file_not_found "$URL/v1/files/sub/out.json/raw"
check_err "traversal" 400 bad_request "$URL/v1/files/../outside.json/raw"
check_err "traversal, encoded" 400 bad_request "$URL/v1/files/%2e%2e%2Foutside.json/raw"
check_err "traversal, document" 400 bad_request "$URL/v1/files/m/../../outside.json"
check_err "traversal, absolute" 400 bad_request "$URL/v1/files/%2Fetc%2Fpasswd/raw"
req "healthz ends with a newline" 200 "$URL/healthz"
check_eq "healthz body" "$(cat "$LAST.body")" '{"status":"ok"}'
check_eq "healthz: the newline" "$(stat -c %s "$LAST.body")" 16

# ---- a plain file changed in place aborts a download in flight (tests/hostile/t_inplace.sh
# does it for a component); one replaced by rename does not
dl() { # TAG: a rate-limited download of big.bin in the background; sets DL
    (
        curl -sS --max-time 60 --limit-rate 8M -D "$T/$1.hdr" -o "$T/$1.body" \
            "$URL/v1/files/big.bin/raw" 2>"$T/$1.err"
        echo $? >"$T/$1.rc"
    ) &
    DL=$!
}
started() { # TAG: wait (bounded) until the download has received its first bytes
    local i
    for i in $(seq 1 300); do
        [ -s "$T/$1.body" ] && return 0
        sleep 0.05
    done
    return 1
}
dl inplace
check "the download is in flight" started inplace
cp "$T/big2" "$R/big.bin" # the same inode: truncated, then written
wait "$DL"
rc=$(cat "$T/inplace.rc")
check_match "changed in place: curl reports a transfer error (rc $rc)" "$rc" '^(18|56)$'
size=$(stat -c %s "$T/inplace.body")
if [ "$size" -lt "$BIG" ]; then ok "changed in place: the body is short ($size bytes)"; else bad "changed in place: the body is short" "$size bytes"; fi
check_eq "changed in place: it was a 200 of the whole length" "$(hdr "$T/inplace.hdr" Content-Length)" "$BIG"
check_match "changed in place: the abort is counted" \
    "$(curl -s "$URL/metrics" | awk '$1 == "ztensord_connections_closed_total{reason=\"file_changed\"}" { print $2 }')" '^[1-9]'
code=
for i in $(seq 1 100); do # 503 file_changed until the rescan, then the new bytes
    http "$T/after" "$URL/v1/files/big.bin/raw"
    code=$CODE
    [ "$code" = 200 ] && cmp -s "$T/after.body" "$T/big2" && break
    sleep 0.1
done
check_eq "after the rescan the new version is served" "$code" 200
check_same "after the rescan: its bytes" "$T/after.body" "$T/big2"
dl renamed
check "the second download is in flight" started renamed
cp "$T/big1" "$R/.big.tmp" && mv "$R/.big.tmp" "$R/big.bin"
wait "$DL"
check_eq "replaced by rename: the download completes" "$(cat "$T/renamed.rc")" 0
check_same "replaced by rename: every byte is the old version's" "$T/renamed.body" "$T/big2"
daemon_alive "daemon alive after the in-place changes"
stop_daemon

# ================= with the verifier: the sha256 names the bytes once hashed
WAIT_VERIFIED=1
start_daemon "$R" --allow-anonymous-writes --disk-reserve 0 --exclude '*.bak,cache' || finish
SHA=$(sha256_hex "$R/m/tokenizer.json")
hashed=
for i in $(seq 1 300); do # bounded polling: the verifier runs at the lowest priority
    curl -s --max-time 5 "$URL/v1/files" -o "$T/l1.json"
    [ "$($HELP listing "$T/l1.json" m/tokenizer.json sha256)" = "$SHA" ] && hashed=1 && break
    sleep 0.1
done
check_eq "listing: the sha256 once hashed" "$($HELP listing "$T/l1.json" m/tokenizer.json sha256)" "$SHA"
if [ -n "$hashed" ]; then
    req "raw once hashed" 200 "$URL/v1/files/m/tokenizer.json/raw"
    check_eq "raw once hashed: the sha256 ETag" "$(hdr "$LAST.hdr" ETag)" "\"sha256:$SHA\""
    check_eq "raw once hashed: the listing's etag" "$($HELP listing "$T/l1.json" m/tokenizer.json etag)" "\"sha256:$SHA\""
    check_eq "raw once hashed: Repr-Digest" "$(hdr "$LAST.hdr" Repr-Digest)" "sha-256=:$(sha256_b64 "$R/m/tokenizer.json"):"
    check_nomatch "raw once hashed: a name is never immutable" "$(hdr "$LAST.hdr" Cache-Control)" immutable
    req "raw once hashed: If-None-Match" 304 -H "If-None-Match: \"sha256:$SHA\"" "$URL/v1/files/m/tokenizer.json/raw"
    req "raw once hashed: a range" 206 -r 5-9 "$URL/v1/files/m/tokenizer.json/raw"
    check_eq "raw once hashed: the range's ETag" "$(hdr "$LAST.hdr" ETag)" "\"sha256:$SHA\""
    req "document once hashed" 200 "$URL/v1/files/m/tokenizer.json"
    check_eq "document once hashed: sha256" "$(jget "$LAST.body" sha256)" "$SHA"
    # the listing's etag is good for a write's preconditions too
    text "$T/tok2" 1000
    check_err "PUT If-Match another sha256" 412 precondition_failed -T "$T/tok2" \
        -H "If-Match: \"sha256:$(sha256_hex "$T/tok2")\"" "$URL/v1/files/m/tokenizer.json"
    check_err "PUT If-None-Match the sha256" 412 precondition_failed -T "$T/tok2" \
        -H "If-None-Match: \"sha256:$SHA\"" "$URL/v1/files/m/tokenizer.json"
    req "PUT If-Match the listing's sha256 etag: replaced" 200 -T "$T/tok2" \
        -H "If-Match: \"sha256:$SHA\"" "$URL/v1/files/m/tokenizer.json"
    check_same "PUT If-Match the sha256: the new bytes" "$R/m/tokenizer.json" "$T/tok2"
fi

# ---- zt pull of a directory pulls its plain files too, byte-exact
rc=0
"$ZT" pull "$URL/v1/files/m/" -o "$T/pulled" >"$T/pull.out" 2>&1 || rc=$?
check_eq "zt pull of m/: exit status 0 ($(head -c 300 "$T/pull.out" | tr '\n' ' '))" "$rc" 0
check_same "zt pull of m/: the tensor file" "$T/pulled/model.zt" "$R/m/model.zt"
for f in config.json tokenizer.json generation_config.json; do
    check_same "zt pull of m/: $f" "$T/pulled/$f" "$R/m/$f"
done
check_eq "zt pull of m/: what was written" "$(ls "$T/pulled" | tr '\n' ' ')" \
    "config.json generation_config.json model.zt tokenizer.json "

# ---- PUT and DELETE of plain files
printf '{"eos_token_id": 2}\n' >"$T/gen.json"
D=$(sha256_b64 "$T/gen.json")
req "PUT a plain file with its Content-Digest" 201 -T "$T/gen.json" -H "Content-Digest: sha-256=:$D:" \
    "$URL/v1/files/new/generation_config.json"
check_same "PUT: the file on disk" "$R/new/generation_config.json" "$T/gen.json"
check_eq "PUT: objects 0" "$(jget "$LAST.body" objects)" 0
check_eq "PUT: the answer ends with a newline" "$(tail -c 1 "$LAST.body" | od -An -c | tr -d ' ')" '\n'
req "PUT: served at once" 200 "$URL/v1/files/new/generation_config.json/raw"
check_same "PUT: the bytes served" "$LAST.body" "$T/gen.json"
printf 'other\n' >"$T/other"
check_err "PUT with a wrong Content-Digest" 400 digest_mismatch -T "$T/other" -H "Content-Digest: sha-256=:$D:" \
    "$URL/v1/files/new/wrong.json"
check_eq "PUT with a wrong digest: nothing published" "$(ls "$R/new")" generation_config.json
check_err "PUT of a .safetensors name is still refused" 400 bad_name -T "$T/other" "$URL/v1/files/x.safetensors"
check_err "PUT of a .zt that is not one is still validated" 422 invalid_file -T "$T/other" "$URL/v1/files/x.zt"
check_err "PUT under a hidden name" 400 bad_request -T "$T/other" "$URL/v1/files/.env"
check_eq "PUT under a hidden name: the dotfile untouched" "$(cat "$R/.env")" SECRET=1
req "DELETE a plain file" 204 -X DELETE "$URL/v1/files/new/generation_config.json"
check_eq "DELETE: gone from disk" "$(ls "$R/new")" ""
check_err "DELETE: no longer served" 404 file_not_found "$URL/v1/files/new/generation_config.json/raw"
daemon_alive "daemon alive"
finish
