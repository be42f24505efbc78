#!/usr/bin/env bash
# t_objects: the origin's views and indexes through a ztensord with --upstream
# (docs/API.md, "Views and model indexes as objects"). The merged listing carries the
# origin's view and index entries; GET of an upstream STEM.safetensors, a view at the
# origin, serves the view of the upstream STEM.zt, built from its cached manifest (the
# bytes through the cache): cmp-equal to `zt convert`, with ranges and 304; the origin's
# /safetensors route is never asked, and a second download takes no byte from it.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/origin/m" "$T/side" "$T/cache"
rand "$T/a.bin" 400000
rand "$T/b.bin" 300000
pack "$T/origin/m/model-00001-of-00002.zt" l0.w=f32:100000:"$T/a.bin" || finish
pack "$T/origin/m/model-00002-of-00002.zt" --compress l1.w=u8:300000:"$T/b.bin" || finish
for i in 1 2; do
    "$ZT" convert "$T/origin/m/model-0000$i-of-00002.zt" -o "$T/v$i.safetensors" >/dev/null || bad "zt convert" "failed"
done
start_origin "$T/origin" || finish
start_sidecar "$T/side" "$O_URL" "$T/cache" --upstream-ttl 1h || finish

http "$T/r" "$URL/v1/files"
check_code "merged listing" 200
check_eq "merged listing: the origin's files, views and index" "$($HELP names "$T/r.body" | tr '\n' ' ')" \
    "m/model-00001-of-00002.safetensors m/model-00001-of-00002.zt m/model-00002-of-00002.safetensors m/model-00002-of-00002.zt m/model.safetensors.index.json "
check_eq "merged listing: the view's view_of" "$($HELP listing "$T/r.body" m/model-00001-of-00002.safetensors view_of)" m/model-00001-of-00002.zt
check_eq "merged listing: the index's format" "$($HELP listing "$T/r.body" m/model.safetensors.index.json format)" safetensors-index

views0=$(metric "$O_URL" '^ztensord_requests_total\{route="view"')
data_bytes() { metric "$O_URL" '^ztensord_response_bytes_total\{route="(raw|component|blob)"'; }
raw0=$(data_bytes)
for i in 1 2; do
    V=$URL/v1/files/m/model-0000$i-of-00002.safetensors/raw
    http "$T/r" "$URL/v1/files/m/model-0000$i-of-00002.zt/safetensors"
    check_same "upstream view $i: /safetensors of the .zt" "$T/r.body" "$T/v$i.safetensors"
    etag=$(hdr "$T/r.hdr" ETag)
    before=$(data_bytes)
    http "$T/r" "$V"
    check_code "upstream view $i: /raw" 200
    check_same "upstream view $i: zt convert's bytes" "$T/r.body" "$T/v$i.safetensors"
    check_eq "upstream view $i: its bytes were in the cache already (the .zt's)" "$(data_bytes)" "$before"
    check_eq "upstream view $i: Content-Disposition" "$(hdr "$T/r.hdr" Content-Disposition)" \
        "attachment; filename=\"model-0000$i-of-00002.safetensors\""
    # (a cold answer, streamed while its items fill, claims no digest: the file's ETag,
    # docs/CLUSTER.md; once they are filled and checked both names give the digests')
    http "$T/w" -I "$URL/v1/files/m/model-0000$i-of-00002.zt/safetensors"
    etag=$(hdr "$T/w.hdr" ETag)
    check_match "upstream view $i: warm, the digests' ETag" "$etag" '^"st-[0-9a-f]{32}"$'
    check_eq "upstream view $i: the ETag of the .zt's view" "$(hdr "$T/r.hdr" ETag)" "$etag"
    http "$T/r" -H "If-None-Match: $etag" "$V"
    check_code "upstream view $i: If-None-Match" 304
    http "$T/r" -r 100-200099 "$V"
    check_code "upstream view $i: a range" 206
    check_same "upstream view $i: the range's bytes" "$T/r.body" <(slice "$T/v$i.safetensors" 100 200000)
done
check_eq "the origin's view route was never asked" \
    "$(metric "$O_URL" '^ztensord_requests_total\{route="view"')" "$views0"
sent=$(data_bytes)
note "the origin sent $((sent - raw0)) bytes of its files (stored: $(($(stat -c %s "$T/origin/m/model-00001-of-00002.zt") + $(stat -c %s "$T/origin/m/model-00002-of-00002.zt"))))"
for i in 1 2; do
    curl -s -o "$T/again" "$URL/v1/files/m/model-0000$i-of-00002.safetensors/raw"
    check_same "upstream view $i again" "$T/again" "$T/v$i.safetensors"
done
check_eq "the views again: from the cache, no byte from the origin" "$(data_bytes)" "$sent"
check_err "upstream view: no objects of its own" 404 object_not_found \
    "$URL/v1/files/m/model-00001-of-00002.safetensors/objects/l0.w/data"
check_err "a .safetensors name the origin does not list" 404 file_not_found "$URL/v1/files/m/nope.safetensors/raw"

stop_daemon
stop_origin 2>/dev/null || true
finish
