#!/bin/bash
# SIGKILL with many uploads in flight. tests/uploads/t_crash.sh kills the daemon during
# one upload at a time (20 rounds); here every round has five writes running together when
# the SIGKILL lands, at a random moment: a PUT of a new name, a PUT replacing a file, a
# session committing a new name, a session replacing a file (each with a raw and a zstd
# component), and a session left half-way through a component. After the kill, on disk:
# each name holds its old version or its complete new one (zt verify, bytes compared),
# nothing else appeared in the root. After the restart: the staging directory is empty,
# the sessions are gone (404), every file is served byte-exact.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R/d" "$T/old"
rand "$T/keep.raw" 70000
pack "$R/keep.zt" w=u8:70000:"$T/keep.raw"
rand "$T/o1.raw" 50000
pack "$T/old/p_rep.zt" w=u8:50000:"$T/o1.raw"
rand "$T/o2.raw" 60000
pack "$T/old/s_rep.zt" a=u8:60000:"$T/o2.raw"
cp "$R/keep.zt" "$T/keep.zt"
rand "$T/pa.raw" $((6 << 20))
pack "$T/pa.zt" w=u8:$((6 << 20)):"$T/pa.raw"
rand "$T/pb.raw" $((5 << 20))
pack "$T/pb.zt" --compress w=u8:$((5 << 20)):"$T/pb.raw"
rand "$T/sa.raw" $((2 << 20))
text "$T/sb.raw" $((3 << 20))
COMMIT='{"objects":{"a":{"shape":[2097152],"components":{"data":{"key":"a","dtype":"u8"}}},"b":{"shape":[3145728],"components":{"data":{"key":"b","dtype":"u8"}}}}}'

# new_sid NAME: open a session for NAME, print its id and note it in $T/sids.
new_sid() {
    local sid
    sid=$(curl -s --max-time 20 -X POST --data-binary "{\"file\":\"$1\"}" "$URL/v1/uploads" |
        sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
    [ -n "$sid" ] && echo "$sid" >>"$T/sids" && echo "$sid"
}
# session_job NAME: open a session, upload a raw and a zstd component (rate-limited), commit.
session_job() {
    local sid
    sid=$(new_sid "$1") || return
    curl -s --max-time 20 --limit-rate 4M -o /dev/null -T "$T/sa.raw" "$URL/v1/uploads/$sid/components/a" &&
        curl -s --max-time 20 --limit-rate 4M -o /dev/null -T "$T/sb.raw" "$URL/v1/uploads/$sid/components/b?encoding=zstd" &&
        curl -s --max-time 20 -o /dev/null -X POST --data-binary "$COMMIT" "$URL/v1/uploads/$sid/commit"
}
# half_component: a session whose component never finishes (the client keeps it open).
half_component() {
    local sid
    sid=$(new_sid d/half.zt) || return
    $HELP partial "$PORT" PUT "/v1/uploads/$sid/components/a" "$T/sa.raw" $((1 << 20)) 5 >/dev/null
}
is_session_file() {
    zverify "$1" && cmp -s <(zget "$1" a) "$T/sa.raw" && cmp -s <(zget "$1" b) "$T/sb.raw"
}
# old_or_new LABEL NAME OLD NEW: ROOT/NAME is OLD ("-": absent) or NEW ("session": a
# complete commit of session_job; else a file to compare with).
old_or_new() {
    local f=$R/$2
    if [ ! -e "$f" ]; then
        if [ "$3" = - ]; then ok "$1: $2 absent (old state)"; else bad "$1: $2" "missing"; fi
    elif [ "$3" != - ] && cmp -s "$f" "$3"; then
        ok "$1: $2 is the old version"
    elif [ "$4" = session ] && is_session_file "$f"; then
        NEW=$((NEW + 1))
        ok "$1: $2 is the complete new version"
    elif [ "$4" != session ] && cmp -s "$f" "$4"; then
        NEW=$((NEW + 1))
        ok "$1: $2 is the complete new version"
    else
        bad "$1: $2" "neither the old nor a complete new version ($(stat -c %s "$f") bytes)"
    fi
}

NEW=0
HIT=0
for round in 1 2 3 4 5 6; do
    # Back to the old state, with the daemon stopped.
    rm -f "$R/p_new.zt" "$R/d/s_new.zt" "$R/d/half.zt" "$T/sids"
    cp "$T/old/p_rep.zt" "$R/p_rep.zt"
    cp "$T/old/s_rep.zt" "$R/d/s_rep.zt"
    start_daemon "$R" "${OPEN[@]}" || finish
    delay=$((100 + RANDOM % 1500))
    note "round $round: SIGKILL after $delay ms"
    jobs_=()
    curl -s --max-time 20 --limit-rate 4M -o /dev/null -T "$T/pa.zt" "$URL/v1/files/p_new.zt" 2>/dev/null &
    jobs_+=($!)
    curl -s --max-time 20 --limit-rate 4M -o /dev/null -T "$T/pb.zt" "$URL/v1/files/p_rep.zt" 2>/dev/null &
    jobs_+=($!)
    session_job d/s_new.zt 2>/dev/null &
    jobs_+=($!)
    session_job d/s_rep.zt 2>/dev/null &
    jobs_+=($!)
    half_component 2>/dev/null &
    jobs_+=($!)
    sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
    [ "$(staging_count "$R")" -gt 0 ] && HIT=$((HIT + 1))
    kill_daemon
    for j in "${jobs_[@]}"; do
        wait_exit "$j" 10
    done

    lab="round $round, after SIGKILL"
    old_or_new "$lab" p_new.zt - "$T/pa.zt"
    old_or_new "$lab" p_rep.zt "$T/old/p_rep.zt" "$T/pb.zt"
    old_or_new "$lab" d/s_new.zt - session
    old_or_new "$lab" d/s_rep.zt "$T/old/s_rep.zt" session
    check_same "$lab: keep.zt untouched" "$R/keep.zt" "$T/keep.zt"
    check "$lab: d/half.zt never published" [ ! -e "$R/d/half.zt" ]
    check_eq "$lab: no other name in the root" \
        "$(published_files "$R" | grep -Ev '^(keep|p_new|p_rep|d/s_new|d/s_rep)\.zt$')" ""

    start_daemon "$R" "${OPEN[@]}" || finish
    lab="round $round, after the restart"
    check_staging_empty "$lab: staging empty" "$R" 5
    for sid in $(cat "$T/sids" 2>/dev/null); do
        req "$lab: session ${sid:0:8} gone" 404 "$URL/v1/uploads/$sid"
    done
    for f in $(published_files "$R"); do
        req "$lab: $f served" 200 "$URL/v1/files/$f/raw"
        check_same "$lab: $f bytes" "$LAST.body" "$R/$f"
    done
    stop_daemon
done
note "SIGKILLs that landed with a staging file open: $HIT of 6; names that had their new version: $NEW"
check "at least one SIGKILL landed while an upload was staged" [ "$HIT" -ge 1 ]
finish
