#!/usr/bin/env bash
# Bytes the server knows are wrong (issue 26, point 4): a byte flipped on disk in a
# sha256-digested component. Once the background verifier has found it, the component
# URL answers 500 digest_mismatch naming object, component and byte offset (stored and
# decoded forms), not 200 with the wrong bytes, and so does the file's safetensors view;
# the listing shows the file as corrupt with the count; the manifest and the object's
# JSON mark the component (a new ETag, also under Accept-Encoding: zstd); zt get and zt pull of the file fail. serve_corrupt serves the
# bytes again, without digest claims, for forensics. Fixing the file (rewritten, renamed
# into place) makes a new version: its checks start over, and curl, zt get and zt pull
# get the right bytes.
. "$(dirname "$0")/lib.sh" "$@"

metric() {
    curl -s --max-time 10 "$URL/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}
state() { metric "ztensord_digest_components{state=\"$1\"}"; }
# wait_verdicts MISMATCHES: until nothing is pending and MISMATCHES were found (60 s).
wait_verdicts() {
    local i
    for i in $(seq 1 600); do
        [ "$(state pending)" = 0 ] && [ "$(state mismatch)" = "$1" ] && return 0
        sleep 0.1
    done
    return 1
}
# listed FILE KEY: a key of FILE's listing entry, as JSON.
listed() {
    curl -s --max-time 10 "$URL/v1/files" | $PY -c 'import json,sys
d=json.load(sys.stdin); e=[x for x in d["files"] if x["name"]==sys.argv[1]]
print(json.dumps(e[0].get(sys.argv[2])) if e else "NOFILE")' "$1" "$2"
}
# mark JSONFILE OBJECT: the digest_status of OBJECT's data component in a manifest.
mark() {
    $PY -c 'import json,sys
c=json.load(open(sys.argv[1]))["objects"][sys.argv[2]]["components"]["data"]
print(c.get("digest_status", "none"))' "$1" "$2"
}
off_of() { # off_of FILE OBJECT: its data component's offset
    "$ZT" info --json "$1" | $PY -c 'import json,sys
print(json.load(sys.stdin)["objects"][sys.argv[1]]["components"]["data"]["offset"])' "$2"
}

R=$T/root
mkdir -p "$R" "$T/pull"
rand "$T/w.raw" 8192
rand "$T/v.raw" 5000
text "$T/z.raw" 20000
pack "$T/good.zt" w=u8:8192:"$T/w.raw" v=u8:5000:"$T/v.raw"
pack "$T/goodz.zt" --compress --digest sha256 z=u8:20000:"$T/z.raw"
HW=$(sha256_hex "$T/w.raw")
OFF=$(off_of "$T/good.zt" w)
ZOFF=$(off_of "$T/goodz.zt" z)
cp "$T/good.zt" "$R/f.zt"
cp "$T/goodz.zt" "$R/z.zt"
flip_byte "$R/f.zt" $((OFF + 100))
flip_byte "$R/z.zt" $((ZOFF + 20))
check_ne "the flipped file differs" "$(sha256_hex "$R/f.zt")" "$(sha256_hex "$T/good.zt")"

# ---- the verifier's verdict, then every way of asking
start_daemon "$R" || finish
if wait_verdicts 2; then ok "the verifier found both mismatches"; else bad "the verifier found both mismatches" "pending=$(state pending) mismatch=$(state mismatch)"; fi
C=$URL/v1/files/f.zt/objects/w/data
check_err "corrupt component" 500 digest_mismatch "$C"
check_match "the error names object, component and byte offset" "$ERRMSG" \
    "object \"w\", component \"data\" of \"f.zt\" \\(bytes $OFF\\.\\.$((OFF + 8192)), byte $OFF of the file\\)"
check_match "the error names the claimed digest" "$ERRMSG" "sha256:$HW"
check_nomatch "no sha256 ETag on the error" "$(hdr "$LAST.hdr" ETag)" sha256
http "$T/h" -I "$C"
check_eq "HEAD of the corrupt component: 500" "$CODE" 500
req "a range of it: 500 too" 500 -H 'Range: bytes=0-9' "$C"
req "the good component of the same file: 200" 200 "$URL/v1/files/f.zt/objects/v/data"
check_same "the good component: its bytes" "$LAST.body" "$T/v.raw"
check_err "corrupt zstd component, decoded form" 500 digest_mismatch -H 'Accept-Encoding: identity' "$URL/v1/files/z.zt/objects/z/data"
check_match "decoded form: the message names it" "$ERRMSG" "object \"z\", component \"data\" of \"z.zt\""
check_err "corrupt zstd component, stored form" 500 digest_mismatch -H 'Accept-Encoding: zstd' "$URL/v1/files/z.zt/objects/z/data"
check_err "its blob URL: 500 as before" 500 digest_mismatch "$URL/v1/blobs/sha256:$HW"
req "/raw stays the file's bytes" 200 "$URL/v1/files/f.zt/raw"
check_same "/raw: the bytes on disk" "$LAST.body" "$R/f.zt"

check_eq "listing: f.zt corrupt" "$(listed f.zt status)" '"corrupt"'
check_eq "listing: one corrupt component" "$(listed f.zt corrupt_components)" 1
check_eq "listing: the other fields kept" "$(listed f.zt objects)" 2
check_eq "listing: z.zt corrupt" "$(listed z.zt status)" '"corrupt"'
req "paged listing" 200 "$URL/v1/files?prefix=f.zt&limit=1"
check_match "paged listing: corrupt too" "$(cat "$LAST.body")" '"name":"f.zt",.*"status":"corrupt","corrupt_components":1'

req "manifest" 200 "$URL/v1/files/f.zt"
cp "$LAST.body" "$T/m.json"
check_eq "manifest: the corrupt component marked" "$(mark "$T/m.json" w)" mismatch
check_eq "manifest: the good one not" "$(mark "$T/m.json" v)" none
ME=$(hdr "$LAST.hdr" ETag)
check_match "manifest: an ETag of its own" "$ME" '^"manifest-mismatch1-[0-9a-f]{32}"$'
req "manifest: If-None-Match with it: 304" 304 -H "If-None-Match: $ME" "$URL/v1/files/f.zt"
req "manifest under Accept-Encoding: zstd" 200 -H 'Accept-Encoding: zstd, gzip' "$URL/v1/files/f.zt"
check_eq "manifest under zstd: the marked JSON" "$(mark "$LAST.body" w)" mismatch
check_eq "manifest under zstd: the same ETag" "$(hdr "$LAST.hdr" ETag)" "$ME"
objmark() { $PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["components"]["data"].get("digest_status", "none"))' "$1"; }
req "object JSON of the corrupt object" 200 "$URL/v1/files/f.zt/objects/w"
check_eq "object JSON: its component marked" "$(objmark "$LAST.body")" mismatch
check_match "object JSON: an ETag of its own" "$(hdr "$LAST.hdr" ETag)" '^"object-mismatch1-[0-9a-f]{32}"$'
req "object JSON of the good object" 200 "$URL/v1/files/f.zt/objects/v"
check_eq "object JSON of the good object: no mark" "$(objmark "$LAST.body")" none
check_err "the file's safetensors view: 500, not the wrong bytes" 500 digest_mismatch "$URL/v1/files/f.zt/safetensors"
check_match "the view's error names tensor, object, component and byte offset" "$ERRMSG" \
    "tensor \"w\" of its safetensors view \(object \"w\", component \"data\", bytes $OFF\.\.$((OFF + 8192)) of the file, byte $OFF\)"
check_err "the view under its own name (f.safetensors): 500 too" 500 digest_mismatch "$URL/v1/files/f.safetensors/raw"

# zt get and zt pull: errors, never the wrong bytes
"$ZT" get "$URL/v1/files/f.zt" w -o "$T/get.out" 2>"$T/get.err"
rc=$?
check_ne "zt get of the corrupt component fails" "$rc" 0
check_match "zt get: the message names object, component and byte offset" "$(cat "$T/get.err")" \
    "object \"w\", component \"data\".*byte $OFF"
check "zt get: nothing written" test ! -e "$T/get.out"
"$ZT" pull --quiet -o "$T/pull" "$URL/v1/files/f.zt" >"$T/pull.out" 2>&1
rc=$?
check_ne "zt pull of the corrupt file fails" "$rc" 0
check "zt pull: no file written" test ! -e "$T/pull/f.zt"
check_match "zt pull: names the mismatch" "$(cat "$T/pull.out")" 'digest|DIGEST'
"$ZT" pull --quiet -o "$T/pulldir" "$URL/v1/files/" >"$T/pulldir.out" 2>&1
rc=$?
check_ne "zt pull of the whole root fails too (a corrupt file is not skipped)" "$rc" 0
check_match "zt pull of the root: names f.zt" "$(cat "$T/pulldir.out")" 'f\.zt'
stop_daemon

# ---- serve_corrupt: the bytes as they are on disk, without digest claims
start_daemon "$R" --serve-corrupt || finish
C=$URL/v1/files/f.zt/objects/w/data
if wait_verdicts 2; then ok "serve_corrupt: verdicts"; else bad "serve_corrupt: verdicts" "mismatch=$(state mismatch)"; fi
req "serve_corrupt: the corrupt component served" 200 "$C"
slice "$R/f.zt" "$OFF" 8192 >"$T/bad.raw"
check_same "serve_corrupt: the bytes on disk" "$LAST.body" "$T/bad.raw"
check_match "serve_corrupt: an identity ETag" "$(hdr "$LAST.hdr" ETag)" '^"[0-9a-f]{32}"$'
check_eq "serve_corrupt: no Repr-Digest" "$(hdr "$LAST.hdr" Repr-Digest)" ""
check_eq "serve_corrupt: still listed corrupt" "$(listed f.zt status)" '"corrupt"'
req "serve_corrupt: manifest" 200 "$URL/v1/files/f.zt"
check_eq "serve_corrupt: still marked" "$(mark "$LAST.body" w)" mismatch
check_err "serve_corrupt: the blob URL still refuses" 500 digest_mismatch "$URL/v1/blobs/sha256:$HW"
req "serve_corrupt: the view served" 200 "$URL/v1/files/f.zt/safetensors"
"$ZT" convert "$R/f.zt" -o "$T/fview.safetensors" >/dev/null 2>&1
check_same "serve_corrupt: the view of the bytes on disk" "$LAST.body" "$T/fview.safetensors"

# ---- fixed while served: a new file version, checked again from the start
stop_daemon
start_daemon "$R" || finish
C=$URL/v1/files/f.zt/objects/w/data
if wait_verdicts 2; then ok "again without serve_corrupt: verdicts"; else bad "again: verdicts" "mismatch=$(state mismatch)"; fi
req "again: 500" 500 "$C"
cp "$T/good.zt" "$R/.f.tmp" && mv "$R/.f.tmp" "$R/f.zt"
cp "$T/goodz.zt" "$R/.z.tmp" && mv "$R/.z.tmp" "$R/z.zt"
kill -HUP "$D_PID"
fixed=0
for i in $(seq 1 600); do
    if [ "$(listed f.zt status)" = '"ok"' ] && [ "$(listed z.zt status)" = '"ok"' ] &&
        [ "$(state pending)" = 0 ] && [ "$(state mismatch)" = 0 ]; then
        fixed=1
        break
    fi
    sleep 0.1
done
if [ $fixed = 1 ]; then ok "fixed: listed ok, nothing pending or mismatched"; else bad "fixed: listed ok" "status $(listed f.zt status), mismatch=$(state mismatch)"; fi
check_eq "fixed: no corrupt_components" "$(listed f.zt corrupt_components)" null
req "fixed: the component" 200 "$C"
check_same "fixed: its bytes" "$LAST.body" "$T/w.raw"
check_eq "fixed: the digest ETag" "$(hdr "$LAST.hdr" ETag)" "\"sha256:$HW\""
req "fixed: decoded zstd component" 200 -H 'Accept-Encoding: identity' "$URL/v1/files/z.zt/objects/z/data"
check_same "fixed: decoded bytes" "$LAST.body" "$T/z.raw"
req "fixed: manifest" 200 "$URL/v1/files/f.zt"
check_eq "fixed: no mark" "$(mark "$LAST.body" w)" none
check_match "fixed: the manifest ETag" "$(hdr "$LAST.hdr" ETag)" '^"manifest-[0-9a-f]{32}"$'
"$ZT" get "$URL/v1/files/f.zt" w -o "$T/get.out" 2>"$T/get.err"
rc=$?
check_eq "fixed: zt get exits 0 ($(head -c 300 "$T/get.err"))" "$rc" 0
check_same "fixed: zt get's bytes" "$T/get.out" "$T/w.raw"
"$ZT" pull --quiet -o "$T/pull" "$URL/v1/files/f.zt" >"$T/pull.out" 2>&1
rc=$?
check_eq "fixed: zt pull exits 0 ($(head -c 300 "$T/pull.out"))" "$rc" 0
check_same "fixed: the pulled file" "$T/pull/f.zt" "$T/good.zt"
finish
