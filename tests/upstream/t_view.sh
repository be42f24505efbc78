#!/usr/bin/env bash
# t_view: the safetensors view (/v1/files/{file}/safetensors) of an upstream file, through
# a sidecar: the same bytes as the origin's view and as `zt convert` of the origin's file
# (raw, zstd, v2, v2 compressed, the sharded v2 model of the corpus when given, a file
# that is safetensors already), cold and warm, in ranges across tensors, HEAD and
# If-None-Match, with the origin's digest-derived ETag once its items are filled and
# checked (every tier agrees; the cold answer, streamed while they fill, claims no
# digest: docs/CLUSTER.md). Only the
# tensors a range covers are fetched: a range inside the first tensor of a cold file
# does not bring the others.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/origin" "$T/cache"
rand "$T/a.bin" 1200000
text "$T/b.bin" 2000000
rand "$T/c.bin" 4096
ARGS=(w.a=f32:300x1000:"$T/a.bin" w.b=u8:2000000:"$T/b.bin" w.c=i16:2048:"$T/c.bin")
pack "$T/origin/m.zt" "${ARGS[@]}" || finish
pack "$T/origin/z.zt" --compress "${ARGS[@]}" || finish
pack "$T/origin/nd.zt" --digest none "${ARGS[@]}" || finish
pack "$T/origin/v2.zt" --format v2 "${ARGS[@]}" || finish
pack "$T/origin/v2z.zt" --format v2 --compress "${ARGS[@]}" || finish
rand "$T/big.bin" $((8 << 20))
pack "$T/origin/cold.zt" first=u8:4096:"$T/c.bin" big=u8:$((8 << 20)):"$T/big.bin" || finish
"$ZT" convert "$T/origin/m.zt" -o "$T/origin/s.safetensors" >/dev/null 2>&1 ||
    bad "zt convert to a .safetensors for the origin" "failed"
FILES="m.zt z.zt nd.zt v2.zt v2z.zt s.safetensors"
if [ -n "${ZT_CORPUS_V2_DIR:-}" ] && [ -f "$ZT_CORPUS_V2_DIR/accept/sharded.zt" ]; then
    cp "$ZT_CORPUS_V2_DIR"/accept/sharded*.zt "$ZT_CORPUS_V2_DIR"/accept/sharded*.companion \
        "$T/origin/"
    FILES="$FILES sharded.zt"
else
    skip "the sharded v2 model through the sidecar" "ZT_CORPUS_V2_DIR not set"
fi
for f in $FILES; do "$ZT" convert "$T/origin/$f" -o "$T/$f.out.safetensors" >/dev/null 2>&1; done

WAIT_VERIFIED=1 start_origin "$T/origin" || finish
start_rootless "$O_URL" "$T/cache" || finish

for f in $FILES; do
    V=/v1/files/$f/safetensors
    http "$T/cold" "$URL$V"
    check_code "$f: cold view" 200
    check_same "$f: cold view is zt convert's output" "$T/cold.body" "$T/$f.out.safetensors"
    no_etag=0
    [ "$f" = nd.zt ] && no_etag=1 # no digests: each tier names it by its own file identity
    SAME_NO_ETAG=$no_etag same "$f: view" "$V"
    check_same "$f: warm view is zt convert's output" "$T/same.s" "$T/$f.out.safetensors"
    check_eq "$f: Content-Disposition" "$(hdr "$T/same.s.h" Content-Disposition)" \
        "attachment; filename=\"${f%.*}.safetensors\""
    size=$(stat -c %s "$T/$f.out.safetensors")
    SAME_NO_ETAG=$no_etag same "$f: header and data" "$V" -H "Range: bytes=3-$((size / 2))"
    SAME_NO_ETAG=$no_etag same "$f: suffix" "$V" -H 'Range: bytes=-1000'
    SAME_NO_ETAG=$no_etag SAME_HEAD=1 same "$f: HEAD" "$V" -I
    case $f in
    m.zt | v2.zt) # raw tensors: the cold view streams them while they fill
        check_match "$f: the cold view, its items still filling, claims no digest" \
            "$(hdr "$T/cold.hdr" ETag)" '^"st-file-[0-9a-f]{32}"$'
        ;;
    esac
    etag=$(hdr "$T/same.s.h" ETag)
    http "$T/r" "$URL$V" -H "If-None-Match: $etag"
    check_code "$f: If-None-Match its (warm) ETag" 304
done
for f in m.zt z.zt v2.zt v2z.zt; do
    check_match "$f: the digests' ETag" \
        "$(curl -sI "$URL/v1/files/$f/safetensors" | tr -d '\r' | awk 'tolower($1)=="etag:"{print $2}')" \
        '^"st-[0-9a-f]{32}"$'
done

# ---- only what a range covers is fetched
"$ZT" convert "$T/origin/cold.zt" -o "$T/cold.out.safetensors" >/dev/null 2>&1
before=$(origin_bytes)
http "$T/r" "$URL/v1/files/cold.zt/safetensors" -r 0-300
check_code "cold file: a range in the header and the first tensor" 206
slice "$T/cold.out.safetensors" 0 301 >"$T/want"
check_same "cold file: the range's bytes" "$T/r.body" "$T/want"
sent=$(($(origin_bytes) - before))
note "origin sent $sent bytes for it (the manifest included)"
check "cold file: the 8 MiB tensor was not fetched ($sent bytes)" [ "$sent" -lt 1000000 ]
http "$T/r" "$URL/v1/files/cold.zt/safetensors"
check_same "cold file: then the whole view" "$T/r.body" "$T/cold.out.safetensors"

stop_daemon
stop_origin
finish
