#!/bin/bash
# Limits: max_upload_size (413, with Content-Length and chunked, PUT and session
# component), max_uploads (503 + JSON error, slots given back), disk_reserve on a 16 MiB
# tmpfs (507, nothing published, staging empty, still serving), and the disk filling up
# during a body (reserve 0: 507, nothing published, the old version still served).
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/small.raw" 4000
pack "$T/small.zt" w=u8:4000:"$T/small.raw"
rand "$T/two.raw" $((2 << 20))
pack "$T/two.zt" w=u8:$((2 << 20)):"$T/two.raw"
rand "$T/nine.raw" $((900 << 10))
pack "$T/nine.zt" w=u8:$((900 << 10)):"$T/nine.raw"

# ---- max_upload_size
start_daemon "$R" "${OPEN[@]}" --max-upload-size 1M || finish
put big.zt "$T/two.zt"
check_code "max_upload_size 1M, 2 MiB PUT with Content-Length: 413" 413
check_errbody "2 MiB PUT with Content-Length" too_large
put big.zt "$T/two.zt" -H 'Transfer-Encoding: chunked'
check_code "max_upload_size 1M, 2 MiB chunked PUT: 413" 413
check_errbody "2 MiB chunked PUT" too_large
check_eq "413s published nothing" "$(ls "$R/big.zt" 2>/dev/null)" ""
check_eq "413s: not listed" "$(listing_field big.zt etag)" MISSING
check_staging_empty "413s: staging empty" "$R"
put nine.zt "$T/nine.zt"
check_code "a 900 KiB PUT under the limit: 201" 201
session_open big2.zt
comp_put "$SID" small "$T/small.raw"
check_code "session under the limit: 201" 201
req "session: GET before the big component" 200 "$URL/v1/uploads/$SID"
BYTES=$(jget "$LAST.body" bytes)
comp_put "$SID" big "$T/two.raw"
check_code "session: 2 MiB component: 413" 413
check_errbody "session: 2 MiB component" too_large
comp_put "$SID" big2 "$T/two.raw" -H 'Transfer-Encoding: chunked'
check_code "session: 2 MiB chunked component: 413" 413
req "session: GET after the 413s" 200 "$URL/v1/uploads/$SID"
check_eq "session: the 413 component is absent" "$(jget "$LAST.body" components big)" MISSING
check_eq "session: bytes back where they were" "$(jget "$LAST.body" bytes)" "$BYTES"
commit "$SID" '{"objects":{"w":{"shape":[4000],"components":{"data":{"key":"small","dtype":"u8"}}}}}'
check_code "session: commit after the 413s: 201" 201
check_staging_empty "staging empty after the max_upload_size checks" "$R"
daemon_alive "daemon alive after the 413s"

# ---- max_uploads
start_daemon "$R" "${OPEN[@]}" --max-uploads 1 || finish
session_open one.zt
check_code "max_uploads 1: first session: 201" 201
S1=$SID
session_open two.zt
check_match "max_uploads 1: second session: 503 or 429" "$CODE" '^(503|429)$'
check_errbody "max_uploads 1: second session" too_many_uploads
check_match "max_uploads 1: Retry-After" "$(hdr "$LAST.hdr" Retry-After)" '^[0-9]+$'
put x.zt "$T/small.zt"
check_match "max_uploads 1: a PUT while the session is open: 503 or 429" "$CODE" '^(503|429)$'
check_eq "max_uploads 1: the refused PUT published nothing" "$(ls "$R/x.zt" 2>/dev/null)" ""
req "max_uploads 1: DELETE the session" 204 -X DELETE "$URL/v1/uploads/$S1"
session_open two.zt
check_code "max_uploads 1: a new session after the DELETE: 201" 201
commit "$SID" '{"objects":{}}'
check_match "max_uploads 1: commit of an empty session" "$CODE" '^(201|422)$'
[ "$CODE" = 201 ] || http "$T/s" -X DELETE "$URL/v1/uploads/$SID"
# A whole-file PUT in progress holds the slot, and gives it back when the client leaves.
# The client sends part of its body and waits (60 s at most) until it is killed; the
# POST goes once the daemon has the PUT in flight (polled), not after a fixed sleep.
$HELP partial "$PORT" PUT /v1/files/slow.zt "$T/nine.zt" 1000 60 >/dev/null &
PP=$!
for i in $(seq 1 200); do
    [ "$(curl -s --max-time 10 "$URL/metrics" | sed -n 's/^ztensord_requests_in_flight //p')" -ge 2 ] 2>/dev/null && break
    sleep 0.05
done
session_open three.zt
check_match "max_uploads 1: POST while a PUT is running: 503 or 429" "$CODE" '^(503|429)$'
kill "$PP"
wait "$PP"
for i in $(seq 1 600); do
    session_open three.zt
    [ "$CODE" = 201 ] && break
    sleep 0.05
done
check_code "max_uploads 1: the slot came back after the client left" 201
http "$T/s" -X DELETE "$URL/v1/uploads/$SID"
# Refused and failed uploads give their slot back too.
rand "$T/junk.bin" 3000
for i in 1 2 3; do put bad$i.zt "$T/junk.bin"; done
check_code "max_uploads 1: invalid uploads: 422" 422
put ok.zt "$T/small.zt"
check_code "max_uploads 1: a PUT after failed ones: 201" 201
check_staging_empty "max_uploads: staging empty" "$R"
stop_daemon

# ---- the disk: a 16 MiB tmpfs
FS=$T/fs
mkdir -p "$FS"
if mount -t tmpfs -o size=16m tmpfs "$FS" 2>"$T/mount.err"; then
    at_exit "umount -l '$FS' 2>/dev/null"
    R2=$FS/root
    mkdir -p "$R2"
    rand "$T/old.raw" $((64 << 10))
    pack "$R2/old.zt" w=u8:$((64 << 10)):"$T/old.raw"
    cp "$R2/old.zt" "$T/old.zt"
    rand "$T/f14.raw" $((14 << 20))
    pack "$T/f14.zt" w=u8:$((14 << 20)):"$T/f14.raw"
    rand "$T/f20.raw" $((20 << 20))
    pack "$T/f20.zt" w=u8:$((20 << 20)):"$T/f20.raw"
    # restore_old: put old.zt back (atomically: the daemon may hold the file open) and
    # wait until the catalog has it again.
    restore_old() {
        cp "$T/old.zt" "$R2/.old.tmp" && mv "$R2/.old.tmp" "$R2/old.zt"
        kill -HUP "$D_PID"
        local i
        for i in $(seq 1 600); do
            [ "$(listing_field old.zt size)" = "$(stat -c %s "$T/old.zt")" ] && break
            sleep 0.05
        done
    }
    # still_serving LABEL: old.zt is served byte-exact and nothing else appeared.
    still_serving() {
        req "$1: old.zt still served" 200 "$URL/v1/files/old.zt/raw"
        check_same "$1: old.zt bytes" "$LAST.body" "$T/old.zt"
        check_eq "$1: nothing published" "$(published_files "$R2" | tr '\n' ' ')" "old.zt "
        check_staging_empty "$1: staging empty" "$R2"
        # Space held by a removed file comes back once the catalog lets go of it.
        local i
        for i in $(seq 1 600); do
            [ "$(df --output=avail -k "$FS" | tail -1)" -gt 15000 ] && break
            sleep 0.05
        done
        check "$1: free space is back" [ "$(df --output=avail -k "$FS" | tail -1)" -gt 15000 ]
    }

    start_daemon "$R2" --allow-anonymous-writes --disk-reserve 4M || finish
    put new.zt "$T/f14.zt"
    check_code "disk_reserve 4M, 14 MiB PUT with Content-Length: 507" 507
    check_errbody "disk_reserve 4M, 14 MiB PUT" insufficient_storage
    still_serving "disk_reserve, Content-Length"
    put new.zt "$T/f14.zt" -H 'Transfer-Encoding: chunked'
    check_code "disk_reserve 4M, 14 MiB chunked PUT: 507" 507
    rm -f "$R2/new.zt" # so that a failure here does not spoil what follows
    still_serving "disk_reserve, chunked"
    put old.zt "$T/f14.zt" -H 'Transfer-Encoding: chunked'
    check_code "disk_reserve 4M, 14 MiB chunked PUT over old.zt: 507" 507
    [ "$CODE" = 507 ] || restore_old
    still_serving "disk_reserve, chunked replace"
    session_open new.zt
    comp_put "$SID" big "$T/f14.raw"
    check_code "disk_reserve 4M, 14 MiB session component with Content-Length: 507" 507
    comp_put "$SID" big2 "$T/f14.raw" -H 'Transfer-Encoding: chunked'
    check_code "disk_reserve 4M, 14 MiB chunked session component: 507" 507
    req "disk_reserve, session: still there" 200 "$URL/v1/uploads/$SID"
    check_eq "disk_reserve, session: component absent" "$(jget "$LAST.body" components big)" MISSING
    check_eq "disk_reserve, session: chunked component absent" "$(jget "$LAST.body" components big2)" MISSING
    req "disk_reserve, session: DELETE" 204 -X DELETE "$URL/v1/uploads/$SID"
    still_serving "disk_reserve, session"
    put small.zt "$T/small.zt"
    check_code "disk_reserve 4M: a small PUT still works: 201" 201
    rm -f "$R2/small.zt"
    daemon_alive "disk_reserve: daemon alive"
    stop_daemon

    start_daemon "$R2" --allow-anonymous-writes --disk-reserve 0 || finish
    put old.zt "$T/f20.zt"
    check_code "reserve 0, 20 MiB PUT with Content-Length over old.zt: 507" 507
    still_serving "disk full, Content-Length"
    put old.zt "$T/f20.zt" -H 'Transfer-Encoding: chunked'
    check_code "reserve 0, disk full during a chunked body over old.zt: 507" 507
    check_errbody "disk full during a chunked body" insufficient_storage
    still_serving "disk full, chunked"
    put new.zt "$T/f20.zt" -H 'Transfer-Encoding: chunked'
    check_code "reserve 0, disk full during a chunked body, new name: 507" 507
    still_serving "disk full, chunked, new name"
    session_open new.zt
    comp_put "$SID" small "$T/small.raw"
    req "disk full, session: GET before" 200 "$URL/v1/uploads/$SID"
    BYTES=$(jget "$LAST.body" bytes)
    comp_put "$SID" big "$T/f20.raw"
    check_code "reserve 0, 20 MiB session component with Content-Length: 507" 507
    comp_put "$SID" big "$T/f20.raw" -H 'Transfer-Encoding: chunked'
    check_code "reserve 0, disk full during a chunked session component: 507" 507
    req "disk full, session: still there" 200 "$URL/v1/uploads/$SID"
    check_eq "disk full, session: component absent" "$(jget "$LAST.body" components big)" MISSING
    check_eq "disk full, session: bytes back where they were" "$(jget "$LAST.body" bytes)" "$BYTES"
    commit "$SID" '{"objects":{"w":{"shape":[4000],"components":{"data":{"key":"small","dtype":"u8"}}}}}'
    check_code "disk full, session: commit of what fits: 201" 201
    check "disk full, session: committed file verifies" zverify "$R2/new.zt"
    rm -f "$R2/new.zt"
    still_serving "disk full, after the session"
    daemon_alive "disk full: daemon alive"
    stop_daemon
else
    skip "disk_reserve and disk-full checks" "cannot mount a tmpfs: $(head -c 200 "$T/mount.err")"
fi
finish
