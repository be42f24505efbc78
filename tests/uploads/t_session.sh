#!/bin/bash
# Component upload sessions: POST /v1/uploads, PUT components (raw and zstd), GET state,
# Content-Digest on components, key reuse, commit (and failed commits that leave the
# session usable), DELETE, idle expiry, max_session_components, and clients that go away
# in the middle of a component.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
start_daemon "$R" "${OPEN[@]}" || finish

rand "$T/c1.raw" 1000       # 250 f32, not a multiple of 64 bytes
text "$T/c2.raw" 100000     # compressible, sent with ?encoding=zstd
rand "$T/c3.raw" 3000
rand "$T/other.raw" 3000
rand "$T/vals.raw" 16       # 4 f32 values of a 3x5 CSR matrix
$HELP u64 "$T/idx.raw" 0 1 4 2
$HELP u64 "$T/ptr.raw" 0 1 3 4

# ---- open
session_open m/s.zt '{"owner":"test","n":1}'
check_code "POST /v1/uploads: 201" 201
check_match "POST /v1/uploads: id" "$SID" '^[A-Za-z0-9_-]{8,64}$'
check_eq "POST /v1/uploads: url" "$(jget "$LAST.body" url)" "/v1/uploads/$SID"
check_eq "POST /v1/uploads: file" "$(jget "$LAST.body" file)" m/s.zt
check_eq "POST /v1/uploads: Location" "$(hdr "$LAST.hdr" Location)" "/v1/uploads/$SID"
check_eq "a session has a staging file" "$(staging_count "$R")" 1
S=$URL/v1/uploads/$SID

# ---- components
comp_put "$SID" k1 "$T/c1.raw"
check_code "PUT raw component: 201" 201
check_eq "raw component: offset" "$(jget "$LAST.body" offset)" 64
check_eq "raw component: length" "$(jget "$LAST.body" length)" 1000
check_eq "raw component: encoding" "$(jget "$LAST.body" encoding)" raw
check_eq "raw component: digest" "$(jget "$LAST.body" digest)" "sha256:$(sha256_hex "$T/c1.raw")"
comp_put "$SID" "k2?encoding=zstd" "$T/c2.raw"
check_code "PUT zstd component: 201" 201
K2OFF=$(jget "$LAST.body" offset)
K2LEN=$(jget "$LAST.body" length)
K2DIG=$(jget "$LAST.body" digest)
check_eq "zstd component: offset is the next 64-byte boundary" "$K2OFF" 1088
check_eq "zstd component: encoding" "$(jget "$LAST.body" encoding)" zstd
check_eq "zstd component: uncompressed_length" "$(jget "$LAST.body" uncompressed_length)" 100000
check "zstd component: compressed" [ "$K2LEN" -lt 100000 ]
check_match "zstd component: digest" "$K2DIG" '^sha256:[0-9a-f]{64}$'

req "GET session: 200" 200 "$S"
check_eq "GET session: id" "$(jget "$LAST.body" id)" "$SID"
check_eq "GET session: k1 offset" "$(jget "$LAST.body" components k1 offset)" 64
check_eq "GET session: k1 digest" "$(jget "$LAST.body" components k1 digest)" "sha256:$(sha256_hex "$T/c1.raw")"
check_eq "GET session: k2 length" "$(jget "$LAST.body" components k2 length)" "$K2LEN"
check_eq "GET session: k2 encoding" "$(jget "$LAST.body" components k2 encoding)" zstd
BYTES=$(jget "$LAST.body" bytes)
check_match "GET session: bytes = end of k2 (or the next 64-byte boundary)" "$BYTES" "^($((K2OFF + K2LEN))|$(((K2OFF + K2LEN + 63) / 64 * 64)))\$"

# ---- Content-Digest on a component
comp_put "$SID" k3 "$T/c3.raw" -H "Content-Digest: sha-256=:$(sha256_b64 "$T/other.raw"):"
check_code "component Content-Digest mismatch: 400" 400
check_errbody "component Content-Digest mismatch" digest_mismatch
req "GET session after the mismatch" 200 "$S"
check_eq "mismatched component is absent" "$(jget "$LAST.body" components k3)" MISSING
check_eq "mismatched component: bytes back to where they were" "$(jget "$LAST.body" bytes)" "$BYTES"
comp_put "$SID" k3 "$T/c3.raw" -H "Content-Digest: sha-256=:$(sha256_b64 "$T/c3.raw"):"
check_code "same key again with the right digest: 201" 201
check_eq "re-uploaded component: digest" "$(jget "$LAST.body" digest)" "sha256:$(sha256_hex "$T/c3.raw")"
K3OFF=$(jget "$LAST.body" offset)
check_eq "re-uploaded component: offset" "$K3OFF" $(((BYTES + 63) / 64 * 64))

# ---- key reuse
req "GET session before the reuse" 200 "$S"
BYTES=$(jget "$LAST.body" bytes)
comp_put "$SID" k1 "$T/other.raw"
check_code "component key reuse: 409" 409
check_errbody "component key reuse" component_exists
req "GET session after the reuse" 200 "$S"
check_eq "key reuse: k1 unchanged" "$(jget "$LAST.body" components k1 digest)" "sha256:$(sha256_hex "$T/c1.raw")"
check_eq "key reuse: bytes unchanged" "$(jget "$LAST.body" bytes)" "$BYTES"

comp_put "$SID" vals "$T/vals.raw"
check_code "PUT CSR values: 201" 201
comp_put "$SID" idx "$T/idx.raw"
check_code "PUT CSR indices: 201" 201
comp_put "$SID" ptr "$T/ptr.raw"
check_code "PUT CSR indptr: 201" 201

# ---- commits that fail leave the session usable
X_OK='"x":{"shape":[250],"format":"dense","attributes":{"unit":"m"},"components":{"data":{"key":"k1","dtype":"f32"}}}'
T_OK='"t":{"shape":[100000],"format":"dense","components":{"data":{"key":"k2","dtype":"u8"}}}'
Y_OK='"y":{"shape":[3000],"components":{"data":{"key":"k3","dtype":"uint8"}}}'
SP_OK='"sp":{"shape":[3,5],"format":"sparse_csr","components":{"values":{"key":"vals","dtype":"f32"},"indices":{"key":"idx","dtype":"u64"},"indptr":{"key":"ptr","dtype":"u64"}}}'
SP_NOPTR='"sp":{"shape":[3,5],"format":"sparse_csr","components":{"values":{"key":"vals","dtype":"f32"},"indices":{"key":"idx","dtype":"u64"}}}'
X_BAD='"x":{"shape":[999],"format":"dense","components":{"data":{"key":"k1","dtype":"f32"}}}'

commit "$SID" "{\"objects\":{$X_BAD,$T_OK}}"
check_code "commit with a size mismatch: 422" 422
check_errbody "commit with a size mismatch" invalid_objects
check_match "size mismatch: the message says why" "$ERRMSG" '(bytes|size|shape).*"x"|"x".*(bytes|size|shape)'
check_eq "size mismatch: nothing published" "$(ls "$R/m/s.zt" 2>/dev/null)" ""
req "session still there after the failed commit" 200 "$S"
check_eq "failed commit: components kept" "$(jget "$LAST.body" components k1 length)" 1000

commit "$SID" "{\"objects\":{$X_OK,$SP_NOPTR}}"
check_code "commit sparse_csr without indptr: 422" 422
check_errbody "commit sparse_csr without indptr" invalid_objects
check_match "missing indptr: the message names it" "$ERRMSG" 'indptr'

commit "$SID" '{"objects":{"q":{"shape":[4],"components":{"data":{"key":"nope","dtype":"u8"}}}}}'
check_code "commit naming an unknown key: 422" 422
commit "$SID" '{"objects":{"q":{"shape":[1000],"components":{"data":{"key":"k1","dtype":"nonsense"}}}}}'
check_code "commit with a bad dtype: 422" 422
commit "$SID" 'not json'
check_code "commit with a non-JSON body: 400" 400
req "session still usable after four failed commits" 200 "$S"

commit "$SID" "{\"objects\":{$X_OK,$T_OK,$Y_OK,$SP_OK}}"
check_code "commit: 201" 201
check_eq "commit: JSON name" "$(jget "$LAST.body" name)" m/s.zt
check_eq "commit: JSON objects" "$(jget "$LAST.body" objects)" 4
CET=$(hdr "$LAST.hdr" ETag)
check_eq "commit: ETag = /v1/files etag" "$(listing_field m/s.zt etag)" "$CET"
check_eq "commit: listed ok" "$(listing_field m/s.zt status)" ok
req "commit: session gone afterwards (404)" 404 "$S"
check_staging_empty "commit: staging empty" "$R"

req "GET x/data" 200 "$URL/v1/files/m/s.zt/objects/x/data"
check_same "x/data bytes exact" "$LAST.body" "$T/c1.raw"
req "GET t/data (decoded)" 200 "$URL/v1/files/m/s.zt/objects/t/data"
check_same "t/data decoded bytes exact" "$LAST.body" "$T/c2.raw"
req "GET t/data (stored zstd)" 200 -H 'Accept-Encoding: zstd' "$URL/v1/files/m/s.zt/objects/t/data"
check_eq "t/data stored bytes have the digest the PUT reported" "sha256:$(sha256_hex "$LAST.body")" "$K2DIG"
req "GET y/data" 200 "$URL/v1/files/m/s.zt/objects/y/data"
check_same "y/data bytes exact" "$LAST.body" "$T/c3.raw"
req "GET sp/indptr" 200 "$URL/v1/files/m/s.zt/objects/sp/indptr"
check_same "sp/indptr bytes exact" "$LAST.body" "$T/ptr.raw"
req "GET manifest" 200 "$URL/v1/files/m/s.zt"
cp "$LAST.body" "$T/manifest.json"
check_eq "manifest: file attributes" "$(jget "$T/manifest.json" attributes)" '{"n":1,"owner":"test"}'
check_eq "manifest: object attributes" "$(jget "$T/manifest.json" objects x attributes)" '{"unit":"m"}'
check_eq "manifest: x dtype" "$(jget "$T/manifest.json" objects x components data dtype)" f32
check_eq "manifest: sp format" "$(jget "$T/manifest.json" objects sp format)" sparse_csr
check_eq "manifest: t encoding" "$(jget "$T/manifest.json" objects t components data encoding)" zstd
check "zt verify on the published file" zverify "$R/m/s.zt"
req "GET /raw of the committed file" 200 "$URL/v1/files/m/s.zt/raw"
cp "$LAST.body" "$T/committed.zt"
check "zt verify on the downloaded /raw" zverify "$T/committed.zt"
zget "$T/committed.zt" t data >"$T/t.out" 2>/dev/null
check_same "zt get t data on the download" "$T/t.out" "$T/c2.raw"

# ---- a commit to a name that exists, with If-None-Match: *
session_open m/s.zt
comp_put "$SID" k "$T/c3.raw"
commit_inm() {
    LAST=$T/r
    http "$LAST" -X POST -H 'If-None-Match: *' --data-binary "$2" "$URL/v1/uploads/$1/commit"
}
commit_inm "$SID" '{"objects":{"y":{"shape":[3000],"components":{"data":{"key":"k","dtype":"u8"}}}}}'
check_code "commit with If-None-Match: * over an existing file: 412" 412
check_same "412 commit: the existing file is untouched" "$R/m/s.zt" "$T/committed.zt"
http "$T/s" -X DELETE "$URL/v1/uploads/$SID"
check_staging_empty "412 commit: staging empty" "$R"

# ---- DELETE a session
session_open del.zt
comp_put "$SID" a "$T/c3.raw"
check_eq "open session holds one staging file" "$(staging_count "$R")" 1
req "DELETE session: 204" 204 -X DELETE "$URL/v1/uploads/$SID"
check_staging_empty "DELETE session: staging file gone" "$R"
req "GET deleted session: 404" 404 "$URL/v1/uploads/$SID"
check_errbody "GET deleted session" upload_not_found
req "DELETE deleted session: 404" 404 -X DELETE "$URL/v1/uploads/$SID"
comp_put "$SID" b "$T/c3.raw"
check_code "PUT component into a deleted session: 404" 404
commit "$SID" "{\"objects\":{$Y_OK}}"
check_code "commit of a deleted session: 404" 404
check_eq "deleted session: nothing published" "$(ls "$R/del.zt" 2>/dev/null)" ""
req "GET unknown session: 404" 404 "$URL/v1/uploads/0123456789abcdef"

# ---- clients that go away in the middle of a component
rand "$T/big.raw" $((8 << 20))
session_open cut.zt
S=$URL/v1/uploads/$SID
comp_put "$SID" a "$T/c1.raw"
check_code "cut: first component" 201
req "cut: GET before" 200 "$S"
BYTES=$(jget "$LAST.body" bytes)
# wait_idle: GET the session until it is not busy (409) any more; up to 30 s.
wait_idle() {
    local i
    for i in $(seq 1 600); do
        http "$T/w" "$S"
        [ "$CODE" = 409 ] || break
        sleep 0.05
    done
    cp "$T/w.body" "$T/state.json"
    WCODE=$CODE
}
# 1) reset after 3 MiB of an 8 MiB Content-Length body
$HELP partial "$PORT" PUT "/v1/uploads/$SID/components/b" "$T/big.raw" $((3 << 20)) 0.5 >/dev/null
wait_idle
check_eq "reset mid-component: session still there" "$WCODE" 200
check_eq "reset mid-component: component absent" "$(jget "$T/state.json" components b)" MISSING
check_eq "reset mid-component: writer position back" "$(jget "$T/state.json" bytes)" "$BYTES"
# 2) curl --limit-rate --max-time: the client gives up
curl -s --max-time 1 --limit-rate 1M -o /dev/null -T "$T/big.raw" "$S/components/b" 2>/dev/null
check_eq "curl --max-time mid-component: curl timed out" "$?" 28
wait_idle
check_eq "timeout mid-component: session still there" "$WCODE" 200
check_eq "timeout mid-component: component absent" "$(jget "$T/state.json" components b)" MISSING
check_eq "timeout mid-component: writer position back" "$(jget "$T/state.json" bytes)" "$BYTES"
# 3) a chunked body from a pipe, killed mid-way
mkfifo "$T/fifo"
exec 7<>"$T/fifo" # a writer that never closes: curl's body has no end
bg_start curl -s --max-time 30 -o /dev/null -T - "$S/components/b?encoding=zstd" <"$T/fifo"
timeout 10 head -c $((2 << 20)) "$T/big.raw" >&7
# The client cannot finish (its pipe never closes): poll until the daemon shows the
# session busy (30 s at most) instead of sleeping a fixed time.
for i in $(seq 1 300); do
    http "$T/busy" "$S"
    [ "$CODE" = 409 ] && break
    sleep 0.1
done
req "killed chunked zstd client: the session is busy while it streams (409)" 409 "$S"
bg_kill
exec 7>&-
wait_idle
check_eq "killed chunked zstd client: session still there" "$WCODE" 200
check_eq "killed chunked zstd client: component absent" "$(jget "$T/state.json" components b)" MISSING
check_eq "killed chunked zstd client: writer position back" "$(jget "$T/state.json" bytes)" "$BYTES"
# The session still works: the same key goes in, and the file commits.
comp_put "$SID" b "$T/big.raw"
check_code "after the cuts: same key uploads: 201" 201
check_eq "after the cuts: offset follows the first component" "$(jget "$LAST.body" offset)" $(((BYTES + 63) / 64 * 64))
commit "$SID" '{"objects":{"a":{"shape":[1000],"components":{"data":{"key":"a","dtype":"u8"}}},"b":{"shape":[8388608],"components":{"data":{"key":"b","dtype":"u8"}}}}}'
check_code "after the cuts: commit: 201" 201
check "after the cuts: zt verify" zverify "$R/cut.zt"
zget "$R/cut.zt" b >"$T/b.out" 2>/dev/null
check_same "after the cuts: b bytes exact" "$T/b.out" "$T/big.raw"
zget "$R/cut.zt" a >"$T/a.out" 2>/dev/null
check_same "after the cuts: a bytes exact" "$T/a.out" "$T/c1.raw"
check_staging_empty "after the cuts: staging empty" "$R"
daemon_alive "daemon alive after the session tests"

# ---- idle expiry
start_daemon "$R" "${OPEN[@]}" --session-idle-timeout 3s || finish
session_open idle.zt
IDLE=$SID
comp_put "$IDLE" a "$T/c1.raw"
session_open busy.zt
BUSY=$SID
check_eq "idle: two sessions, two staging files" "$(staging_count "$R")" 2
# Keep BUSY alive with a request every 0.5 s until the daemon's sweep has expired IDLE
# (its staging file gone: polled on disk, since a request would keep IDLE alive; 30 s
# at most, not a fixed 4 s that a late sweep on a busy machine outlasts). BUSY is lost
# only if one ping is 2.5 s late.
for i in $(seq 1 60); do
    sleep 0.5
    http "$T/k" "$URL/v1/uploads/$BUSY"
    [ "$(staging_count "$R")" -le 1 ] && break
done
req "idle session expires: 404" 404 "$URL/v1/uploads/$IDLE"
req "a session used every 0.5 s is kept meanwhile" 200 "$URL/v1/uploads/$BUSY"
check_eq "idle: only the live session's staging file remains" "$(staging_count "$R")" 1
# BUSY, idle too now, expires in turn (its staging file gone: polled, 30 s at most).
for i in $(seq 1 60); do
    sleep 0.5
    [ "$(staging_count "$R")" = 0 ] && break
done
req "the other session, idle too now: 404" 404 "$URL/v1/uploads/$BUSY"
check_staging_empty "idle: staging empty" "$R"
comp_put "$IDLE" b "$T/c1.raw"
check_code "PUT into an expired session: 404" 404
check_eq "idle: nothing published" "$(ls "$R/idle.zt" "$R/busy.zt" 2>/dev/null)" ""

# ---- max_session_components
start_daemon "$R" "${OPEN[@]}" --max-session-components 2 || finish
session_open few.zt
comp_put "$SID" a "$T/c1.raw"
check_code "max_session_components 2: first: 201" 201
comp_put "$SID" b "$T/c3.raw"
check_code "max_session_components 2: second: 201" 201
req "max_session_components: GET before the third" 200 "$URL/v1/uploads/$SID"
BYTES=$(jget "$LAST.body" bytes)
comp_put "$SID" c "$T/c3.raw"
check_code "max_session_components 2: third: 413" 413
check_errbody "max_session_components 2: third" too_many_components
req "max_session_components: session still there" 200 "$URL/v1/uploads/$SID"
check_eq "max_session_components: third absent" "$(jget "$LAST.body" components c)" MISSING
check_eq "max_session_components: bytes unchanged" "$(jget "$LAST.body" bytes)" "$BYTES"
commit "$SID" '{"objects":{"a":{"shape":[1000],"components":{"data":{"key":"a","dtype":"u8"}}},"b":{"shape":[3000],"components":{"data":{"key":"b","dtype":"u8"}}}}}'
check_code "max_session_components: commit of the two: 201" 201
check "max_session_components: zt verify" zverify "$R/few.zt"

# ---- a component larger than the writer's 1 MiB buffer: hashed on the writer's
# background thread, and compared with Content-Digest from there
session_open big.zt
rand "$T/big.raw" $((3 * 1048576 + 5))
comp_put "$SID" big "$T/big.raw" -H "Content-Digest: sha-256=:$(sha256_b64 "$T/c3.raw"):"
check_code "3 MiB component, wrong Content-Digest: 400" 400
check_errbody "3 MiB component, wrong Content-Digest" digest_mismatch
req "3 MiB component: GET after the mismatch" 200 "$URL/v1/uploads/$SID"
check_eq "3 MiB component: absent after the mismatch" "$(jget "$LAST.body" components big)" MISSING
comp_put "$SID" big "$T/big.raw" -H "Content-Digest: sha-256=:$(sha256_b64 "$T/big.raw"):"
check_code "3 MiB component, right Content-Digest: 201" 201
check_eq "3 MiB component: digest" "$(jget "$LAST.body" digest)" "sha256:$(sha256_hex "$T/big.raw")"
commit "$SID" "{\"objects\":{\"big\":{\"shape\":[$((3 * 1048576 + 5))],\"components\":{\"data\":{\"key\":\"big\",\"dtype\":\"u8\"}}}}}"
check_code "3 MiB component: commit: 201" 201
check "3 MiB component: zt verify" zverify "$R/big.zt"
req "3 MiB component: served back" 200 "$URL/v1/files/big.zt/objects/big/data"
check "3 MiB component: bytes served = bytes sent" cmp -s "$LAST.body" "$T/big.raw"

# ---- the same for a zstd component: the body's digest is computed on another thread
session_open bigz.zt
text "$T/bigz.raw" $((3 * 1048576 + 7))
comp_put "$SID" "z?encoding=zstd" "$T/bigz.raw" -H "Content-Digest: sha-256=:$(sha256_b64 "$T/big.raw"):"
check_code "3 MiB zstd component, wrong Content-Digest: 400" 400
check_errbody "3 MiB zstd component, wrong Content-Digest" digest_mismatch
comp_put "$SID" "z?encoding=zstd" "$T/bigz.raw" -H "Content-Digest: sha-256=:$(sha256_b64 "$T/bigz.raw"):"
check_code "3 MiB zstd component, right Content-Digest: 201" 201
commit "$SID" "{\"objects\":{\"z\":{\"shape\":[$((3 * 1048576 + 7))],\"components\":{\"data\":{\"key\":\"z\",\"dtype\":\"u8\"}}}}}"
check_code "3 MiB zstd component: commit: 201" 201
req "3 MiB zstd component: served back decoded" 200 "$URL/v1/files/bigz.zt/objects/z/data"
check "3 MiB zstd component: bytes served = bytes sent" cmp -s "$LAST.body" "$T/bigz.raw"
check_staging_empty "staging empty at the end" "$R"
finish
