# lib.sh: shared code of the ztensord upload test scripts. Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT (paths of the two binaries).
#
# Every script makes its own work directory under $ZT_IT_TMP (or the current directory),
# builds its .zt files with `zt pack`, starts its own daemon(s) on an ephemeral loopback
# port, talks to it with curl, and ends with `finish`, which prints "N passed, M failed"
# and exits non-zero when M > 0. A daemon that exits non-zero after SIGTERM, or writes a
# sanitizer report to its stderr, is a failed check. A check that cannot run here prints
# a "SKIP" line and counts neither as passed nor as failed. All waits are bounded; all
# traffic goes to 127.0.0.1. (Conventions follow tests/integration/lib.sh.)

set -u
set -o pipefail

ZTENSORD=${1:?usage: $0 ZTENSORD ZT}
ZT=${2:?usage: $0 ZTENSORD ZT}
case $ZTENSORD in /*) ;; *) ZTENSORD=$PWD/$ZTENSORD ;; esac
case $ZT in /*) ;; *) ZT=$PWD/$ZT ;; esac
PY=/usr/bin/python3
UP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HELP="$PY $UP_DIR/uphelp.py"
TNAME=$(basename "$0" .sh)
T=$(mktemp -d "${ZT_IT_TMP:-$PWD}/$TNAME.XXXXXX") || exit 1
export LC_ALL=C.UTF-8
# Sanitizer reports must reach the daemon's stderr; leaks count as failures.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

STAGING=.ztensord-staging
PASS=0
FAIL=0
SKIP=0
D_PID=
D_ERR=
D_LOG=
D_N=0
PORT=
URL=
SAN_RE='ERROR: AddressSanitizer|runtime error:|LeakSanitizer|ERROR: UndefinedBehaviorSanitizer'
EXIT_HOOKS=()
# Flags that make a daemon writable without tokens and independent of the host's free disk.
OPEN=(--allow-anonymous-writes --disk-reserve 0)

note() { printf '# %s\n' "$*"; }
ok() {
    PASS=$((PASS + 1))
    printf 'ok   %s\n' "$1"
}
bad() {
    FAIL=$((FAIL + 1))
    printf 'FAIL %s%s\n' "$1" "${2:+: $2}"
}
skip() {
    SKIP=$((SKIP + 1))
    printf 'SKIP %s%s\n' "$1" "${2:+: $2}"
}

check() {
    local name=$1
    shift
    if "$@"; then ok "$name"; else bad "$name" "command failed: $*"; fi
}
check_eq() {
    if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$2', want '$3'"; fi
}
check_ne() {
    if [ "$2" != "$3" ]; then ok "$1"; else bad "$1" "got '$2', want something else"; fi
}
check_match() {
    if printf '%s' "$2" | grep -Eq -- "$3"; then ok "$1"; else bad "$1" "'$2' !~ /$3/"; fi
}
check_nomatch() {
    if printf '%s' "$2" | grep -Eq -- "$3"; then bad "$1" "'$2' =~ /$3/"; else ok "$1"; fi
}
check_same() {
    if cmp -s -- "$2" "$3"; then
        ok "$1"
    else
        bad "$1" "$(cmp -- "$2" "$3" 2>&1 | head -1) (sizes $(stat -c %s "$2" 2>/dev/null || echo -) vs $(stat -c %s "$3" 2>/dev/null || echo -))"
    fi
}

# ---- HTTP

# http PREFIX CURL-ARGS...: one request into PREFIX.body / PREFIX.hdr; sets CODE and CURL_RC.
http() {
    local p=$1
    shift
    rm -f -- "$p.body" "$p.hdr"
    CODE=$(curl -sS --path-as-is --max-time 60 -o "$p.body" -D "$p.hdr" -w '%{http_code}' "$@" 2>"$p.curlerr")
    CURL_RC=$?
    [ -n "$CODE" ] || CODE=000
    touch -- "$p.body" "$p.hdr"
}
# hdr HDRFILE NAME: value of the last header NAME (the final response's), CR stripped.
hdr() {
    tr -d '\r' <"$1" | awk -v n="$(printf '%s' "$2" | tr 'A-Z' 'a-z')" '
        /^HTTP\// { out = ""; found = 0 }
        { i = index($0, ":"); if (i > 0 && tolower(substr($0, 1, i - 1)) == n) {
              v = substr($0, i + 1); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v); out = v; found = 1 } }
        END { if (found) print out }'
}
check_code() {
    if [ "$CODE" = "$2" ]; then ok "$1"; else bad "$1" "HTTP $CODE, want $2 (curl rc $CURL_RC $(head -c 300 "$LAST.body" 2>/dev/null | tr -d "\n\0"))"; fi
}
# req NAME WANT_CODE CURL-ARGS...: request into $T/r and check the status.
LAST=$T/r
req() {
    local name=$1 want=$2
    shift 2
    LAST=$T/r
    http "$LAST" "$@"
    check_code "$name" "$want"
}
# check_err NAME WANT_CODE ERRCODE CURL-ARGS...: an error status with a JSON error body.
# Sets ERRMSG to the error message.
check_err() {
    local name=$1 want=$2 code=$3
    shift 3
    req "$name: status $want" "$want" "$@"
    check_errbody "$name" "$code"
}
# check_errbody NAME ERRCODE: the last response is a JSON error with ERRCODE.
check_errbody() {
    if ERRMSG=$($HELP errbody "$LAST.body" "$2" 2>&1); then
        ok "$1: JSON error $2"
    else
        bad "$1: JSON error $2" "$ERRMSG"
        ERRMSG=
    fi
}
# jget FILE KEY...: a value from a JSON file (MISSING if absent).
jget() { $HELP get "$@" 2>/dev/null; }

sha256_hex() { openssl dgst -sha256 -r "$1" | cut -d' ' -f1; }
sha256_b64() { openssl dgst -sha256 -binary "$1" | base64 -w0; }
rand() { head -c "$2" /dev/urandom >"$1"; }
# text FILE SIZE: compressible bytes
text() { head -c $((($2 * 3 + 3) / 4)) /dev/urandom | base64 -w0 | head -c "$2" >"$1"; }

# ---- root and staging

# staging_files ROOT: the staging files under ROOT's staging directory, relative to it
# (each instance stages in its own directory run-PID-RANDOM; those directories are not
# listed, nor counted below).
staging_files() {
    if [ -d "$1/$STAGING" ]; then (cd "$1/$STAGING" && find . -mindepth 1 ! -type d | sed 's|^\./||'); fi
}
# staging_count ROOT: how many staging files ROOT holds (0 if there is no staging directory).
staging_count() { staging_files "$1" | wc -l; }
# wait_staging_empty ROOT [SECONDS]: poll (default 2 s) until staging is empty.
wait_staging_empty() {
    local i lim=${2:-2}
    for i in $(seq 1 $((lim * 20))); do
        [ "$(staging_count "$1")" = 0 ] && return 0
        sleep 0.05
    done
    [ "$(staging_count "$1")" = 0 ]
}
check_staging_empty() {
    if wait_staging_empty "$2" "${3:-2}"; then
        ok "$1"
    else
        bad "$1" "staging still holds: $(staging_files "$2" | head -5 | tr '\n' ' ')"
    fi
}
# published_files ROOT: every regular file or symlink under ROOT outside staging, sorted.
published_files() {
    (cd "$1" && find . -path "./$STAGING" -prune -o \( -type f -o -type l \) -print | sed 's|^\./||' | sort)
}

# ---- the daemon

# start_daemon ROOT [EXTRA FLAGS...]: starts ztensord, waits for its port and /readyz.
# Sets D_PID, D_ERR, PORT, URL. The port is read from the daemon's stderr, or from the
# file named by D_LOG when it is set (for --error-log FILE).
start_daemon() {
    local root=$1
    shift
    if [ -n "$D_PID" ]; then stop_daemon; fi
    D_N=$((D_N + 1))
    D_ERR=$T/daemon$D_N.err
    local a extra=(--access-log off)
    for a in "$@"; do case $a in --access-log*) extra=() ;; esac; done
    "$ZTENSORD" --root "$root" --listen 127.0.0.1:0 "${extra[@]}" "$@" 2>"$D_ERR" &
    D_PID=$!
    local src=${D_LOG:-$D_ERR}
    PORT=
    local i
    for i in $(seq 1 300); do # up to 30 s (ASan start-up is slow)
        PORT=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$src" 2>/dev/null | tail -1)
        [ -n "$PORT" ] && break
        kill -0 "$D_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$PORT" ]; then
        bad "daemon $D_N starts" "no 'listening on' line; stderr: $(head -c 600 "$D_ERR")"
        kill -KILL "$D_PID" 2>/dev/null
        wait "$D_PID" 2>/dev/null
        D_PID=
        return 1
    fi
    URL=http://127.0.0.1:$PORT
    for i in $(seq 1 100); do
        [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ] && return 0
        sleep 0.1
    done
    bad "daemon $D_N ready" "/readyz never answered 200"
    return 1
}

daemon_alive() {
    if [ -n "$D_PID" ] && kill -0 "$D_PID" 2>/dev/null; then ok "$1"; else bad "$1" "daemon is gone"; fi
}

check_sanitizers() {
    if grep -Eq "$SAN_RE" "$2" 2>/dev/null; then
        bad "$1" "sanitizer report in $2:"
        grep -E -A12 "$SAN_RE" "$2" | head -40 | sed 's/^/#   /'
    else
        ok "$1"
    fi
}

wait_exit() {
    local pid=$1 lim=$2 i
    for i in $(seq 1 $((lim * 20))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
        EXIT_RC=timeout
        return 1
    fi
    wait "$pid" 2>/dev/null
    EXIT_RC=$?
    return 0
}

# stop_daemon [SECONDS]: SIGTERM, wait, check exit status 0 and no sanitizer report.
stop_daemon() {
    local lim=${1:-20}
    [ -n "$D_PID" ] || return 0
    local pid=$D_PID
    D_PID=
    kill -TERM "$pid" 2>/dev/null
    if ! wait_exit "$pid" "$lim"; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        bad "daemon $D_N exits after SIGTERM" "still running after ${lim}s"
    else
        check_eq "daemon $D_N exit status" "$EXIT_RC" 0
    fi
    check_sanitizers "daemon $D_N: no sanitizer report" "$D_ERR"
}

# kill_daemon: SIGKILL (a crash), then check that nothing was reported before it.
kill_daemon() {
    [ -n "$D_PID" ] || return 0
    local pid=$D_PID
    D_PID=
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if grep -Eq "$SAN_RE" "$D_ERR" 2>/dev/null; then
        bad "daemon $D_N: no sanitizer report before SIGKILL" "see $D_ERR"
        grep -E -A12 "$SAN_RE" "$D_ERR" | head -40 | sed 's/^/#   /'
    fi
}

# bg_start CMD...: run CMD in the background inside a wrapper whose stderr is
# /dev/null, so that killing CMD (bg_kill) leaves no "Killed" job notice in the output.
# Standard input is passed on (the explicit <&0: without it bash gives background
# commands /dev/null). Sets BG_PID (CMD's pid) and BG_JOB (the wrapper's).
bg_start() {
    rm -f "$T/bg.pid"
    { "$@" <&0 & echo $! >"$T/bg.pid"; wait; } <&0 2>/dev/null &
    BG_JOB=$!
    local i
    for i in $(seq 1 200); do
        [ -s "$T/bg.pid" ] && break
        sleep 0.01
    done
    BG_PID=$(cat "$T/bg.pid" 2>/dev/null)
}
# bg_kill: SIGKILL the command started by bg_start and reap its wrapper.
bg_kill() {
    [ -n "$BG_PID" ] && kill -KILL "$BG_PID" 2>/dev/null
    wait "$BG_JOB" 2>/dev/null
    BG_PID=
}

# at_exit CMD...: run CMD when the script ends (before the work directory is removed).
at_exit() { EXIT_HOOKS+=("$*"); }
run_exit_hooks() {
    local h
    for h in "${EXIT_HOOKS[@]+"${EXIT_HOOKS[@]}"}"; do eval "$h"; done
    EXIT_HOOKS=()
}

cleanup() {
    if [ -n "$D_PID" ]; then
        kill -KILL "$D_PID" 2>/dev/null
        wait "$D_PID" 2>/dev/null
    fi
    local j
    for j in $(jobs -p); do kill -KILL "$j" 2>/dev/null; done
    wait 2>/dev/null
    run_exit_hooks
}
trap cleanup EXIT
trap 'bad "interrupted"; exit 1' INT TERM

finish() {
    stop_daemon
    local j
    for j in $(jobs -p); do kill -KILL "$j" 2>/dev/null; done
    wait 2>/dev/null
    run_exit_hooks
    if [ "$FAIL" -eq 0 ] && [ -z "${ZT_IT_KEEP:-}" ]; then
        rm -rf -- "$T"
    else
        note "work directory kept: $T"
    fi
    [ "$SKIP" -eq 0 ] || note "$SKIP checks skipped"
    echo "$PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ]
    exit
}

# ---- files and uploads

# pack OUT [zt pack options...] NAME=DTYPE:SHAPE:RAW...
pack() {
    local out=$1
    shift
    if ! "$ZT" pack -o "$out" "$@" >"$T/pack.out" 2>&1; then
        bad "zt pack $(basename "$out")" "$(cat "$T/pack.out")"
        return 1
    fi
}
zget() { "$ZT" get "$@"; }
# zverify FILE: zt verify, quiet.
zverify() { "$ZT" verify "$1" >/dev/null 2>&1; }

# put NAME FILE [CURL-ARGS...]: PUT FILE as /v1/files/NAME into $T/r.
put() {
    local name=$1 file=$2
    shift 2
    LAST=$T/r
    http "$LAST" -T "$file" "$@" "$URL/v1/files/$name"
}
# session_open FILE [ATTRS-JSON]: POST /v1/uploads; sets SID (empty on failure).
session_open() {
    LAST=$T/r
    local body
    body=$(printf '{"file":"%s"%s}' "$1" "${2:+,\"attributes\":$2}")
    http "$LAST" -X POST -H 'Content-Type: application/json' --data-binary "$body" "$URL/v1/uploads"
    SID=
    [ "$CODE" = 201 ] && SID=$(jget "$LAST.body" id)
    [ "$SID" = MISSING ] && SID=
    return 0
}
# comp_put SID KEY FILE [CURL-ARGS...]: PUT a component (add ?encoding=zstd via KEY).
comp_put() {
    local sid=$1 key=$2 file=$3
    shift 3
    LAST=$T/r
    http "$LAST" -T "$file" "$@" "$URL/v1/uploads/$sid/components/$key"
}
# commit SID JSON: POST the commit body.
commit() {
    LAST=$T/r
    http "$LAST" -X POST -H 'Content-Type: application/json' --data-binary "$2" "$URL/v1/uploads/$1/commit"
}
# listing_field NAME FIELD: a field of NAME's entry in a fresh /v1/files (MISSING if absent).
listing_field() {
    curl -s --max-time 10 -o "$T/list.json" "$URL/v1/files"
    $HELP listing "$T/list.json" "$1" "$2" 2>/dev/null
}
