#!/bin/bash
# ztensord SIGKILLed in the middle of uploads, then restarted on the same root, at 10
# random points for whole-file PUTs and 10 for sessions (new names and replacements).
# After every kill: every *.zt under the root (outside staging) is a complete, valid
# file (zt verify) and is either the version published before or the complete new one;
# no other file appeared. After every restart: the staging directory is empty, the
# session that was open is gone (404), and every file published before is intact and
# served byte-exact.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
G=$T/golden # what each published name must hold
mkdir -p "$R/sub" "$G/sub"
rand "$T/p1.raw" 3000
pack "$G/p1.zt" w=u8:3000:"$T/p1.raw"
rand "$T/p2.raw" $((1 << 20))
pack "$G/sub/p2.zt" --compress w=u8:$((1 << 20)):"$T/p2.raw"
rand "$T/t.raw" $((2 << 20))
pack "$G/target.zt" w=u8:$((2 << 20)):"$T/t.raw"
cp -a "$G/." "$R/"
rand "$T/put.raw" $((4 << 20))
pack "$T/put.zt" w=u8:$((4 << 20)):"$T/put.raw"
rand "$T/sa.raw" $((1 << 20))
text "$T/sb.raw" $((1 << 20))
COMMIT='{"objects":{"a":{"shape":[1048576],"components":{"data":{"key":"a","dtype":"u8"}}},"b":{"shape":[1048576],"components":{"data":{"key":"b","dtype":"u8"}}}}}'

# is_session_file FILE: FILE is a complete commit of the session below.
is_session_file() {
    zverify "$1" || return 1
    zget "$1" a >"$T/chk.a" 2>/dev/null && cmp -s "$T/chk.a" "$T/sa.raw" || return 1
    zget "$1" b >"$T/chk.b" 2>/dev/null && cmp -s "$T/chk.b" "$T/sb.raw"
}

session_job() {
    curl -s --max-time 20 -X POST --data-binary "{\"file\":\"$1\"}" -o "$T/sj.open" "$URL/v1/uploads" || return
    local sid
    sid=$(jget "$T/sj.open" id) || return
    echo "$sid" >"$T/sj.id"
    curl -s --max-time 20 --limit-rate 4M -o /dev/null -T "$T/sa.raw" "$URL/v1/uploads/$sid/components/a" || return
    curl -s --max-time 20 --limit-rate 4M -o /dev/null -T "$T/sb.raw" "$URL/v1/uploads/$sid/components/b?encoding=zstd" || return
    curl -s --max-time 20 -o /dev/null -X POST --data-binary "$COMMIT" "$URL/v1/uploads/$sid/commit"
}

HITS_PUT=0
HITS_SESSION=0
start_daemon "$R" "${OPEN[@]}" || finish
for i in $(seq 1 20); do
    if [ $((i % 2)) = 1 ]; then mode=put; else mode=session; fi
    # Every other round of each mode replaces target.zt; the others create a new name.
    if [ $(((i + 1) / 2 % 2)) = 1 ]; then name=target.zt; else name=$mode$i.zt; fi
    delay=$((RANDOM % 800))
    note "round $i: $mode $name, SIGKILL after ${delay} ms"
    rm -f "$T/sj.id" "$T/sj.open"
    if [ $mode = put ]; then
        curl -s --max-time 20 --limit-rate 8M -o /dev/null -T "$T/put.zt" "$URL/v1/files/$name" 2>/dev/null &
    else
        session_job "$name" 2>/dev/null &
    fi
    JOB=$!
    # Half of the rounds of each mode wait (bounded) for the upload to reach staging
    # before the random delay, so that a loaded machine, where curl may start late, or an
    # unlucky draw of delays still kills uploads in progress (at least 3 of 10 are
    # wanted below); the other rounds kill at any point, also before staging.
    if [ $((i % 4)) -le 2 ] && [ $((i % 4)) -ge 1 ]; then
        for _ in $(seq 1 100); do
            [ "$(staging_count "$R")" -gt 0 ] && break
            sleep 0.05
        done
        delay=$((delay / 4))
    fi
    sleep "$(printf '0.%03d' "$delay")"
    n_staging=$(staging_count "$R")
    kill_daemon
    # With the daemon gone the client's curls fail at once; the job ends by itself.
    wait_exit "$JOB" 10
    if [ "$n_staging" -gt 0 ]; then
        if [ $mode = put ]; then HITS_PUT=$((HITS_PUT + 1)); else HITS_SESSION=$((HITS_SESSION + 1)); fi
    fi

    # ---- the root as the crash left it
    want=$( (cd "$G" && find . -type f | sed 's|^\./||'; echo "$name") | sort -u | tr '\n' ' ')
    got=$(published_files "$R" | tr '\n' ' ')
    extra=$(comm -13 <(echo "$want" | tr ' ' '\n' | sed '/^$/d' | sort) <(echo "$got" | tr ' ' '\n' | sed '/^$/d' | sort) | tr '\n' ' ')
    check_eq "round $i: no unexpected file in the root" "$extra" ""
    allvalid=yes
    while IFS= read -r f; do
        zverify "$R/$f" || allvalid="no: $f"
    done < <(cd "$R" && find . -path "./$STAGING" -prune -o -name '*.zt' -print | sed 's|^\./||')
    check_eq "round $i: every *.zt in the root verifies" "$allvalid" yes
    # Each file published before is intact, except the one being replaced, which may
    # instead be the complete new version.
    while IFS= read -r f; do
        if cmp -s "$R/$f" "$G/$f"; then
            ok "round $i: $f intact"
        elif [ "$f" = "$name" ] && [ $mode = put ] && cmp -s "$R/$f" "$T/put.zt"; then
            ok "round $i: $f is the complete new version"
            cp "$T/put.zt" "$G/$f"
        elif [ "$f" = "$name" ] && [ $mode = session ] && is_session_file "$R/$f"; then
            ok "round $i: $f is the complete committed session"
            cp "$R/$f" "$G/$f"
        else
            bad "round $i: $f intact" "neither the old nor a complete new version"
            cp "$R/$f" "$G/$f" 2>/dev/null # judge the next rounds against what is there
        fi
    done < <(cd "$G" && find . -type f | sed 's|^\./||' | sort)
    # The new name, if it appeared, holds the complete upload.
    if [ ! -e "$G/$name" ] && [ -e "$R/$name" ]; then
        if { [ $mode = put ] && cmp -s "$R/$name" "$T/put.zt"; } ||
            { [ $mode = session ] && is_session_file "$R/$name"; }; then
            ok "round $i: new $name is complete"
        else
            bad "round $i: new $name is complete" "a partial or wrong file was published"
        fi
        cp "$R/$name" "$G/$name"
    fi

    # ---- restart
    start_daemon "$R" "${OPEN[@]}" || finish
    check_eq "round $i: staging empty after the restart" "$(staging_count "$R")" 0
    if [ -s "$T/sj.id" ]; then
        req "round $i: the session did not survive the restart" 404 "$URL/v1/uploads/$(cat "$T/sj.id")"
    fi
    curl -s --max-time 10 -o "$T/list.json" "$URL/v1/files"
    listed=$($HELP filenames "$T/list.json" | sort | tr '\n' ' ')
    check_eq "round $i: the listing has exactly the published files" "$listed" "$(cd "$G" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')"
    badserve=
    while IFS= read -r f; do
        http "$T/g" "$URL/v1/files/$f/raw"
        { [ "$CODE" = 200 ] && cmp -s "$T/g.body" "$G/$f"; } || badserve="$badserve $f($CODE)"
    done < <(cd "$G" && find . -type f | sed 's|^\./||' | sort)
    check_eq "round $i: every published file is served byte-exact" "$badserve" ""
done
# The random delays must have caught uploads in progress, or nothing was tested.
check "kills during a whole-file PUT in progress: $HITS_PUT of 10 (want >= 3)" [ "$HITS_PUT" -ge 3 ]
check "kills during a session in progress: $HITS_SESSION of 10 (want >= 3)" [ "$HITS_SESSION" -ge 3 ]

# After all that, uploads still work on the same root.
put final.zt "$T/put.zt"
check_code "after the crashes: a PUT: 201" 201
session_open final2.zt
comp_put "$SID" a "$T/sa.raw"
comp_put "$SID" "b?encoding=zstd" "$T/sb.raw"
commit "$SID" "$COMMIT"
check_code "after the crashes: a session commit: 201" 201
check "after the crashes: the session file is complete" is_session_file "$R/final2.zt"
check_staging_empty "after the crashes: staging empty" "$R"
finish
