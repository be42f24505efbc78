#!/usr/bin/env bash
# Catalog errors that must not stick (issue 10, point 10). A careless operator runs
# `chmod 000` on a served file: the next scan (inotify sees the attribute change, or
# SIGHUP) stops serving it with 503 file_unavailable, and `chmod 644` brings it back.
# The daemon runs under a small `ulimit -n` with more files than descriptors: it warns
# at start-up, keeps at most half the limit of files open (max_open_files) and serves
# every file in turns, none failing with EMFILE. A directory that cannot be opened for
# want of descriptors keeps the files it had.
# As root, the daemon runs without CAP_DAC_OVERRIDE (setpriv) so that mode 000 bites.
. "$(dirname "$0")/lib.sh" "$@"

REAL=$ZTENSORD
# wrapper NAME SHELL-LINE [EXEC-PREFIX]: a script that runs SHELL-LINE, then execs the
# real daemon (through EXEC-PREFIX); prints its path. The daemon keeps the script's pid.
wrapper() {
    printf '#!/bin/bash\n%s\nexec %s "%s" "$@"\n' "$2" "${3:-}" "$REAL" >"$T/$1"
    chmod +x "$T/$1"
    printf '%s' "$T/$1"
}
# comp_code NAME: status of NAME's component w/data.
comp_code() { curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$URL/v1/files/$1/objects/w/data"; }
# wait_code SECONDS NAME WANT: poll until NAME's component answers WANT.
wait_code() {
    local i
    for i in $(seq 1 $(($1 * 10))); do
        [ "$(comp_code "$2")" = "$3" ] && return 0
        sleep 0.1
    done
    return 1
}

R=$T/root
mkdir -p "$R"
rand "$T/a.raw" 4000
rand "$T/b.raw" 3000
pack "$R/a.zt" w=u8:4000:"$T/a.raw"
pack "$R/b.zt" w=u8:3000:"$T/b.raw"

# ---- chmod 000, chmod 644
DROP="setpriv --inh-caps=-dac_override,-dac_read_search --bounding-set=-dac_override,-dac_read_search"
PREFIX=
if [ "$(id -u)" = 0 ]; then
    printf x >"$T/probe" && chmod 000 "$T/probe"
    if $DROP true 2>/dev/null && ! $DROP cat "$T/probe" >/dev/null 2>&1; then
        PREFIX=$DROP
    else
        PREFIX=unusable
    fi
fi
chmod_case() { # LABEL [FLAGS...]: chmod 000 then 644 on a.zt; RESCAN=hup|watch
    local label=$1
    shift
    ZTENSORD=$(wrapper nodac.sh : "$PREFIX")
    start_daemon "$R" "$@"
    ZTENSORD=$REAL
    [ -n "$D_PID" ] || return 0
    req "$label: a.zt served" 200 "$URL/v1/files/a.zt/objects/w/data"
    chmod 000 "$R/a.zt"
    [ "$RESCAN" = hup ] && kill -HUP "$D_PID"
    if wait_code 10 a.zt 503; then ok "$label: chmod 000 takes effect"; else bad "$label: chmod 000 takes effect" "HTTP $(comp_code a.zt)"; fi
    check_err "$label: chmod 000" 503 file_unavailable "$URL/v1/files/a.zt/objects/w/data"
    check_match "$label: the error says why" "$ERRMSG" 'Permission denied'
    check_eq "$label: listed as an error" "$(listing_field a.zt status)" error
    req "$label: b.zt still served" 200 "$URL/v1/files/b.zt/objects/w/data"
    chmod 644 "$R/a.zt"
    [ "$RESCAN" = hup ] && kill -HUP "$D_PID"
    if wait_code 10 a.zt 200; then ok "$label: chmod 644 takes effect"; else bad "$label: chmod 644 takes effect" "HTTP $(comp_code a.zt)"; fi
    req "$label: a.zt served again" 200 "$URL/v1/files/a.zt/objects/w/data"
    check_same "$label: a.zt bytes" "$LAST.body" "$T/a.raw"
    check_eq "$label: listed as ok" "$(listing_field a.zt status)" ok
    stop_daemon
}
if [ "$PREFIX" = unusable ]; then
    skip "chmod 000" "running as root and setpriv cannot drop CAP_DAC_OVERRIDE here"
else
    RESCAN=watch chmod_case "inotify"
    RESCAN=hup chmod_case "SIGHUP" --watch=false
fi

# ---- EMFILE under a small ulimit -n
LIMIT=48
N=80
E=$T/emfile
mkdir -p "$E"
ZTENSORD=$(wrapper ulimit.sh "ulimit -n $LIMIT || exit 97")
start_daemon "$E" --watch=false --log-level debug
ZTENSORD=$REAL
[ -n "$D_PID" ] || finish
if grep -q "RLIMIT_NOFILE is $LIMIT" "$D_ERR"; then ok "start-up warning about RLIMIT_NOFILE"; else bad "start-up warning about RLIMIT_NOFILE" "$(grep -i warn "$D_ERR" | head -3)"; fi
for i in $(seq 1 $N); do cp "$R/b.zt" "$E/f$i.zt"; done
kill -HUP "$D_PID"
line=
for i in $(seq 1 100); do
    line=$(grep -o "catalog: $N files ([0-9]* valid, [0-9]* invalid, [0-9]* views and indexes), generation 2" "$D_ERR")
    [ -n "$line" ] && break
    sleep 0.1
done
note "$line"
# The open-file budget (max_open_files, at most half the limit) keeps the files within
# the limit: every one is served, in turns, none fails with EMFILE.
check_match "the open-file budget is half the limit" "$(cat "$D_ERR")" "at most $((LIMIT / 2)) files are kept open"
check_eq "more files than descriptors: all $N valid (each with its view)" "$line" \
    "catalog: $N files ($N valid, 0 invalid, $N views and indexes), generation 2"
check_nomatch "none failed with EMFILE" "$(cat "$D_ERR")" 'is not served|cannot open .* again'
wrong=0
for i in $(seq 1 $N); do
    curl -s --max-time 5 -o "$T/f.body" "$URL/v1/files/f$i.zt/objects/w/data"
    cmp -s "$T/f.body" "$T/b.raw" || wrong=$((wrong + 1))
done
check_eq "every file served byte-exact" "$wrong" 0
stop_daemon

# ---- a directory that cannot be read for want of descriptors keeps its files
D=$T/dirs
mkdir -p "$D/sub"
cp "$R/b.zt" "$D/top.zt"
cp "$R/b.zt" "$D/sub/b.zt"
ZTENSORD=$(wrapper ulimit40.sh "ulimit -n 40 || exit 97")
start_daemon "$D" --watch=false "${OPEN[@]}" --max-uploads 200
ZTENSORD=$REAL
[ -n "$D_PID" ] || finish
req "sub/b.zt listed at start" 200 "$URL/v1/files/sub/b.zt"
# Each upload session holds a staging file: open them until no descriptor is left.
SIDS=()
full=0
for i in $(seq 1 60); do
    session_open "s$i.zt"
    if [ -n "$SID" ]; then
        SIDS+=("$SID")
        continue
    fi
    [ "$CODE" = 500 ] && grep -q 'Too many open files' "$LAST.body" && full=1
    break
done
check_eq "upload sessions took every descriptor (${#SIDS[@]} sessions)" "$full" 1
sleep 0.3
kill -HUP "$D_PID"
for i in $(seq 1 100); do
    grep -q 'generation 2' "$D_ERR" && break
    sleep 0.1
done
if grep -q 'cannot read directory .*sub: Too many open files' "$D_ERR"; then ok "the rescan could not read sub/"; else bad "the rescan could not read sub/" "$(grep 'catalog' "$D_ERR" | tail -2)"; fi
req "sub/b.zt still served after that rescan" 200 "$URL/v1/files/sub/b.zt"
for s in "${SIDS[@]}"; do curl -s --max-time 5 -o /dev/null -X DELETE "$URL/v1/uploads/$s"; done
req "sub/b.zt component once the sessions are gone" 200 "$URL/v1/files/sub/b.zt/objects/w/data"
check_same "sub/b.zt bytes" "$LAST.body" "$T/b.raw"
finish
