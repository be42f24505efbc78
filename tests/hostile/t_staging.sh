#!/bin/bash
# The staging directory cannot be turned against the server (issue 10, points 1 and 2).
#  1. ROOT/.ztensord-staging that is a symlink, a regular file, another user's directory or
#     one writable by group or others: start-up is refused (exit 2, a message naming the
#     path and the problem) and nothing it points to or holds is touched. An instance that
#     cannot write never looks at it.
#  2. Two daemons on one root: the second's start-up leaves the first one's upload session
#     alone (it commits 201 with byte-exact content, also after the second stopped); each
#     stages in its own directory; a daemon that died has its directory removed by the
#     next start-up; "check the preconditions, then rename" (and DELETE) waits for the
#     lock between instances, at most 5 s (then 503 publish_busy).
#  Also: files of the older one-directory layout go only once idle for a session.
#  3. A staging file that something removed answers 500 staging_lost, never a 4xx: at a
#     session's commit, at a component PUT, and at the end of a whole-file PUT.
. "$(dirname "$0")/lib.sh" "$@"

# snap DIR: every file under DIR with its SHA-256, sorted.
snap() { (cd "$1" && find . -type f -exec sha256sum {} + | sort); }
check_contains() {
    if printf '%s' "$2" | grep -qF -- "$3"; then ok "$1"; else bad "$1" "'$3' not in: $(printf '%s' "$2" | head -c 400)"; fi
}
# start_refused NAME ROOT WHY [FLAGS...]: ztensord must exit with status 2 without ever
# listening, and say WHY about ROOT's staging directory on stderr.
start_refused() {
    local name=$1 root=$2 why=$3
    shift 3
    local err=$T/refused.$D_N.$RANDOM.err
    "$ZTENSORD" --root "$root" --listen 127.0.0.1:0 --access-log off "$@" 2>"$err" &
    local pid=$!
    if ! wait_exit "$pid" 30; then
        bad "$name: start-up refused" "still running after 30 s: $(head -c 300 "$err")"
        return
    fi
    check_eq "$name: exit status 2" "$EXIT_RC" 2
    check_contains "$name: the message says why" "$(cat "$err")" "$why"
    check_contains "$name: the message names the path" "$(cat "$err")" "$root/$STAGING"
    check_nomatch "$name: never listened" "$(cat "$err")" 'listening on'
    check_sanitizers "$name: no sanitizer report" "$err"
}
ms() { date +%s%3N; }
# hold_lock ROOT SECONDS: hold the lock between instances (a flock on ROOT's staging
# directory) from a background process for SECONDS; returns once it is held.
hold_lock() {
    flock -x "$1/$STAGING" sleep "$2" &
    LOCKER=$!
    local i
    for i in $(seq 1 100); do
        flock -n -x "$1/$STAGING" true || return 0
        sleep 0.02
    done
    bad "hold_lock" "the lock was never taken"
}

if ! command -v flock >/dev/null; then
    bad "flock(1) is needed (Debian package util-linux)"
    finish
fi

rand "$T/c1.raw" 100000
rand "$T/c2.raw" 5000
rand "$T/w.raw" 3000
pack "$T/f.zt" w=u8:3000:"$T/w.raw"
pack "$T/big.zt" w=u8:$((3 << 20)):<(head -c $((3 << 20)) /dev/urandom)
OBJS='{"objects":{"x":{"shape":[100000],"components":{"data":{"key":"k1","dtype":"u8"}}},"y":{"shape":[5000],"components":{"data":{"key":"k2","dtype":"u8"}}}}}'

# ---- 1. a staging directory that is not a real directory of this user's
V=$T/victim
mkdir -p "$V/sub"
rand "$V/a.bin" 1000
echo keep >"$V/b.txt"
echo deep >"$V/sub/c"
VS=$(snap "$V")

R1=$T/r-symlink
mkdir -p "$R1"
ln -s "$V" "$R1/$STAGING"
start_refused "symlinked staging" "$R1" "is a symbolic link" "${OPEN[@]}"
check_eq "symlinked staging: the link's target untouched" "$(snap "$V")" "$VS"
check_eq "symlinked staging: still the same link" "$(readlink "$R1/$STAGING")" "$V"
# A read-only replica (no way to write) never looks at the staging directory.
start_daemon "$R1" && {
    put ro.zt "$T/f.zt"
    check_code "read-only instance: PUT refused (403)" 403
    stop_daemon
}
check_eq "read-only instance: the link's target untouched" "$(snap "$V")" "$VS"

R2=$T/r-file
mkdir -p "$R2"
echo "not a directory" >"$R2/$STAGING"
start_refused "staging is a regular file" "$R2" "is not a directory" "${OPEN[@]}"
check_eq "staging is a regular file: unchanged" "$(cat "$R2/$STAGING")" "not a directory"

R3=$T/r-mode
mkdir -p "$R3/$STAGING"
chmod 0777 "$R3/$STAGING"
echo keep >"$R3/$STAGING/old"
touch -d '2 days ago' "$R3/$STAGING/old"
start_refused "staging writable by others" "$R3" "is writable by group or others (mode 0777)" "${OPEN[@]}"
check_eq "staging writable by others: its file untouched" "$(cat "$R3/$STAGING/old")" keep

if [ "$(id -u)" = 0 ]; then
    R4=$T/r-owner
    mkdir -p "$R4/$STAGING"
    echo keep >"$R4/$STAGING/old"
    touch -d '2 days ago' "$R4/$STAGING/old"
    chown -R 65534:65534 "$R4/$STAGING"
    start_refused "staging owned by another user" "$R4" "is owned by uid 65534" "${OPEN[@]}"
    check_eq "staging owned by another user: its file untouched" "$(cat "$R4/$STAGING/old")" keep
else
    skip "staging owned by another user" "needs root to chown"
fi

# ---- 2. two daemons on one root
R=$T/shared
mkdir -p "$R"
start_daemon "$R" "${OPEN[@]}" || finish
A_PID=$D_PID A_ERR=$D_ERR A_URL=$URL
session_open two/s.zt
check_code "A: session opened" 201
A_SID=$SID
comp_put "$A_SID" k1 "$T/c1.raw"
check_code "A: first component 201" 201

D_PID= # A keeps running while B starts
start_daemon "$R" "${OPEN[@]}" || finish
B_PID=$D_PID B_ERR=$D_ERR B_URL=$URL
check_eq "B's start-up left A's staging file" "$(staging_count "$R")" 1
check_contains "B knows A is running" "$(cat "$B_ERR")" "other instances running on this root: 1"
check_eq "each instance has its own directory" "$(find "$R/$STAGING" -mindepth 1 -maxdepth 1 -type d -name 'run-*' | wc -l)" 2

URL=$A_URL
comp_put "$A_SID" k2 "$T/c2.raw"
check_code "A: second component after B started: 201" 201
commit "$A_SID" "$OBJS"
check_code "A: commit after B started: 201" 201
req "A: x/data" 200 "$URL/v1/files/two/s.zt/objects/x/data"
check_same "A: x/data byte-exact" "$LAST.body" "$T/c1.raw"
req "A: y/data" 200 "$URL/v1/files/two/s.zt/objects/y/data"
check_same "A: y/data byte-exact" "$LAST.body" "$T/c2.raw"
kill -HUP "$B_PID"
URL=$B_URL
for i in $(seq 1 50); do
    [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$URL/v1/files/two/s.zt")" = 200 ] && break
    sleep 0.1
done
req "B serves what A published" 200 "$URL/v1/files/two/s.zt/objects/x/data"
check_same "B: x/data byte-exact" "$LAST.body" "$T/c1.raw"
check_staging_empty "after the commit: staging empty" "$R"

# Publication waits for the lock between instances (held here by flock(1) for 2 s) ...
hold_lock "$R" 2
t0=$(ms)
code=$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$URL/v1/files")
check_eq "lock held: reads are not blocked" "$code" 200
put locked.zt "$T/f.zt"
t1=$(ms)
check_code "lock held: PUT published once the lock is free: 201" 201
check "lock held: PUT waited for the lock ($((t1 - t0)) ms >= 1500)" [ $((t1 - t0)) -ge 1500 ]
wait "$LOCKER"
hold_lock "$R" 2
t0=$(ms)
req "lock held: DELETE done once the lock is free: 204" 204 -X DELETE "$URL/v1/files/locked.zt"
t1=$(ms)
check "lock held: DELETE waited for the lock ($((t1 - t0)) ms >= 1500)" [ $((t1 - t0)) -ge 1500 ]
wait "$LOCKER"
# ... at most 5 s.
hold_lock "$R" 8
t0=$(ms)
put busy.zt "$T/f.zt"
t1=$(ms)
check_code "lock held too long: 503" 503
check_errbody "lock held too long" publish_busy
check_eq "lock held too long: Retry-After" "$(hdr "$LAST.hdr" Retry-After)" 1
check "lock held too long: answered after about 5 s ($((t1 - t0)) ms)" [ $((t1 - t0)) -ge 4500 -a $((t1 - t0)) -lt 8000 ]
check_eq "lock held too long: nothing published" "$(ls "$R/busy.zt" 2>/dev/null)" ""
check_staging_empty "lock held too long: staging empty" "$R"
kill "$LOCKER" 2>/dev/null
wait "$LOCKER" 2>/dev/null

# A session open on A survives B's stop; B's directory goes with it.
URL=$A_URL
session_open three/s.zt
check_code "A: another session" 201
A_SID=$SID
comp_put "$A_SID" k1 "$T/c1.raw"
check_code "A: its component" 201
stop_daemon # B
check_eq "B stopped: A's staging file still there" "$(staging_count "$R")" 1
check_eq "B stopped: its directory is gone" "$(find "$R/$STAGING" -mindepth 1 -maxdepth 1 -type d | wc -l)" 1
comp_put "$A_SID" k2 "$T/c2.raw"
check_code "A: component after B stopped: 201" 201
commit "$A_SID" "$OBJS"
check_code "A: commit after B stopped: 201" 201
req "A: three/s.zt x/data" 200 "$URL/v1/files/three/s.zt/objects/x/data"
check_same "A: three/s.zt x/data byte-exact" "$LAST.body" "$T/c1.raw"
session_open four/s.zt
check_code "A: a session left open" 201
comp_put "$SID" k1 "$T/c1.raw"
check_code "A: its component" 201

# A dies; the next start-up removes what it left.
D_PID=$A_PID D_ERR=$A_ERR
kill_daemon
start_daemon "$R" "${OPEN[@]}" || finish
check_staging_empty "after A died: the next start-up emptied its directory" "$R"
check_eq "after A died: only the new instance's directory" "$(find "$R/$STAGING" -mindepth 1 -maxdepth 1 -type d | wc -l)" 1
check_contains "after A died: the start-up says so" "$(cat "$D_ERR")" "removed 1 files"

# ---- 3. a staging file removed under an upload: 500 staging_lost
session_open lost/s.zt
check_code "lost: session opened" 201
comp_put "$SID" k1 "$T/c1.raw"
check_code "lost: component" 201
comp_put "$SID" k2 "$T/c2.raw"
check_code "lost: component 2" 201
rm -f "$R/$STAGING/$(staging_files "$R" | head -1)"
commit "$SID" "$OBJS"
check_code "staging file removed before the commit: 500" 500
check_errbody "staging file removed before the commit" staging_lost
check_contains "staging_lost: the message says the server lost the bytes" "$ERRMSG" "the server lost"
check_eq "staging_lost: nothing published" "$(ls "$R/lost" 2>/dev/null)" ""
req "staging_lost: the session is over (404)" 404 "$URL/v1/uploads/$SID"

session_open lost2/s.zt
check_code "lost2: session opened" 201
rm -f "$R/$STAGING/$(staging_files "$R" | head -1)"
comp_put "$SID" k1 "$T/c1.raw"
check_code "staging file removed before a component: 500" 500
check_errbody "staging file removed before a component" staging_lost
req "lost2: the session is over (404)" 404 "$URL/v1/uploads/$SID"

curl -s --max-time 30 --limit-rate 1M -o "$T/big.body" -w '%{http_code}' -T "$T/big.zt" "$URL/v1/files/big.zt" >"$T/big.code" 2>/dev/null &
BIG=$!
for i in $(seq 1 100); do [ "$(staging_count "$R")" -gt 0 ] && break; sleep 0.02; done
rm -f "$R/$STAGING/$(staging_files "$R" | head -1)"
wait_exit "$BIG" 40
CODE=$(cat "$T/big.code")
LAST=$T/big
check_code "staging file removed during a whole-file PUT: 500" 500
check_errbody "staging file removed during a whole-file PUT" staging_lost
check_eq "whole-file PUT: nothing published" "$(ls "$R/big.zt" 2>/dev/null)" ""
check_staging_empty "at the end: staging empty" "$R"
daemon_alive "daemon alive at the end"

# ---- files of the older one-directory layout: removed only once idle for a session
R5=$T/r-legacy
mkdir -p "$R5/$STAGING"
chmod 0700 "$R5/$STAGING"
echo old >"$R5/$STAGING/put-OLD123"
touch -d '2 hours ago' "$R5/$STAGING/put-OLD123"
echo new >"$R5/$STAGING/session-NEW123"
start_daemon "$R5" "${OPEN[@]}" --session-idle-timeout 1h || finish
check_eq "older layout: a file idle for 2 h is removed" "$(ls "$R5/$STAGING/put-OLD123" 2>/dev/null)" ""
check_eq "older layout: a fresh file (an older ztensord may be writing it) is kept" "$(cat "$R5/$STAGING/session-NEW123" 2>/dev/null)" new

finish
