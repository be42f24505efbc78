#!/usr/bin/env bash
# t_v2: zTensor v2 files through the pull-through cache (issue 13). v2 files from
# `zt pack --format v2` (raw and zstd-seekable parts; xxh3, sha256 or no digests, which
# cover the decoded bytes) and from the v2 corpus are served by a sidecar without a root
# like the origin ztensord serves them: manifest, object JSON, every component (stored
# bytes, ranges, HEAD, 304), blobs by sha256, /raw, with the origin's validators where
# they name the bytes (a digest-less part's are the tier's own). Warm: no byte from the
# origin. Through relay.py flipping a byte of every fill: nothing cached, nothing served
# complete, whatever the digest's algorithm. Sharded roots (the corpus's): every part,
# from its shard file, and a root whose shard the origin lacks (503 there too, the
# manifest's shards saying so). A file replaced at the origin: the old
# version only until upstream_ttl, then the new one, never a mix. Through nginx as a
# plain upstream: the same bytes, a digest's ETag.
. "$(dirname "$0")/lib.sh" "$@"

o=$T/origin
mkdir -p "$o/v2" "$o/corpus"
rand "$T/a.raw" $((1536 * 1024 + 77)) # more than one zt.zstd-seekable/1 frame
rand "$T/b.raw" 4000
head -c $((2 * 1024 * 1024)) /dev/zero >"$T/z.raw" # compresses well
v2pack() { "$ZT" pack --format v2 "$@" >/dev/null 2>"$T/pack.err" || bad "zt pack --format v2 $*" "$(cat "$T/pack.err")"; }
v2pack -o "$o/v2/raw.zt" a=u8:$((1536 * 1024 + 77)):"$T/a.raw" b=f32:1000:"$T/b.raw"
v2pack -o "$o/v2/zstd.zt" --compress a=u8:$((1536 * 1024 + 77)):"$T/a.raw" \
    b=f32:1000:"$T/b.raw" z=u8:$((2 * 1024 * 1024)):"$T/z.raw"
v2pack -o "$o/v2/sha.zt" --digest sha256 b=f32:1000:"$T/b.raw" z=u8:$((2 * 1024 * 1024)):"$T/z.raw"
v2pack -o "$o/v2/shaz.zt" --compress --digest sha256 b=f32:1000:"$T/b.raw" \
    z=u8:$((2 * 1024 * 1024)):"$T/z.raw"
v2pack -o "$o/v2/none.zt" --digest none b=f32:1000:"$T/b.raw"
corpus=${ZT_CORPUS_V2_DIR:-}/accept
if [ -d "$corpus" ]; then
    for f in "$corpus"/*.zt; do
        case $(basename "$f") in sharded*) mkdir -p "$o/shards" && cp "$f" "$o/shards/" && continue ;; esac
        cp "$f" "$o/corpus/"
    done
else
    skip "v2 corpus files" "ZT_CORPUS_V2_DIR not set (run ctest: corpus_v2_generate makes it)"
fi
files=()
for f in "$o"/v2/*.zt "$o"/corpus/*.zt; do [ -e "$f" ] && files+=("${f#"$o"/}"); done
note "${#files[@]} v2 files"

# parts FILE: "OBJECT<TAB>COMPONENT<TAB>ENCODING<TAB>DIGEST<TAB>SHARD" of each part (names
# percent-encoded), from the origin's manifest
parts() {
    curl -s --max-time 10 "$O_URL/v1/files/$1" | "$PY" -c '
import json, sys, urllib.parse
m = json.load(sys.stdin)
objs = m["objects"]
items = objs.items() if isinstance(objs, dict) else [(o["name"], o) for o in objs]
for name, ob in items:
    comps = ob["components"]
    citems = comps.items() if isinstance(comps, dict) else [(c["role"], c) for c in comps]
    for role, c in citems:
        q = lambda s: urllib.parse.quote(s, safe="")
        print(q(name), q(role), c.get("encoding", "raw"), c.get("digest") or "-", c.get("shard", -1), sep="\t")
'
}
# etag_of URL [CURL ARGS]: the ETag a HEAD gets
etag_of() { curl -sI --max-time 10 "$@" | tr -d '\r' | awk 'tolower($1) == "etag:" { print $2 }'; }
# same_named NAME PATH [CURL ARGS]: same, with the ETag compared when the origin's names
# the bytes by a digest, else the sidecar's a strong one of its own
same_named() {
    local oe
    oe=$(etag_of "$O_URL$2" "${@:3}")
    if grep -Eq '^"(sha256|xxh3):' <<<"$oe"; then
        same "$@"
    else
        SAME_NO_ETAG=1 same "$@"
        check_match "$1: a strong ETag of the tier's" "$(etag_of "$URL$2" "${@:3}")" '^"[0-9a-f]{32}"$'
    fi
}

# --serve-corrupt: the odd file whose part lies is sent as it is, so that the
# sidecar's own digest check is what refuses it (the origin's verifier may
# have found it first: it would answer 500 digest_mismatch)
WAIT_VERIFIED=1 start_origin "$o" --serve-corrupt || finish # same() compares sha256 ETags
start_rootless "$O_URL" "$T/cache" --upstream-ttl 1h || finish

note "cold: every file, object and component against the origin"
for f in "${files[@]}"; do
    same "$f: manifest" "/v1/files/$f"
    same "$f: manifest, zstd" "/v1/files/$f" -H 'Accept-Encoding: zstd'
    parts "$f" >"$T/parts.${f//\//_}"
    while IFS=$'\t' read -r ob role enc dig shard; do
        p="/v1/files/$f/objects/$ob"
        same "$f $ob: object" "$p"
        [ "$shard" = -1 ] || continue
        same_named "$f $ob/$role ($enc, $dig): stored bytes" "$p/$role" -H 'Accept-Encoding: zstd'
        if [ "$enc" = raw ]; then
            same_named "$f $ob/$role: without Accept-Encoding" "$p/$role"
        fi
    done <"$T/parts.${f//\//_}"
    same "$f: raw" "/v1/files/$f/raw"
    SAME_HEAD=1 same "$f: HEAD raw" "/v1/files/$f/raw" -I
    re=$(etag_of "$O_URL/v1/files/$f/raw")
    same "$f: raw, If-None-Match (304)" "/v1/files/$f/raw" -H "If-None-Match: $re"
    me=$(etag_of "$O_URL/v1/files/$f")
    same "$f: manifest, If-None-Match (304)" "/v1/files/$f" -H "If-None-Match: $me"
done

p=/v1/files/v2/raw.zt/objects/a/data
same "raw part (xxh3): a range" "$p" -H 'Range: bytes=1000-200000'
same "raw part: a suffix range" "$p" -H 'Range: bytes=-7'
same "raw part: two ranges" "$p" -H 'Range: bytes=0-9,100000-100009'
same "raw part: unsatisfiable" "$p" -H 'Range: bytes=99999999-'
SAME_HEAD=1 same "raw part: HEAD" "$p" -I
same "raw part: If-None-Match (304)" "$p" -H "If-None-Match: $(etag_of "$O_URL$p")"
same "raw part: If-Range mismatch" "$p" -H 'Range: bytes=0-9' -H 'If-Range: "nope"'
check_match "raw part: named by its xxh3" "$(etag_of "$URL$p")" '^"xxh3:[0-9a-f]{16}"$'
p=/v1/files/v2/zstd.zt/objects/a/data
SAME_NO_ETAG=1 same "zstd part (xxh3 of decoded): a range of the stored bytes" "$p" \
    -H 'Accept-Encoding: zstd' -H 'Range: bytes=10-5000'
# HEAD of a zstd part: the headers but its tier's ETag (a digest of the decoded bytes
# does not name the stored ones)
q=/v1/files/v2/shaz.zt/objects/b/data
curl -sI -H 'Accept-Encoding: zstd' "$O_URL$q" | tr -d '\r' | grep -Evi '^(date|x-request-id|etag):' >"$T/h.o"
curl -sI -H 'Accept-Encoding: zstd' "$URL$q" | tr -d '\r' | grep -Evi '^(date|x-request-id|etag):' >"$T/h.s"
check_same "zstd part (sha256 of decoded): HEAD" "$T/h.s" "$T/h.o"
ze=$(etag_of "$URL$p" -H 'Accept-Encoding: zstd')
http "$T/r" "$URL$p" -H 'Accept-Encoding: zstd' -H "If-None-Match: $ze"
check_code "zstd part: If-None-Match with the tier's ETag: 304" 304
same "raw part (sha256): a range" /v1/files/v2/sha.zt/objects/b/data -H 'Range: bytes=4-99'
check_eq "raw part (sha256): Repr-Digest" \
    "$(curl -sI "$URL/v1/files/v2/sha.zt/objects/b/data" | tr -d '\r' | awk 'tolower($1) == "repr-digest:" { print $2 }')" \
    "sha-256=:$(sha256sum "$T/b.raw" | cut -c1-64 | xxd -r -p | base64):"
sha=$(sha256sum "$T/b.raw" | cut -c1-64)
same "blob by sha256" "/v1/blobs/sha256:$sha"
same "blob by sha256, zstd" "/v1/blobs/sha256:$sha" -H 'Accept-Encoding: zstd'
same "raw, a range across a gap and a part" /v1/files/v2/zstd.zt/raw -H 'Range: bytes=60000-70000'
check_eq "cold: no digest failure" "$(metric "$URL" '^ztensord_upstream_digest_failures_total')" 0
check_eq "cold: no failed fill" "$(metric "$URL" '^ztensord_upstream_fill_failures_total')" 0

note "a v2 root whose parts are in shard files beside it"
if [ -d "$corpus" ]; then
    sh=()
    for f in "$o"/shards/*.zt; do
        r=${f#"$o"/}
        parts "$r" >"$T/parts.${r//\//_}"
        case $r in *-0000*) ;; *) sh+=("$r") ;; esac
        same "$r: raw" "/v1/files/$r/raw"
    done
    check_eq "sharded roots" "${#sh[@]}" 2
    for r in "${sh[@]}"; do
        # a root's JSON says which shards its server found: its ETag is each tier's own
        SAME_NO_ETAG=1 same "$r: manifest (every shard found)" "/v1/files/$r"
        while IFS=$'\t' read -r ob role enc dig shard; do
            SAME_NO_ETAG=1 same "$r $ob: object" "/v1/files/$r/objects/$ob"
            same_named "$r $ob/$role (shard $shard)" "/v1/files/$r/objects/$ob/$role" \
                -H 'Accept-Encoding: zstd'
        done <"$T/parts.${r//\//_}"
    done
    # a root whose second shard is not at the origin: its parts there are 503
    r=shards/sharded.zt
    grep -P '\t00002-of-00002$' "$T/parts.${r//\//_}" | head -1 >"$T/p2"
    check "a part in the second shard" [ -s "$T/p2" ]
    IFS=$'\t' read -r ob role enc dig shard <"$T/p2"
    mkdir -p "$o/broken"
    cp "$o/shards/sharded.zt" "$o/shards/sharded-00001-of-00002.zt" "$o/broken/"
    for i in $(seq 1 20); do # the origin's scan (bounded)
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$O_URL/v1/files/broken/sharded.zt")" = 200 ] && break
        sleep 0.25
    done
    http "$T/r" "$URL/v1/files/broken/sharded.zt/objects/$ob/$role" -H 'Accept-Encoding: zstd'
    check_code "missing shard: its part is 503" 503
    check_errbody "missing shard" shard_unavailable
    check_eq "missing shard: as the origin answers" \
        "$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept-Encoding: zstd' "$O_URL/v1/files/broken/sharded.zt/objects/$ob/$role")" 503
    curl -s "$URL/v1/files/broken/sharded.zt" >"$T/b.s"
    curl -s "$O_URL/v1/files/broken/sharded.zt" >"$T/b.o"
    shards_of() { "$PY" -c 'import json,sys; m=json.load(open(sys.argv[1]))["shards"]; print(" ".join("%s=%s,%s" % (k, v["file"], v["status"] == "ok") for k, v in sorted(m.items())))' "$1"; }
    check_eq "missing shard: the manifest's shards say what the origin's say" "$(shards_of "$T/b.s")" "$(shards_of "$T/b.o")"
    same "missing shard: a part in the other shard" "/v1/files/broken/sharded.zt/objects/layer0/data"
fi

note "the corpus's odd files: a part in an unknown encoding, a part whose bytes lie"
if [ -d "${ZT_CORPUS_V2_DIR:-}/reject" ]; then
    mkdir -p "$o/odd"
    cp "$ZT_CORPUS_V2_DIR/reject/encoding_unknown.zt" "$ZT_CORPUS_V2_DIR/reject/digest_mismatch_xxh3.zt" "$o/odd/"
    for i in $(seq 1 20); do # the origin's scan (bounded)
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$O_URL/v1/files/odd/digest_mismatch_xxh3.zt")" = 200 ] && break
        sleep 0.25
    done
    f=odd/encoding_unknown.zt
    same "$f: manifest" "/v1/files/$f"
    same "$f: its part: 501 encoding_unsupported, as at the origin" "/v1/files/$f/objects/t/data"
    same "$f: raw (the part's stored bytes, unchecked: nothing here decodes them)" "/v1/files/$f/raw"
    f=odd/digest_mismatch_xxh3.zt
    parts "$f" >"$T/parts.odd"
    while IFS=$'\t' read -r ob role enc dig shard; do
        code=$(curl -s --max-time 30 -o /dev/null -w '%{http_code}' -H 'Accept-Encoding: zstd' "$URL/v1/files/$f/objects/$ob/$role")
        rc=$?
        note "$f $ob/$role ($dig): HTTP $code, curl exit $rc"
        if [ "$code $rc" = "200 0" ]; then
            check_same "$f $ob/$role: complete only with the origin's bytes" \
                <(curl -s -H 'Accept-Encoding: zstd' "$URL/v1/files/$f/objects/$ob/$role") \
                <(curl -s -H 'Accept-Encoding: zstd' "$O_URL/v1/files/$f/objects/$ob/$role")
        fi
    done <"$T/parts.odd"
    check "$f: the lying part was refused" grep -q "of \\\\\"$f\\\\\" do not hash" "$D_ERR"
fi

note "warm: no component byte from the origin"
before=$(origin_bytes)
reqs_before=$(metric "$O_URL" '^ztensord_requests_total')
for f in "${files[@]}"; do
    while IFS=$'\t' read -r ob role enc dig shard; do
        [ "$shard" = -1 ] || continue
        curl -s -o "$T/warm" -H 'Accept-Encoding: zstd' "$URL/v1/files/$f/objects/$ob/$role"
    done <"$T/parts.${f//\//_}"
    curl -s -o "$T/warm.raw" "$URL/v1/files/$f/raw"
    check_same "warm: $f raw" "$T/warm.raw" "$o/$f"
done
reqs_after=$(metric "$O_URL" '^ztensord_requests_total')
# the first scrape counts itself once it is over: one request between the readings
check_eq "warm: no request to the origin" "$((reqs_after - reqs_before))" 1
check_eq "warm: no byte from the origin" "$(($(origin_bytes) - before))" 0
stop_daemon

note "a corrupting upstream: every fill's body has a byte flipped"
oport=${O_URL##*:}
start_relay "$oport" flip 2 || finish
start_rootless "http://127.0.0.1:$RPORT" "$T/cache.flip" --upstream-kind ztensord \
    --upstream-retries 0 || finish
for p in v2/raw.zt/objects/a/data v2/zstd.zt/objects/a/data v2/shaz.zt/objects/z/data \
    v2/sha.zt/objects/z/data; do
    curl -s -o /dev/null "$URL/v1/files/${p%%/objects/*}" # the open: two honest requests
    code=$(curl -s --max-time 60 -o "$T/flip" -H 'Accept-Encoding: zstd' -w '%{http_code}' "$URL/v1/files/$p")
    rc=$?
    note "$p: HTTP $code, curl exit $rc, $(stat -c %s "$T/flip") bytes"
    check_ne "$p: corrupt bytes are not served complete" "$code $rc" "200 0"
done
check_eq "corrupt fills: nothing cached" "$(metric "$URL" '^ztensord_cache_items$')" 0
# (a request whose fill failed while it waited may start one more before it answers)
check_ge "corrupt fills: each counted" "$(metric "$URL" '^ztensord_upstream_digest_failures_total')" 4
for x in v2/raw.zt v2/zstd.zt v2/shaz.zt v2/sha.zt; do
    check "corrupt fills: $x logged" grep -q "of \\\\\"$x\\\\\" do not hash" "$D_ERR"
done
check_eq "corrupt fills: no file under blobs/" "$(find "$T/cache.flip/blobs" -type f 2>/dev/null | wc -l)" 0
stop_daemon
stop_relay

note "a file replaced at the origin: the new version after upstream_ttl, never a mix"
start_rootless "$O_URL" "$T/cache.ttl" --upstream-ttl 2s || finish
p=/v1/files/v2/zstd.zt/objects/b/data
ttl_start
http "$T/r" "$URL$p" -H 'Accept-Encoding: zstd'
check_code "old version: a part" 200
curl -s -o "$T/old.a" -H 'Accept-Encoding: zstd' "$O_URL/v1/files/v2/zstd.zt/objects/a/data"
old_etag=$(etag_of "$O_URL/v1/files/v2/zstd.zt")
rand "$T/a2.raw" $((1536 * 1024 + 77))
rand "$T/b2.raw" 4000
v2pack -o "$T/new.zt" --compress a=u8:$((1536 * 1024 + 77)):"$T/a2.raw" \
    b=f32:1000:"$T/b2.raw" z=u8:$((2 * 1024 * 1024)):"$T/z.raw"
mv "$T/new.zt" "$o/v2/zstd.zt"
for i in $(seq 1 20); do # wait (bounded) for the origin's scan to see it
    [ "$(etag_of "$O_URL/v1/files/v2/zstd.zt")" != "$old_etag" ] && break
    sleep 0.25
done
check_ne "the origin serves the new version" "$(etag_of "$O_URL/v1/files/v2/zstd.zt")" "$old_etag"
# before the TTL: an uncached part of the old manifest is the old bytes, or refused
code=$(curl -s --max-time 30 -o "$T/mix" -H 'Accept-Encoding: zstd' -w '%{http_code}' \
    "$URL/v1/files/v2/zstd.zt/objects/a/data")
rc=$?
note "before the TTL: an uncached part: HTTP $code, curl exit $rc"
if ! within_ttl 2; then # reopened: the new version, rightly
    skip "before the TTL: an uncached part of the old version" "the steps outlasted the 2 s TTL"
elif [ "$code $rc" = "200 0" ]; then
    check_same "before the TTL: a complete answer is the old version's bytes" "$T/mix" "$T/old.a"
else
    ok "before the TTL: an uncached part of the old version is refused, not mixed"
fi
while within_ttl 3; do sleep 0.2; done # past the 2 s TTL (a lower bound)
same "after the TTL: the new manifest" /v1/files/v2/zstd.zt
SAME_NO_ETAG=1 same "after the TTL: the new part" "$p" -H 'Accept-Encoding: zstd'
SAME_NO_ETAG=1 same "after the TTL: the other parts" /v1/files/v2/zstd.zt/objects/a/data -H 'Accept-Encoding: zstd'
same "after the TTL: raw" /v1/files/v2/zstd.zt/raw
stop_daemon

note "through nginx as a plain upstream"
if start_nginx "$o"; then
    start_rootless "http://127.0.0.1:$NPORT" "$T/cache.nginx" --upstream-kind plain || finish
    for f in "${files[@]}"; do
        SAME_NO_ETAG=1 same "nginx $f: manifest" "/v1/files/$f"
        while IFS=$'\t' read -r ob role enc dig shard; do
            [ "$shard" = -1 ] || continue
            same_named "nginx $f $ob/$role" "/v1/files/$f/objects/$ob/$role" -H 'Accept-Encoding: zstd'
        done <"$T/parts.${f//\//_}"
        http "$T/r" "$URL/v1/files/$f/raw"
        check_code "nginx $f: raw" 200
        check_same "nginx $f: raw is the file" "$T/r.body" "$o/$f"
    done
    same "nginx: a range" /v1/files/v2/raw.zt/objects/a/data -H 'Range: bytes=100-100000'
    stop_daemon
    stop_nginx
else
    skip "nginx" "no nginx"
fi
stop_origin
finish
