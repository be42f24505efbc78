#!/usr/bin/env bash
# Poisoned blobs (issue 10, point 3): a .zt file dropped into the root whose manifest
# claims the sha256 of bytes it does not hold. Its blob URL must never answer those
# bytes with `immutable` or a "sha256:" ETag (a shared cache would keep them for a
# year under the digest's name): once the background verifier has hashed it, the blob
# URL answers 500 digest_mismatch, so does the component URL (issue 26: t_corrupt.sh),
# and the log names file, object, component and byte offset. A good file's blob
# becomes immutable once verified; a good copy of the claimed bytes elsewhere in the
# tree takes over the blob URL. With verify_digests off no digest is claimed for files
# found on disk, while whole-file uploads (verified on arrival) are claimed at once.
. "$(dirname "$0")/lib.sh" "$@"

# metric NAME_AND_LABELS: its value in a fresh /metrics ("" if absent).
metric() {
    curl -s --max-time 10 "$URL/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}
pending() { metric 'ztensord_digest_components{state="pending"}'; }
# wait_verified [SECONDS]: poll until no component waits for verification.
wait_verified() {
    local i lim=${1:-30}
    for i in $(seq 1 $((lim * 10))); do
        [ "$(pending)" = 0 ] && return 0
        sleep 0.1
    done
    return 1
}
# no_false_claim NAME: the last response does not name wrong bytes by the digest.
no_false_claim() {
    check_nomatch "$1: not immutable" "$(hdr "$LAST.hdr" Cache-Control)" immutable
    check_nomatch "$1: ETag not sha256" "$(hdr "$LAST.hdr" ETag)" 'sha256'
    check_eq "$1: no Repr-Digest" "$(hdr "$LAST.hdr" Repr-Digest)" ""
}

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 8192
rand "$T/v.raw" 5000
pack "$T/good.zt" w=u8:8192:"$T/w.raw"
pack "$R/other.zt" v=u8:5000:"$T/v.raw"
HW=$(sha256_hex "$T/w.raw")
HV=$(sha256_hex "$T/v.raw")
OFF=$("$ZT" info --json "$T/good.zt" | $PY -c 'import json,sys; print(json.load(sys.stdin)["objects"]["w"]["components"]["data"]["offset"])')
# The poisoned file: good.zt's manifest (claiming sha256 HW) over changed bytes.
cp "$T/good.zt" "$R/bad.zt"
printf '\x00\x01\x02\x03\x04\x05\x06\x07' | dd of="$R/bad.zt" bs=1 seek=$((OFF + 1000)) conv=notrunc status=none
"$ZT" get "$R/bad.zt" w >"$T/bad.raw" 2>/dev/null
check_ne "the poisoned component holds other bytes" "$(sha256_hex "$T/bad.raw")" "$HW"

# ---- from the first request on: never the wrong bytes under the digest's name
start_daemon "$R" || finish
# Before verification the bytes may be served, but only without claims.
for i in 1 2 3 4 5; do
    LAST=$T/r
    http "$LAST" "$URL/v1/blobs/sha256:$HW"
    case $CODE in
    200) no_false_claim "poisoned blob right after start ($i), unverified" ;;
    500) ok "poisoned blob right after start ($i): 500, already verified" ;;
    *) bad "poisoned blob right after start ($i)" "HTTP $CODE" ;;
    esac
done
if wait_verified 30; then ok "verification finished"; else bad "verification finished" "pending=$(pending)"; fi
check_eq "one mismatch in /metrics" "$(metric 'ztensord_digest_components{state="mismatch"}')" 1
check_eq "one verified component in /metrics" "$(metric 'ztensord_digest_components{state="verified"}')" 1

check_err "poisoned blob after verification" 500 digest_mismatch "$URL/v1/blobs/sha256:$HW"
check_match "the error names file, object and component" "$ERRMSG" 'component "data" of object "w" in "bad.zt"'
no_false_claim "poisoned blob error"
http "$T/h" -I "$URL/v1/blobs/sha256:$HW"
check_eq "HEAD of the poisoned blob: 500" "$CODE" 500

# Its component URL refuses too (issue 26; tests/hostile/t_corrupt.sh covers serve_corrupt).
check_err "poisoned component URL" 500 digest_mismatch "$URL/v1/files/bad.zt/objects/w/data"
check_match "poisoned component URL: names object, component and offset" "$ERRMSG" \
    "object \"w\", component \"data\" of \"bad.zt\" \\(bytes $OFF\\."
no_false_claim "poisoned component URL"
check_err "poisoned component, identity" 500 digest_mismatch -H 'Accept-Encoding: identity' "$URL/v1/files/bad.zt/objects/w/data"

# (log values are quoted: their inner quotes are escaped)
if sed 's/\\"/"/g' "$D_ERR" | grep -q 'verify: bad.zt: .*object "w", component "data", byte '"$OFF"')'; then
    ok "mismatch logged with file, object, component and byte offset"
else
    bad "mismatch logged with file, object, component and byte offset" "$(grep 'verify' "$D_ERR" | head -3)"
fi

req "good blob after verification" 200 "$URL/v1/blobs/sha256:$HV"
check_same "good blob: the bytes" "$LAST.body" "$T/v.raw"
check_match "good blob: immutable" "$(hdr "$LAST.hdr" Cache-Control)" immutable
check_eq "good blob: sha256 ETag" "$(hdr "$LAST.hdr" ETag)" "\"sha256:$HV\""
check_eq "good blob: Repr-Digest" "$(hdr "$LAST.hdr" Repr-Digest)" "sha-256=:$(sha256_b64 "$T/v.raw"):"

# ---- a true copy of the claimed bytes appears: it answers for the digest
cp "$T/good.zt" "$R/.good.tmp" && mv "$R/.good.tmp" "$R/z-good.zt"
kill -HUP "$D_PID"
ok_blob=0
for i in $(seq 1 300); do
    http "$T/p" "$URL/v1/blobs/sha256:$HW"
    if [ "$CODE" = 200 ] && cmp -s "$T/p.body" "$T/w.raw" && grep -qi '^cache-control:.*immutable' "$T/p.hdr"; then
        ok_blob=1
        break
    fi
    if [ "$CODE" = 200 ] && ! cmp -s "$T/p.body" "$T/w.raw"; then
        bad "with a good copy present: never the poisoned bytes" "got other bytes"
        break
    fi
    sleep 0.1
done
if [ $ok_blob = 1 ]; then ok "a verified good copy takes over the blob URL (immutable)"; else bad "a verified good copy takes over the blob URL" "HTTP $CODE $(hdr "$T/p.hdr" Cache-Control)"; fi
check_eq "its ETag is the digest" "$(hdr "$T/p.hdr" ETag)" "\"sha256:$HW\""
stop_daemon

# ---- verify_digests off: nothing found on disk is claimed; uploads are
start_daemon "$R" --verify-digests=false "${OPEN[@]}" || finish
sleep 0.5
check_eq "verify off: components stay pending" "$(pending)" 3
req "verify off: good blob served" 200 "$URL/v1/blobs/sha256:$HV"
check_same "verify off: good blob bytes" "$LAST.body" "$T/v.raw"
no_false_claim "verify off: good blob"
req "verify off: poisoned blob's digest, a good copy present" 200 "$URL/v1/blobs/sha256:$HW"
no_false_claim "verify off: claimed digest"
rand "$T/u.raw" 3000
pack "$T/u.zt" u=u8:3000:"$T/u.raw"
HU=$(sha256_hex "$T/u.raw")
put up.zt "$T/u.zt"
check_code "verify off: PUT a file" 201
req "verify off: the uploaded file's blob, at once" 200 "$URL/v1/blobs/sha256:$HU"
check_same "verify off: uploaded blob bytes" "$LAST.body" "$T/u.raw"
check_match "verify off: uploaded blob immutable (verified on upload)" "$(hdr "$LAST.hdr" Cache-Control)" immutable
check_eq "verify off: uploaded blob ETag" "$(hdr "$LAST.hdr" ETag)" "\"sha256:$HU\""
check_eq "verify off: still nothing hashed in the background" "$(pending)" 3
finish
