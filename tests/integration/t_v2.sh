#!/bin/bash
# zTensor v2 files served through the same API, with files from the test's own
# independent writer (tests/corpus/gen_corpus_v2). Every part of every
# accepted file must come back byte-exact (decoded), with the digest-derived
# validators only on the representation each digest covers; zstd parts give
# their stored bytes under Accept-Encoding: zstd; a shard table is the
# model's file set, and parts in shards are served from the shard files; /raw
# of a v2 file has one strong ETag on every copy; a missing shard, a shard
# symlinked outside the root and an unknown encoding are clear errors.
#   t_v2.sh ZTENSORD ZT GEN_CORPUS_V2
GEN=${3:?usage: $0 ZTENSORD ZT GEN_CORPUS_V2}
. "$(dirname "$0")/lib.sh" "$1" "$2"

C=$T/corpus
R=$T/root
mkdir -p "$R/copy" "$T/outside"
# (the generator keeps its CBOR trees until it exits: no leak check for it)
ASAN_OPTIONS=detect_leaks=0 "$GEN" "$C" >/dev/null || { bad "corpus generated" "gen_corpus_v2 failed"; finish; }
for f in "$C"/accept/*.zt; do cp "$f" "$R/"; done
for n in encoding_unknown shard_missing shard_missing-00002-of-00002 digest_mismatch_xxh3; do
    cp "$C/reject/$n.zt" "$R/"
done
cp "$C/accept/dtype_f32.zt" "$R/copy/dtype_f32.zt" # a replica, other inode and mtime
touch -d '2001-01-01' "$R/copy/dtype_f32.zt"
# a root whose shard is a symlink leading out of the root
cp "$C/accept/sharded.zt" "$R/escape.zt"
cp "$C/accept/sharded-00001-of-00002.zt" "$T/outside/"
ln -s "$T/outside/sharded-00001-of-00002.zt" "$R/escape-00001-of-00002.zt"
cp "$C/accept/sharded-00002-of-00002.zt" "$R/escape-00002-of-00002.zt"
start_daemon "$R" --allow-anonymous-writes --disk-reserve 0 || finish

req "listing" 200 "$URL/v1/files"
cp "$LAST.body" "$T/list.json"
field() { # field FILE KEY: a top-level key of one listing entry, as JSON
    $PY -c 'import json,sys; d=json.load(open(sys.argv[1]))
e=[x for x in d["files"] if x["name"]==sys.argv[2]][0]; print(json.dumps(e.get(sys.argv[3])))' \
        "$T/list.json" "$1" "$2"
}
check_eq "dtype_f32.zt listed as zt-2" "$(field dtype_f32.zt format)" '"zt-2"'
check_eq "dtype_f32.zt version" "$(field dtype_f32.zt version)" '"2"'
# (ok until the verifier has hashed its lying part, then corrupt)
check_match "digest_mismatch_xxh3.zt opens, so it is listed" "$(field digest_mismatch_xxh3.zt status)" '^"(ok|corrupt)"$'
check_eq "the model's file set: the root and its shards" "$(field sharded.zt files)" \
    '["sharded.zt", "sharded-00001-of-00002.zt", "sharded-00002-of-00002.zt"]'
check_eq "a shard outside the root is not in the file set" "$(field escape.zt files)" \
    '["escape.zt", null, "escape-00002-of-00002.zt"]'
check_eq "a missing shard is not in the file set" "$(field shard_missing.zt files)" \
    '["shard_missing.zt", null, "shard_missing-00002-of-00002.zt"]'
CD=$("$ZT" info --json "$C/accept/sharded.zt" | $PY -c 'import json,sys; print(json.load(sys.stdin)["content_digest"])')
check_eq "listing: content digest" "$(field sharded.zt content_digest)" "\"$CD\""
check_eq "no content digest when a part has none" "$(field shapes.zt content_digest)" null

# ---- every part of every accepted file, byte-exact, and its validators
parts=0
for f in "$C"/accept/*.zt; do
    n=$(basename "$f")
    base=${f%.zt}
    [ -f "$base.companion" ] && continue
    req "$n manifest" 200 "$URL/v1/files/$n"
    cp "$LAST.body" "$T/m.json"
    while IFS=$'\t' read -r obj part rel; do
        qo=$(urlq "$obj")
        req "$n $obj/$part" 200 "$URL/v1/files/$n/objects/$qo/$part"
        check_same "$n $obj/$part: the decoded bytes" "$LAST.body" "$C/accept/$rel" || continue
        parts=$((parts + 1))
        dig=$(cfield "$T/m.json" "$obj" "$part" digest)
        enc=$(cfield "$T/m.json" "$obj" "$part" encoding)
        et=$(hdr "$LAST.hdr" ETag)
        if [ "$dig" != - ]; then
            check_eq "$n $obj/$part: ETag is the digest of the decoded bytes" "$et" "\"$dig\""
        fi
        case $dig in sha256:*)
            check_eq "$n $obj/$part: Repr-Digest" "$(hdr "$LAST.hdr" Repr-Digest)" \
                "sha-256=:$(sha256_b64 "$LAST.body"):" ;;
        esac
        check_eq "$n $obj/$part: X-Ztensor-Encoding" "$(hdr "$LAST.hdr" X-Ztensor-Encoding)" "$enc"
    done <"$base.expect"
done
check_eq "every part of every accepted file served" "$parts" "$(cat "$C"/accept/*.expect | wc -l)"

# ---- an encoded part: stored bytes under Accept-Encoding: zstd, validators per representation
P=/v1/files/encodings.zt/objects/zstd/data
req "zstd part, decoded" 200 "$URL$P"
DET=$(hdr "$LAST.hdr" ETag)
info_json "$R/encodings.zt" "$T/e.json"
OFF=$(cfield "$T/e.json" zstd data offset)
SLEN=$(cfield "$T/e.json" zstd data length)
DIG=$(cfield "$T/e.json" zstd data digest)
check_eq "decoded representation: the digest is its ETag" "$DET" "\"$DIG\""
req "zstd part, stored" 200 -H "Accept-Encoding: zstd" "$URL$P"
slice "$R/encodings.zt" "$OFF" "$SLEN" >"$T/stored.bin"
check_same "Accept-Encoding: zstd gives the stored bytes" "$LAST.body" "$T/stored.bin"
check_eq "stored representation: Content-Encoding" "$(hdr "$LAST.hdr" Content-Encoding)" zstd
SET=$(hdr "$LAST.hdr" ETag)
check_ne "stored representation: not the decoded digest's ETag" "$SET" "\"$DIG\""
check_match "stored representation: a strong ETag" "$SET" '^"[0-9a-f]{32}"$'
if has_hdr "$LAST.hdr" Repr-Digest; then bad "stored representation: no Repr-Digest" "$(hdr "$LAST.hdr" Repr-Digest)"; else ok "stored representation: no Repr-Digest"; fi
req "If-None-Match with the decoded ETag" 304 -H "If-None-Match: $DET" "$URL$P"
req "the decoded ETag does not match the stored bytes" 200 -H "Accept-Encoding: zstd" -H "If-None-Match: $DET" "$URL$P"
req "range of the decoded stream" 206 -H "Range: bytes=100-199" "$URL$P"
"$ZT" get "$R/encodings.zt" zstd >"$T/z.bin"
slice "$T/z.bin" 100 100 >"$T/want.bin"
check_same "range of the decoded stream: bytes" "$LAST.body" "$T/want.bin"
P2=/v1/files/encodings.zt/objects/seekable/data
SDIG=$(cfield "$T/e.json" seekable data digest)
req "seekable part (sha256), decoded" 200 "$URL$P2"
check_eq "decoded: the sha256 of the decoded bytes is the ETag" "$(hdr "$LAST.hdr" ETag)" "\"$SDIG\""
check_eq "decoded: and the Repr-Digest" "$(hdr "$LAST.hdr" Repr-Digest)" "sha-256=:$(sha256_b64 "$LAST.body"):"
req "seekable part, stored" 200 -H "Accept-Encoding: zstd" "$URL$P2"
check_ne "stored: the digest of the decoded bytes is not its ETag" "$(hdr "$LAST.hdr" ETag)" "\"$SDIG\""
if has_hdr "$LAST.hdr" Repr-Digest; then bad "stored: no Repr-Digest (the digest names decoded bytes)" "$(hdr "$LAST.hdr" Repr-Digest)"; else ok "stored: no Repr-Digest (the digest names decoded bytes)"; fi
if command -v zstd >/dev/null; then
    zstd -q -d -c "$LAST.body" >"$T/dec.bin" 2>/dev/null
    "$ZT" get "$R/encodings.zt" seekable >"$T/seek.bin"
    check_same "zstd -d of a zt.zstd-seekable/1 stream" "$T/dec.bin" "$T/seek.bin"
fi

# ---- a raw part: ranges, conditionals; the blob route by a sha256 of decoded bytes
P=/v1/files/dtype_f64.zt/objects/t/data
req "raw part" 200 "$URL$P"
cp "$LAST.body" "$T/f64.bin"
ET=$(hdr "$LAST.hdr" ETag)
req "raw part: range" 206 -H "Range: bytes=8-23" "$URL$P"
slice "$T/f64.bin" 8 16 >"$T/want.bin"
check_same "raw part: range bytes" "$LAST.body" "$T/want.bin"
req "raw part: If-Range with its ETag" 206 -H "Range: bytes=0-3" -H "If-Range: $ET" "$URL$P"
req "raw part: If-None-Match" 304 -H "If-None-Match: $ET" "$URL$P"
req "blob route: a v2 sha256 names decoded bytes" 200 "$URL/v1/blobs/$SDIG"
"$ZT" get "$R/encodings.zt" seekable >"$T/seek.bin"
check_same "blob route: the decoded bytes" "$LAST.body" "$T/seek.bin"
check_eq "blob route: ETag" "$(hdr "$LAST.hdr" ETag)" "\"$SDIG\""

# ---- shards: parts read from the shard files
for o in layer0 layer1 layer2 local; do
    req "sharded $o" 200 "$URL/v1/files/sharded.zt/objects/$o/data"
    "$ZT" get "$R/sharded.zt" "$o" >"$T/s.bin"
    check_same "sharded $o: bytes" "$LAST.body" "$T/s.bin"
done
req "sharded: a range of a part in a shard" 206 -H "Range: bytes=10-19" "$URL/v1/files/sharded.zt/objects/layer0/data"
"$ZT" get "$R/sharded.zt" layer0 | tail -c +11 | head -c 10 >"$T/want.bin"
check_same "sharded: range bytes" "$LAST.body" "$T/want.bin"
check_err "a part in a missing shard" 503 shard_unavailable "$URL/v1/files/shard_missing.zt/objects/layer0/data"
req "the root's own part is still served" 200 "$URL/v1/files/shard_missing.zt/objects/local/data"
check_err "a part in a shard outside the root" 503 shard_unavailable "$URL/v1/files/escape.zt/objects/layer0/data"
req "escape.zt: a part in the shard inside the root" 200 "$URL/v1/files/escape.zt/objects/layer2/data"
check_err "an unknown encoding" 501 encoding_unsupported "$URL/v1/files/encoding_unknown.zt/objects/t/data"
req "manifest JSON: shards" 200 "$URL/v1/files/sharded.zt"
check_eq "manifest JSON: shard status" "$(jget "$LAST.body" shards 00002-of-00002 status)" ok
check_eq "manifest JSON: a part's shard" "$(jget "$LAST.body" objects layer1 components data shard)" 00002-of-00002

# ---- /raw: one strong ETag for every copy of a v2 file
req "raw of dtype_f32.zt" 200 "$URL/v1/files/dtype_f32.zt/raw"
check_same "raw: the file" "$LAST.body" "$R/dtype_f32.zt"
E1=$(hdr "$LAST.hdr" ETag)
req "raw of its copy" 200 "$URL/v1/files/copy/dtype_f32.zt/raw"
E2=$(hdr "$LAST.hdr" ETag)
check_match "raw ETag from the content digest" "$E1" '^"zt2\.[0-9a-f]{64}"$'
check_eq "the same raw ETag on another copy" "$E2" "$E1"
check_ne "other bytes, another raw ETag" "$(curl -sI "$URL/v1/files/attributes.zt/raw" | hdr /dev/stdin ETag)" "$E1"
req "raw: If-None-Match across copies" 304 -H "If-None-Match: $E1" "$URL/v1/files/copy/dtype_f32.zt/raw"
req "raw of a file whose parts lack digests" 200 "$URL/v1/files/layouts.zt/raw"
check_match "no digest for every byte: inode ETag" "$(hdr "$LAST.hdr" ETag)" '^"[0-9a-f]{32}"$'
req "raw of a file appended to" 200 "$URL/v1/files/generations_3.zt/raw"
check_match "older generations' bytes are not named by digests: inode ETag" "$(hdr "$LAST.hdr" ETag)" '^"[0-9a-f]{32}"$'
req "raw of a file with encoded parts" 200 "$URL/v1/files/encodings.zt/raw"
check_match "stored bytes of encoded parts are not named by digests: inode ETag" "$(hdr "$LAST.hdr" ETag)" '^"[0-9a-f]{32}"$'

# ---- uploads: a v2 file is validated and published like any other
http "$T/r" -T "$C/accept/layouts.zt" "$URL/v1/files/up/layouts.zt"
check_eq "PUT a v2 file" "$CODE" 201
http "$T/r" -T "$C/reject/digest_mismatch_xxh3.zt" "$URL/v1/files/up/bad.zt"
check_eq "PUT a v2 file whose part digest is wrong" "$CODE" 422
check_match "PUT a v2 file whose part digest is wrong: why" "$(cat "$T/r.body")" 'ZT_E_DIGEST_MISMATCH'
http "$T/r" -T "$C/reject/cbor_keys_unsorted.zt" "$URL/v1/files/up/bad.zt"
check_eq "PUT a v2 file whose manifest is not deterministic" "$CODE" 422
# a root whose shards come later: its own parts are checked, the shards cannot be yet
http "$T/r" -T "$C/accept/sharded.zt" "$URL/v1/files/up/model.zt"
check_eq "PUT a v2 root before its shards" "$CODE" 201
check_err "its part in a shard, not there yet" 503 shard_unavailable "$URL/v1/files/up/model.zt/objects/layer0/data"
http "$T/r" -T "$C/accept/sharded-00001-of-00002.zt" "$URL/v1/files/up/model-00001-of-00002.zt"
check_eq "PUT its first shard" "$CODE" 201
req "its part in the shard, now there" 200 "$URL/v1/files/up/model.zt/objects/layer0/data"
"$ZT" get "$C/accept/sharded.zt" layer0 >"$T/l0.bin"
check_same "its part in the shard: bytes" "$LAST.body" "$T/l0.bin"

finish
