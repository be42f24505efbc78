#!/bin/bash
# Publication: what a session's answers look like with a long name, what a commit
# refused under the publication lock leaves of its session, that a publication
# replaces its file's catalog entry without rescanning the root, and that a
# publication waiting for its lock leaves the worker thread free for other
# connections (the daemon has one: --threads 1).
. "$(dirname "$0")/lib.sh" "$@"

need_tool flock util-linux
R=$T/root
mkdir -p "$R"
start_daemon "$R" "${OPEN[@]}" --no-watch --threads 1 || finish
rand "$T/c1.raw" 1000
pack "$T/other.zt" "w=u8:1000:$T/c1.raw" || finish
OBJ='{"objects":{"w":{"shape":[1000],"components":{"data":{"key":"k1","dtype":"u8"}}}}}'

# ---- a long file name: the new session's JSON is whole (it was cut at 256 bytes)
LONG=$(printf 'd%.0s' $(seq 150))/$(printf 'f%.0s' $(seq 140)).zt
session_open "$LONG"
check_code "POST /v1/uploads, ${#LONG}-byte name: 201" 201
check_eq "its body is JSON with the whole name" "$(jget "$LAST.body" file)" "$LONG"
check_eq "its body names the session" "$(jget "$LAST.body" url)" "/v1/uploads/$SID"
req "DELETE that session: 204" 204 -X DELETE "$URL/v1/uploads/$SID"

# ---- a precondition that fails under the publication lock keeps the session
# The lock between instances is held (flock(1) on the staging directory, as another
# ztensord would) while the commit's early check passes; the file then appears, and
# the check under the lock, once it is free, refuses.
# hold_publish_lock ROOT: sets LOCKER; returns once the lock is held, which it is until
# release_publish_lock (60 s at most), not for a fixed time a busy machine can outlast.
# (The daemon waits 5 s at most for the lock: the steps between must be short ones.)
hold_publish_lock() {
    rm -f "$T/lock.gate"
    flock -x "$1/$STAGING" timeout 60 sh -c 'while [ ! -e "$1" ]; do sleep 0.02; done' sh "$T/lock.gate" &
    LOCKER=$!
    local i
    for i in $(seq 1 500); do flock -n -x "$1/$STAGING" true || return 0; sleep 0.02; done
    bad "the staging directory's lock is taken" "flock never held it"
}
release_publish_lock() { touch "$T/lock.gate"; wait "$LOCKER"; }
# wait_in_flight: until the daemon has a request in flight besides the scrape (the one
# sent in the background; 10 s at most).
wait_in_flight() {
    local i
    for i in $(seq 1 200); do
        [ "$(curl -s --max-time 10 "$URL/metrics" | sed -n 's/^ztensord_requests_in_flight //p')" -ge 2 ] 2>/dev/null && return 0
        sleep 0.05
    done
    bad "a request in flight" "ztensord_requests_in_flight never reached 2"
}
session_open late/s.zt
check_code "session for late/s.zt: 201" 201
comp_put "$SID" k1 "$T/c1.raw"
check_code "its component: 201" 201
hold_publish_lock "$R"
http "$T/late" -X POST -H 'If-None-Match: *' --data-binary "$OBJ" "$URL/v1/uploads/$SID/commit" &
CPID=$!
wait_in_flight
mkdir -p "$R/late"
cp "$T/other.zt" "$R/late/s.zt"
check "the commit waits for the lock" kill -0 "$CPID"
release_publish_lock
wait "$CPID"
check_match "commit with If-None-Match: *, the file appeared meanwhile: 412" \
    "$(head -1 "$T/late.hdr")" '^HTTP/1.1 412 '
check_eq "its code" "$(jget "$T/late.body" error code)" precondition_failed
req "the session is still there: 200" 200 "$URL/v1/uploads/$SID"
check_eq "with its component" "$(jget "$LAST.body" components k1 length)" 1000
commit "$SID" "$OBJ"
check_code "commit again, without the precondition: 200 (it replaced the file)" 200
req "the session's file is served" 200 "$URL/v1/files/late/s.zt/objects/w/data"
check_same "byte-exact" "$LAST.body" "$T/c1.raw"
check_staging_empty "staging empty" "$R"

# ---- a publication waiting for the lock does not hold up the worker
for what in PUT commit DELETE; do
    case $what in
    commit)
        session_open wait/s.zt
        comp_put "$SID" k1 "$T/c1.raw"
        ;;
    DELETE)
        cp "$T/other.zt" "$R/wait/gone.zt" && kill -HUP "$D_PID"
        for _ in $(seq 1 200); do # until the rescan serves it (10 s at most)
            [ "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$URL/v1/files/wait/gone.zt")" = 200 ] && break
            sleep 0.05
        done
        ;;
    esac
    hold_publish_lock "$R"
    case $what in
    PUT) http "$T/w" -T "$T/other.zt" "$URL/v1/files/wait/p.zt" & ;;
    commit) http "$T/w" --data-binary "$OBJ" "$URL/v1/uploads/$SID/commit" & ;;
    DELETE) http "$T/w" -X DELETE "$URL/v1/files/wait/gone.zt" & ;;
    esac
    WPID=$!
    wait_in_flight
    # Answered while the publication still waits (the lock is held until released
    # below): a worker held up by it would answer only after it, or after its 5 s.
    code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$URL/healthz")
    check_eq "$what waiting for the lock: /healthz answered" "$code" 200
    code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$URL/v1/files/late/s.zt/objects/w/data")
    check_eq "$what waiting for the lock: a read answered" "$code" 200
    check "$what still waiting meanwhile" kill -0 "$WPID"
    release_publish_lock
    wait "$WPID"
    check_match "$what once the lock is free: done" "$(grep '^HTTP/' "$T/w.hdr" | tail -1)" '^HTTP/1.1 (200|201|204) '
done
req "wait/p.zt published" 200 "$URL/v1/files/wait/p.zt"
req "wait/s.zt published" 200 "$URL/v1/files/wait/s.zt/objects/w/data"
req "wait/gone.zt deleted" 404 "$URL/v1/files/wait/gone.zt"

# ---- one catalog entry per publication, no rescan
reloads() { curl -s "$URL/metrics" | sed -n 's/^ztensord_catalog_reloads_total //p'; }
R0=$(reloads)
cp "$T/other.zt" "$R/by-hand.zt" # not through the API, and no inotify (--no-watch)
put new.zt "$T/other.zt"
check_code "PUT new.zt: 201" 201
req "new.zt is served at once" 200 "$URL/v1/files/new.zt"
check_eq "by-hand.zt is not: the PUT did not rescan the root" "$(listing_field by-hand.zt name)" MISSING
check_eq "no reload counted" "$(reloads)" "$R0"
put new.zt "$T/other.zt"
check_code "PUT over new.zt: 200" 200
check_eq "listed once" "$(curl -s "$URL/v1/files" | grep -o '"name":"new.zt"' | wc -l)" 1
req "DELETE new.zt: 204" 204 -X DELETE "$URL/v1/files/new.zt"
req "new.zt is gone at once" 404 "$URL/v1/files/new.zt"
check_eq "late/s.zt still listed" "$(listing_field late/s.zt name)" late/s.zt
check_eq "still no reload" "$(reloads)" "$R0"
kill -HUP "$D_PID"
for _ in $(seq 1 200); do [ "$(reloads)" != "$R0" ] && break; sleep 0.05; done
check_eq "after SIGHUP by-hand.zt is served" "$(listing_field by-hand.zt name)" by-hand.zt

# ---- SIGTERM while a publication waits for its lock: the publication is finished
# (and answered) before the daemon stops, which exits 0 (libmicrohttpd must never be
# stopped with the upload's connection still suspended)
start_daemon "$R" "${OPEN[@]}" --no-watch --shutdown-grace 300ms || finish
hold_publish_lock "$R"
http "$T/s" -T "$T/other.zt" "$URL/v1/files/stop.zt" &
SPID=$!
wait_in_flight
# SIGTERM while the lock is held; released once the daemon says it is shutting down.
DPID=$D_PID
D_PID=
kill -TERM "$DPID"
for _ in $(seq 1 200); do grep -q 'shutting down' "$D_ERR" && break; sleep 0.05; done
check_match "SIGTERM: the daemon shuts down" "$(grep -c 'shutting down' "$D_ERR")" '^[1-9]'
check "the publication still waits for the lock meanwhile" kill -0 "$SPID"
release_publish_lock
if wait_exit "$DPID" 15; then check_eq "daemon $D_N exit status" "$EXIT_RC" 0; else bad "daemon $D_N exits after SIGTERM" "still running after 15s"; fi
check_sanitizers "daemon $D_N: no sanitizer report" "$D_ERR"
wait "$SPID"
check "published before the daemon stopped" [ -f "$R/stop.zt" ]
check_match "and answered" "$(grep '^HTTP/' "$T/s.hdr" | tail -1)" '^HTTP/1.1 201 '
check_staging_empty "staging empty" "$R"
finish
