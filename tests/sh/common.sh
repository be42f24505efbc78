# common.sh: the shell library every end-to-end suite shares (integration,
# uploads, ops, hostile, remote, upstream). A suite's own lib.sh sets HELP (its
# Python helper, if any), sources this file with the arguments ZTENSORD ZT,
# then the other parts of tests/sh/ it needs (uploads.sh, origins.sh), and
# adds only what is particular to it. No suite sources another suite's lib.sh.
#
# Every script makes its own work directory under $ZT_IT_TMP (or the current
# directory), builds its files with `zt pack`, starts its own daemon(s) on an
# ephemeral loopback port, talks to them with curl, and ends with `finish`,
# which prints "N passed, M failed" and exits non-zero when M > 0. A daemon
# that exits non-zero after SIGTERM, or writes a sanitizer report to its
# stderr, is a failed check. A check that cannot run here prints a "SKIP" line
# and counts neither as passed nor as failed. All waits are bounded in count
# and time; all traffic goes to loopback addresses.

set -u
set -o pipefail

ZTENSORD=${1:?usage: $0 ZTENSORD ZT}
ZT=${2:?usage: $0 ZTENSORD ZT}
case $ZTENSORD in /*) ;; *) ZTENSORD=$PWD/$ZTENSORD ;; esac
case $ZT in /*) ;; *) ZT=$PWD/$ZT ;; esac
PY=/usr/bin/python3
SH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HELP="$PY $SH_DIR/zthelp.py"
REPO=$(cd "$SH_DIR/../.." && pwd)
TNAME=$(basename "$0" .sh)
T=$(mktemp -d "${ZT_IT_TMP:-$PWD}/$TNAME.XXXXXX") || exit 1
export LC_ALL=C.UTF-8
# Sanitizer reports must reach the daemon's stderr; leaks count as failures.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

D_PID=
D_ERR=
D_LOG=
D_N=0
PORT=
URL=
SCHEME=http
SAN_RE='ERROR: AddressSanitizer|runtime error:|LeakSanitizer|ERROR: UndefinedBehaviorSanitizer'
EXIT_HOOKS=()
FIRST_HOOKS=()
CURL_TLS=()

. "$SH_DIR/checks.sh"
. "$SH_DIR/wait.sh"

# need_tool NAME [DEBIAN-PACKAGE]: a missing tool is a failure, and the script stops.
need_tool() {
    if command -v "$1" >/dev/null 2>&1; then return 0; fi
    bad "tool $1 is installed" "missing: apt-get install ${2:-$1} (listed in .ci/deps)"
    finish
}

# ---- HTTP

# http PREFIX CURL-ARGS...: one request. Writes PREFIX.body and PREFIX.hdr and sets CODE
# (HTTP status, 000 if none) and CURL_RC. --path-as-is so '..' is sent as is.
http() {
    local p=$1
    shift
    rm -f -- "$p.body" "$p.hdr"
    CODE=$(curl -sS --path-as-is --max-time 60 -o "$p.body" -D "$p.hdr" -w '%{http_code}' "$@" 2>"$p.curlerr")
    CURL_RC=$?
    [ -n "$CODE" ] || CODE=000
    touch -- "$p.body" "$p.hdr" # curl creates no file for an empty body
}
# hdr HDRFILE NAME: value of the last header NAME of the final response, CR stripped;
# empty if absent.
hdr() {
    tr -d '\r' <"$1" | awk -v n="$(printf '%s' "$2" | tr 'A-Z' 'a-z')" '
        /^HTTP\// { out = ""; found = 0 }
        { i = index($0, ":"); if (i > 0 && tolower(substr($0, 1, i - 1)) == n) {
              v = substr($0, i + 1); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v); out = v; found = 1 } }
        END { if (found) print out }'
}
has_hdr() { tr -d '\r' <"$1" | grep -qi "^$2:"; }
# check_code NAME WANT: the last http() status.
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

# check_err NAME WANT_CODE ERRCODE CURL-ARGS...: an error status with a JSON error body
# (Content-Type application/json). Sets ERRMSG to the error message.
check_err() {
    local name=$1 want=$2 code=$3
    shift 3
    req "$name: status $want" "$want" "$@"
    check_errbody "$name" "$code"
    check_eq "$name: Content-Type" "$(hdr "$LAST.hdr" Content-Type)" application/json
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

# held_get NAME PORT TARGET [BYTES]: a GET of TARGET whose reader stops after the header
# block (and BYTES bytes of the body) (zthelp heldget) until held_release NAME: a response
# the server is certainly still sending, however long the steps in between take. Waits
# (up to 30 s) for the status line, which it returns in HELD_STATUS; sets HELD_PID. The
# body goes to $T/NAME.
held_get() {
    local name=$1 i
    rm -f "$T/$name.gate" "$T/$name.gate.started"
    $HELP heldget "$2" "$3" "$T/$name" "$T/$name.gate" ${4:+"$4"} >"$T/$name.code" &
    HELD_PID=$!
    HELD_STATUS=
    for i in $(seq 1 300); do
        [ -s "$T/$name.gate.started" ] && break
        kill -0 "$HELD_PID" 2>/dev/null || break
        sleep 0.1
    done
    HELD_STATUS=$(cat "$T/$name.gate.started" 2>/dev/null)
}
# held_release NAME PID: let the held reader read the rest, and wait for it; sets
# HELD_RESULT to "STATUS SIZE" (the status the reader saw, the body's size).
held_release() {
    touch "$T/$1.gate"
    wait "$2"
    HELD_RESULT="$(cat "$T/$1.code") $(stat -c %s "$T/$1" 2>/dev/null || echo 0)"
}

# ---- files

sha256_hex() { openssl dgst -sha256 -r "$1" | cut -d' ' -f1; }
sha256_b64() { openssl dgst -sha256 -binary "$1" | base64 -w0; }
# slice FILE START LEN: bytes [START, START+LEN) to stdout
slice() { tail -c +"$(($2 + 1))" "$1" | head -c "$3"; }
# rand FILE SIZE / text FILE SIZE (compressible)
rand() { head -c "$2" /dev/urandom >"$1"; }
# flip_byte FILE OFFSET: the byte at OFFSET inverted in place (a constant written over random
# data leaves it unchanged once in 256 runs)
flip_byte() {
    local b
    b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "\\$(printf '%03o' $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
text() { head -c $((($2 * 3 + 3) / 4)) /dev/urandom | base64 -w0 | head -c "$2" >"$1"; }
free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

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

# sent_bytes URL: body bytes the daemon at URL has sent on its file routes (not /metrics and
# the health endpoints), once it is quiet: a response is counted when it completes, so
# wait (up to 60 s) until the /metrics request is the only one in flight and the count
# holds still.
sent_bytes() {
    local i m n prev=-1
    for i in $(seq 1 200); do
        m=$(curl -s --max-time 10 "$1/metrics")
        n=$(awk '/^ztensord_response_bytes_total/ && !/route="(metrics|healthz|readyz|none)"/ \
            {s += $2} END {printf "%.0f", s}' <<<"$m")
        if grep -qx 'ztensord_requests_in_flight 1' <<<"$m" && [ "$n" = "$prev" ]; then break; fi
        prev=$n
        sleep 0.3
    done
    echo "$n"
}

# ---- the daemon

# start_daemon ROOT [FLAGS...]: starts ztensord --root ROOT (see launch_daemon).
start_daemon() {
    local root=$1
    shift
    launch_daemon --root "$root" "$@"
}

# launch_daemon [FLAGS...]: starts ztensord with FLAGS on an ephemeral loopback port
# (unless the flags say otherwise; without an --access-log flag the access log is off),
# waits for its "listening on" line and, unless NO_READY=1, /readyz. Sets D_PID, D_ERR,
# PORT, SCHEME and URL. The line is read from the daemon's stderr, or from the file named
# by D_LOG when it is set (for --error-log FILE). CURL_TLS (array) is passed to curl for
# the readiness probe.
launch_daemon() {
    if [ -n "$D_PID" ]; then stop_daemon; fi
    D_N=$((D_N + 1))
    D_ERR=$T/daemon$D_N.err
    local a i extra=(--access-log off)
    for a in "$@"; do case $a in --access-log*) extra=() ;; esac; done
    "$ZTENSORD" --listen 127.0.0.1:0 "${extra[@]}" "$@" 2>"$D_ERR" &
    D_PID=$!
    PORT=
    if ! wait_listening "${D_LOG:-$D_ERR}" "$D_PID"; then
        bad "daemon $D_N starts" "no 'listening on' line; stderr: $(head -c 600 "$D_ERR")"
        kill -KILL "$D_PID" 2>/dev/null
        wait "$D_PID" 2>/dev/null
        D_PID=
        return 1
    fi
    PORT=$LISTEN_PORT
    SCHEME=$LISTEN_SCHEME
    URL=$SCHEME://127.0.0.1:$PORT
    [ "${NO_READY:-0}" = 1 ] && return 0 # readiness is what the caller checks
    for i in $(seq 1 100); do
        if [ "$(curl -s --max-time 2 "${CURL_TLS[@]}" -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ]; then
            [ "${WAIT_VERIFIED:-0}" = 1 ] && wait_verified
            return 0
        fi
        sleep 0.1
    done
    bad "daemon $D_N ready" "/readyz never answered 200"
    return 1
}

# wait_verified [SECONDS]: poll /metrics (default up to 30 s) until the background
# verifier has hashed every sha256 component: only then are ETag "sha256:...",
# Repr-Digest and immutable blob URLs sent. Returns non-zero on the time limit.
# start_daemon calls it when WAIT_VERIFIED=1.
wait_verified() {
    local i lim=${1:-30}
    for i in $(seq 1 $((lim * 10))); do
        curl -s --max-time 5 "${CURL_TLS[@]}" "$URL/metrics" | grep -qx 'ztensord_digest_components{state="pending"} 0' && return 0
        sleep 0.1
    done
    bad "digests verified within ${lim} s" "$(curl -s --max-time 5 "${CURL_TLS[@]}" "$URL/metrics" | grep '^ztensord_digest_components')"
    return 1
}

# daemon_alive NAME: the daemon process still runs.
daemon_alive() {
    if [ -n "$D_PID" ] && kill -0 "$D_PID" 2>/dev/null; then ok "$1"; else bad "$1" "daemon is gone"; fi
}
# check_sanitizers NAME FILE: FILE has no sanitizer report.
check_sanitizers() {
    if grep -Eq "$SAN_RE" "$2" 2>/dev/null; then
        bad "$1" "sanitizer report in $2:"
        grep -E -A12 "$SAN_RE" "$2" | head -40 | sed 's/^/#   /'
    else
        ok "$1"
    fi
}
# wait_exit PID SECONDS: wait for a child to exit; sets EXIT_RC. Still running after
# SECONDS: it is killed (SIGKILL) and reaped, EXIT_RC is "timeout" and it returns 1.
wait_exit() {
    local pid=$1 lim=$2 i
    for i in $(seq 1 $((lim * 20))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
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

# ---- background commands and the end

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
# at_exit_first CMD: run at exit before the background jobs left are SIGKILLed:
# for a graceful stop (a SIGKILLed nginx master leaves its workers running).
at_exit_first() { FIRST_HOOKS+=("$*"); }
run_first_hooks() {
    local h
    for h in "${FIRST_HOOKS[@]+"${FIRST_HOOKS[@]}"}"; do eval "$h"; done
    FIRST_HOOKS=()
}
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
    run_first_hooks
    local j
    for j in $(jobs -p); do kill -KILL "$j" 2>/dev/null; done
    wait 2>/dev/null
    run_exit_hooks
}
trap cleanup EXIT
trap 'bad "interrupted"; exit 1' INT TERM

finish() {
    stop_daemon
    run_first_hooks
    local j
    for j in $(jobs -p); do kill -KILL "$j" 2>/dev/null; done
    wait 2>/dev/null
    run_exit_hooks
    if [ "$FAIL" -eq 0 ] && [ -z "${ZT_IT_KEEP:-}" ]; then
        rm -rf -- "$T"
    else
        find "$T" -type f -size +4M -delete 2>/dev/null # keep logs and small files only
        note "work directory kept (files over 4 MiB removed): $T"
    fi
    [ "$SKIP" -eq 0 ] || note "$SKIP checks skipped"
    echo "$PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ]
    exit
}
